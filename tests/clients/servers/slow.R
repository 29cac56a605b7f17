# Test server for calls that take time (RULES section 11): progress
# heartbeats, the tool's own progress (mcp_progress()) and cancellation.
# Shared by the end-to-end tests (tests/testthat/test-e2e-progress.R), the
# Python and TypeScript SDK clients and the hostile suite.
#   Rscript --vanilla slow.R
# The heartbeat interval comes from MCPLITE_PROGRESS_INTERVAL (default 5 s).
# Tools that take a `dir` write marker files there, so that a test can see
# what ran after a cancellation: `started` when the work begins, `on_exit`
# from on.exit(), `interrupted` from tryCatch(interrupt = ), and
# `side_effect` only when the work ran to its end.
library(mcplite)

mark <- function(dir, name, text = name) {
  if (nzchar(dir)) writeLines(text, file.path(dir, name))
}

wait <- tool(
  function(seconds) {
    Sys.sleep(seconds)
    "waited"
  },
  name = "wait",
  description = "Sleeps for the given number of seconds, reporting nothing itself.",
  arguments = list(seconds = type_number("Seconds to sleep."))
)

count <- tool(
  function(n, pause = 0.3) {
    for (i in seq_len(n)) {
      mcp_progress(i, total = n, message = paste("step", i, "of", n))
      Sys.sleep(pause)
    }
    n
  },
  name = "count",
  description = "Reports progress 1..n (total n), pausing between steps.",
  arguments = list(
    n = type_integer("Number of steps."),
    pause = type_number("Seconds between steps.", required = FALSE)
  )
)

hammer <- tool(
  function(n) {
    listening <- FALSE
    for (i in seq_len(n)) listening <- mcp_progress(i, total = n)
    sprintf("%d reports, listening: %s", as.integer(n), listening)
  },
  name = "hammer",
  description = "Calls mcp_progress() n times in a tight loop.",
  arguments = list(n = type_integer("Number of reports."))
)

# Reports the given values 0.05 s apart (by default) and returns right
# after the last one, as the conformance suite's tool does with 0, 50, 100.
burst <- tool(
  function(values, total, gap = 0.05) {
    for (i in seq_along(values)) {
      if (i > 1L) Sys.sleep(gap)
      mcp_progress(values[[i]], total = total)
    }
    "burst"
  },
  name = "burst",
  description = "Reports the values in order, `gap` seconds apart.",
  arguments = list(
    values = type_array(type_number(), "Values to report."),
    total = type_number("The total."),
    gap = type_number("Seconds between reports.", required = FALSE)
  )
)

late <- tool(
  function(seconds) {
    Sys.sleep(seconds)
    mcp_progress(0.5, total = 1, message = "half")
    Sys.sleep(0.1)
    "late"
  },
  name = "late",
  description = "Sleeps (heartbeats run), then reports 0.5 of 1.",
  arguments = list(seconds = type_number("Seconds to sleep first."))
)

backwards <- tool(
  function() {
    mcp_progress(2, total = 10)
    mcp_progress(1, total = 10)
    "unreachable"
  },
  name = "backwards",
  description = "Reports a value below its previous one (an error when a client listens)."
)

guarded <- tool(
  function(dir, seconds = 30, catch = TRUE) {
    on.exit(mark(dir, "on_exit"))
    work <- function() {
      mark(dir, "started")
      mcp_progress(1, message = "started")
      Sys.sleep(seconds)
      mark(dir, "side_effect")
      "finished"
    }
    if (isTRUE(catch)) {
      tryCatch(work(), interrupt = function(e) {
        mark(dir, "interrupted")
        "interrupted"
      })
    } else {
      work()
    }
  },
  name = "guarded",
  description = "Sleeps, writing marker files: started, on_exit, interrupted, side_effect.",
  arguments = list(
    dir = type_string("Directory for the marker files."),
    seconds = type_number("Seconds to sleep.", required = FALSE),
    catch = type_boolean("Catch the interrupt with tryCatch().", required = FALSE)
  )
)

stubborn <- tool(
  function(dir, seconds = 2) {
    mark(dir, "started")
    mcp_progress(1, message = "started")
    suspendInterrupts(Sys.sleep(seconds))
    mark(dir, "side_effect")
    "stubborn finished"
  },
  name = "stubborn",
  description = "Sleeps with interrupts suspended, then writes side_effect.",
  arguments = list(
    dir = type_string("Directory for the marker files."),
    seconds = type_number("Seconds to sleep.", required = FALSE)
  )
)

echo <- tool(
  function(text) text,
  name = "echo",
  description = "Return the text unchanged.",
  arguments = list(text = type_string("Text to return."))
)

mcp_server(
  list(wait, count, hammer, burst, late, backwards, guarded, stubborn, echo),
  instructions = "Slow tools for progress and cancellation tests."
)
