# Server for bench/progress.R: one tool that runs a loop of `n` iterations,
# with or without mcp_progress() in each, and returns the loop's own elapsed
# time in seconds (measured inside R, so the protocol is not part of it).
library(mcplite)

loop <- tool(
  function(n, report) {
    s <- 0
    t0 <- proc.time()[["elapsed"]]
    if (report) {
      for (i in seq_len(n)) {
        s <- s + sqrt(i)
        mcp_progress(i, total = n)
      }
    } else {
      for (i in seq_len(n)) {
        s <- s + sqrt(i)
      }
    }
    proc.time()[["elapsed"]] - t0
  },
  name = "loop",
  description = "Times a loop of n iterations, with or without mcp_progress().",
  arguments = list(n = type_integer(), report = type_boolean())
)

mcp_server(list(loop))
