# The loop timed by bench/progress.R, in R and inside the tool of
# bench/servers/progress.R: n iterations of `s <- s + sqrt(i)`, with or
# without mcp_progress() in each. Returns the loop's elapsed seconds.
timed_loop <- function(n, report) {
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
}
