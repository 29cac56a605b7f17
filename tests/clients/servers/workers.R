# Test server for worker processes (RULES section 14). The number of workers
# and the queue come from the environment (MCPLITE_WORKERS,
# MCPLITE_MAX_QUEUE), as a deployed script would have them. Tools that take a
# `dir` write marker files there so that a test can see what ran where:
# `meet` waits until `n` calls are inside it at once (proof that calls run
# concurrently, without timing anything), `hold` runs until a file `release`
# appears, `guarded` marks `started`, `on_exit` and `side_effect` (only when
# it ran to its end).
#   MCPLITE_WORKERS=3 Rscript --vanilla workers.R
# With WORKERS_BROKEN=1 every worker fails before it reaches mcp_server();
# with WORKERS_BROKEN_WHEN=/path, every worker started once that file exists.
library(mcplite)

if (nzchar(Sys.getenv("MCPLITE_WORKER"))) {
  broken_when <- Sys.getenv("WORKERS_BROKEN_WHEN")
  if (nzchar(Sys.getenv("WORKERS_BROKEN")) || (nzchar(broken_when) && file.exists(broken_when))) {
    stop("this worker is broken on purpose")
  }
}

mark <- function(dir, name) writeLines(name, file.path(dir, name))

calls <- 0

tools <- list(
  tool(
    function(dir, n) {
      writeLines("", file.path(dir, paste0("pid-", Sys.getpid(), "-", sample.int(1e9, 1))))
      for (i in 1:3000) {
        if (length(list.files(dir, pattern = "^pid-")) >= n) {
          return(as.character(Sys.getpid()))
        }
        Sys.sleep(0.01)
      }
      stop("the other calls never came")
    },
    name = "meet", description = "Waits until n calls are inside this tool at once; returns the process id.",
    arguments = list(dir = type_string(), n = type_integer())
  ),
  tool(
    function(dir) {
      mark(dir, paste0("holding-", Sys.getpid()))
      while (!file.exists(file.path(dir, "release"))) Sys.sleep(0.01)
      "released"
    },
    name = "hold", description = "Runs until the file `release` appears in dir.",
    arguments = list(dir = type_string())
  ),
  tool(
    function(dir, seconds) {
      on.exit(mark(dir, "on_exit"))
      mark(dir, "started")
      Sys.sleep(seconds)
      mark(dir, "side_effect")
      "finished"
    },
    name = "guarded", description = "Sleeps with an on.exit() handler.",
    arguments = list(dir = type_string(), seconds = type_number())
  ),
  tool(
    function(n) {
      for (i in seq_len(n)) {
        mcp_progress(i, total = n, message = paste("step", i))
        Sys.sleep(0.1)
      }
      paste("counted to", n)
    },
    name = "count", description = "Reports progress 1..n.", arguments = list(n = type_integer())
  ),
  tool(
    function() {
      calls <<- calls + 1
      paste(Sys.getpid(), calls)
    },
    name = "tally", description = "The process id and how many calls this process's global counter saw."
  ),
  tool(
    function() {
      cat("printed to stdout\n")
      warning("a warning")
      "quiet"
    },
    name = "noisy", description = "Prints, warns, returns."
  ),
  tool(function(status) quit(save = "no", status = status), name = "quit",
    description = "Ends its R process.", arguments = list(status = type_integer())),
  tool(function() tools::pskill(Sys.getpid(), 11L), name = "segv",
    description = "Kills its R process with SIGSEGV."),
  tool(function() stop("an R error"), name = "fail", description = "Fails."),
  tool(
    function() system2("sh", c("-c", shQuote("echo \"${MCPLITE_WORKER-unset}\"")), stdout = TRUE),
    name = "child_env", description = "What a child process of the tool sees of MCPLITE_WORKER."
  )
)

mcp_server(tools)
