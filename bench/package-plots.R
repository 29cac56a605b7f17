# Per-call cost of package tools' drawing capture and null encoding (issue 34,
# RULES R8.5, R8.9): W2-style sequential tools/call latency for a tool that
# does not draw (stats::median) and, for information, one that does
# (graphics::plot).
#
#   R_LIBS=<library with mcplite> Rscript --vanilla bench/package-plots.R [calls]
#
# Two harnesses: in process through mcp_handle() (no transport), and a
# stdio server process driven with processx (one request line, wait for the
# answer line). Each: 200 warm-up calls, then `calls` timed calls; prints the
# median and the 90th percentile in microseconds. Run it with two builds
# (before/after) on a quiet machine to compare.
args <- commandArgs(TRUE)
calls <- if (length(args)) as.integer(args[[1]]) else 2000L
library(mcplite)
setwd(tempdir())  # the build before issue 34 writes Rplots.pdf in the working directory

line_for <- function(name, arguments) {
  sprintf(paste0(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s,',
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{}}}}'
  ), name, arguments)
}
median_line <- line_for("median", '{"x":[1,5,2,10]}')
plot_line <- line_for("plot", '{"x":[3,1,2]}')

summarise <- function(us) c(p50 = stats::median(us), p90 = unname(stats::quantile(us, 0.9)))

in_process <- function(line, n) {
  tools <- c(package_tools("stats", include = "median", quiet = TRUE),
             package_tools("graphics", include = "plot", quiet = TRUE))
  h <- mcp_handler(tools)
  for (i in seq_len(200L)) mcp_handle(h, line)
  us <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- Sys.time()
    mcp_handle(h, line)
    us[i] <- as.numeric(Sys.time() - t0, units = "secs") * 1e6
  }
  summarise(us)
}

over_stdio <- function(line, n) {
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "mcp_server(c(package_tools('stats', include = 'median', quiet = TRUE),",
    "  package_tools('graphics', include = 'plot', quiet = TRUE)))"
  ), script)
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
                             stdin = "|", stdout = "|", stderr = "|")
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  roundtrip <- function() {
    p$write_input(paste0(line, "\n"))
    repeat {
      out <- p$read_output_lines(n = 1L)
      if (length(out)) return(invisible(out))
      if (!p$is_alive()) stop("server died: ", p$read_all_error())
      p$poll_io(5000L)
    }
  }
  for (i in seq_len(200L)) roundtrip()
  us <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- Sys.time()
    roundtrip()
    us[i] <- as.numeric(Sys.time() - t0, units = "secs") * 1e6
  }
  close(p$get_input_connection())
  p$wait(10000)
  summarise(us)
}

rows <- rbind(
  "median, in process" = in_process(median_line, calls),
  "median, stdio server" = over_stdio(median_line, calls),
  "plot, in process" = in_process(plot_line, max(50L, calls %/% 20L)),
  "plot, stdio server" = over_stdio(plot_line, max(50L, calls %/% 20L))
)
cat("mcplite", as.character(utils::packageVersion("mcplite")), "from", find.package("mcplite"), "\n\n")
cat("| call | p50 (µs) | p90 (µs) |\n|---|---|---|\n")
for (r in rownames(rows)) cat(sprintf("| %s | %.1f | %.1f |\n", r, rows[r, "p50"], rows[r, "p90"]))
