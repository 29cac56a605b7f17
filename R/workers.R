# Worker processes (RULES section 14): the options of mcp_server(workers = N)
# and the command line a worker starts with, and the worker mode of
# mcp_server() in a process the server started (rust/mcplite-r/src/workers.rs).
#
# A worker is R started again with the server's own command line
# (commandArgs()): the same script runs from the top in a fresh R process,
# with MCPLITE_WORKER set; when it reaches mcp_server(), that call serves the
# server's tool calls over two pipes instead of starting a transport, and the
# process ends when the server closes them.

# How long a worker may take to run its script up to mcp_server() (loading
# packages included).
worker_start_timeout <- 120

# The pool for mcp_server(): NULL for one process (workers = 1, unconfined),
# otherwise the list the bridge reads (start_pool() in
# rust/mcplite-r/src/workers.rs). Confined tools always run in workers (one
# with workers = 1; RULES N7.1).
worker_options <- function(workers, max_queue, session_tools = FALSE, confine = FALSE) {
  n <- http_limit(workers, "workers", 1, whole = TRUE, what = "a whole number") %||% 1
  if (n > 1024) {
    abort("`workers` must be a whole number from 1 to 1024, not ", describe(workers), ".")
  }
  queue <- http_limit(max_queue, "max_queue", 0, whole = TRUE, what = "a whole number") %||% 64
  if (n == 1 && !confine) {
    return(NULL)
  }
  if (session_tools) {
    # RULES N1.2, checked before anything about the script or the platform.
    abort(
      "`session_tools = TRUE` runs the tools in the user's own R session, one call at a time, so it ",
      "cannot be combined with ", if (n > 1) "`workers` greater than 1" else "`confine = TRUE`", ".",
      class = "mcplite_error_workers"
    )
  }
  if (confine) {
    # A wrong limit stops the server before any worker starts (RULES N7.2).
    confine_limits()
  }
  if (.Platform$OS.type == "windows") {
    abort(
      "Worker processes (`workers` greater than 1) are available on Linux and macOS only; ",
      "on Windows use `workers = 1` and run more server processes behind a load balancer.",
      class = "mcplite_error_workers"
    )
  }
  cmd <- worker_command()
  list(
    workers = n, max_queue = queue, program = cmd$program, args = cmd$args, cwd = getwd(),
    start_timeout = worker_start_timeout
  )
}

# R's command line, to start each worker with, with a relative script path
# made absolute. A session without a script to run again cannot have workers.
worker_command <- function(args = commandArgs(), interactive = base::interactive()) {
  no_script <- function(why) {
    abort(
      "Worker processes (`workers` greater than 1, or `confine = TRUE`) need the server's script: ",
      "each worker starts R again with the same command line and runs the script up to ",
      "`mcp_server()`, and ", why, ". ",
      "Save the tools and the `mcp_server()` call in a script and run it with ",
      "`Rscript /path/to/server.R` (or `R -f`, or `Rscript -e`), or use `workers = 1`.",
      class = "mcplite_error_workers"
    )
  }
  if (interactive) {
    no_script("this is an interactive session")
  }
  program <- args[[1L]]
  rest <- args[-1L]
  file_at <- which(startsWith(rest, "--file="))
  dash_f <- which(rest == "-f")
  path <- if (length(file_at) > 0L) {
    substring(rest[[file_at[[1L]]]], 8L)
  } else if (length(dash_f) > 0L && dash_f[[1L]] < length(rest)) {
    rest[[dash_f[[1L]] + 1L]]
  }
  if (is.null(path) && !"-e" %in% rest) {
    no_script("this R process was given no script file or `-e` expression (its script came from standard input)")
  }
  if (identical(path, "-")) {
    no_script("this R process read its script from standard input")
  }
  if (!is.null(path)) {
    if (!file.exists(path)) {
      abort(
        "Worker processes (`workers` greater than 1, or `confine = TRUE`) need the server's script, ",
        "but \"", path, "\" is not found from the working directory \"", getwd(), "\" (it was ",
        "changed after R started). Start R with the script's absolute path.",
        class = "mcplite_error_workers"
      )
    }
    full <- normalizePath(path, mustWork = TRUE)
    if (length(file_at) > 0L) {
      rest[[file_at[[1L]]]] <- paste0("--file=", full)
    } else {
      rest[[dash_f[[1L]] + 1L]] <- full
    }
  }
  if (!file.exists(program)) {
    abort(
      "Worker processes (`workers` greater than 1, or `confine = TRUE`) need to start R again, ",
      "but this process's program \"", program, "\" is not found.",
      class = "mcplite_error_workers"
    )
  }
  list(program = program, args = rest)
}

# Is this process a worker started by a server?
is_worker <- function() nzchar(Sys.getenv("MCPLITE_WORKER", ""))

# mcp_server() in a worker: serve the server's calls with these tools, then
# end the process (the rest of the script is the server's business, not the
# worker's).
serve_as_worker <- function(tools, progress_interval, confine = FALSE) {
  Sys.unsetenv("MCPLITE_WORKER")
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  spec <- server_spec(tools)
  check_payload_options()
  if (isTRUE(confine)) {
    # RULES N7: from here on, the kernel holds this process to its policy.
    # Before serving_options(), which hides error messages: a worker that
    # cannot be confined says why (N7.3).
    confine_worker(tools)
  }
  old <- serving_options()
  on.exit(options(old), add = TRUE)
  engine_worker(spec, progress_interval(progress_interval))
  quit(save = "no", status = 0L, runLast = FALSE)
}
