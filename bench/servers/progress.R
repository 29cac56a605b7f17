# Server for bench/progress.R: one tool that runs a loop of `n` iterations,
# with or without mcp_progress() in each, and returns the loop's own elapsed
# time in seconds (measured inside R, so the protocol is not part of it).
library(mcplite)

here <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  dirname(normalizePath(f))
})
source(file.path(here, "progress-loop.R"))

loop <- tool(
  timed_loop,
  name = "loop",
  description = "Times a loop of n iterations, with or without mcp_progress().",
  arguments = list(n = type_integer(), report = type_boolean())
)

mcp_server(list(loop))
