# Server for the hostile suite's package-tools case (issue 28, RULES R8.8):
#   HOSTILE_CACHE=<dir> Rscript --vanilla packages.R
# Serves, with package_tools()'s defaults, the functions of base, utils,
# tools, jsonlite and data.table that issue 28 found turned against the host,
# next to safe ones; the case calls the dangerous ones and observes that
# nothing happened. `probe` is the test's window on the server's state.
library(mcplite)
options(mcplite.cache_dir = Sys.getenv("HOSTILE_CACHE", file.path(tempdir(), "cache")))

pick <- function(package, funs) {
  package_tools(package, pattern = paste0("^(", paste(gsub(".", "[.]", funs, fixed = TRUE),
                                                      collapse = "|"), ")$"))
}
tools <- c(
  pick("base", c("system", "system2", "source", "quit", "q", "unlink", "file.remove", "readLines",
                 "writeLines", "readRDS", "Sys.setenv", "Sys.getenv", "setwd", "options", "assign",
                 "library", "dyn.load", "mean", "toupper", "seq", "getwd")),
  pick("utils", c("download.file", "install.packages", "remove.packages", "read.csv", "write.csv",
                  "head")),
  pick("tools", c("pskill", "psnice", "file_ext")),
  pick("jsonlite", c("fromJSON", "read_json", "write_json", "toJSON")),
  pick("data.table", c("fread", "fwrite", "fifelse")),
  list(tool(function() list(wd = getwd(), probe = Sys.getenv("HOSTILE_PROBE"),
                            digits = getOption("digits")),
            name = "probe", description = "The server's working directory, HOSTILE_PROBE and digits."))
)
mcp_server(tools, instructions = "Hostile package-tools server.")
