# End-to-end test server: serves every real `ellmer::tool()` fixture over
# stdio, with neither ellmer nor S7 installed.
#
# Usage: Rscript --vanilla ellmer-server.R <fixture dir> [seed]
# Tools are served in file-name order; the negative fixture is skipped. The
# optional seed is set before serving (for the `rnorm` example call).
args <- commandArgs(trailingOnly = TRUE)
dir <- args[[1]]
files <- sort(list.files(dir, pattern = "\\.rds$", full.names = TRUE))
files <- files[!startsWith(basename(files), "negative_")]
tools <- lapply(files, readRDS)
if (length(args) >= 2L) {
  set.seed(as.integer(args[[2]]))
}
mcplite::mcp_server(tools)
