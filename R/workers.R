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
# with workers = 1; RULES N7.1). `host_tools`: the names of the tools the
# server runs itself (a live-session server's, RULES N7.6; NULL: none), of
# `tools`, all the server's tool names.
worker_options <- function(workers, max_queue, confine = FALSE, host_tools = NULL, tools = NULL,
                           tasks = FALSE) {
  n <- http_limit(workers, "workers", 1, whole = TRUE, what = "a whole number") %||% 1
  if (n > 1024) {
    abort_arg("`workers` must be a whole number from 1 to 1024, not ", describe(workers), ".")
  }
  queue <- http_limit(max_queue, "max_queue", 0, whole = TRUE, what = "a whole number") %||% 64
  if (n == 1 && !confine && !tasks) {
    return(NULL)
  }
  if (!is.null(host_tools) && all(tools %in% host_tools)) {
    # RULES N1.2, N7.6: checked before anything about the script or the
    # platform.
    abort(
      "`session_tools = TRUE` runs the tools in the user's own R session, one call at a time, and ",
      "workers run only package tools (`package_tools()`), which this server has none of, so it ",
      "cannot be combined with ",
      if (n > 1) "`workers` greater than 1" else if (confine) "`confine = TRUE`" else "`tasks`", ".",
      class = "mcplite_error_workers"
    )
  }
  if (confine) {
    # A wrong limit stops the server before any worker starts (RULES N7.2).
    confine_limits()
  }
  growth <- worker_memory_growth()
  call_cpu <- if (confine) confine_call_cpu() else Inf
  call_timeout <- worker_call_timeout()
  if (.Platform$OS.type == "windows") {
    abort(
      "Worker processes (`workers` greater than 1) are available on Linux and macOS only; ",
      "on Windows use `workers = 1` and run more server processes behind a load balancer.",
      class = "mcplite_error_workers"
    )
  }
  cmd <- worker_launch(worker_command())
  list(
    workers = n, max_queue = queue, program = cmd$program, args = cmd$args, env = cmd$env, cwd = getwd(),
    start_timeout = worker_start_timeout, max_growth = growth, call_cpu = call_cpu,
    call_timeout = call_timeout, tmp_root = tempdir(), host_tools = as.character(host_tools)
  )
}

# RULES N7.7: the wall time one call may take in a worker, in seconds:
# MCPLITE_CALL_TIMEOUT (default 3600).
worker_call_timeout <- function() {
  env_seconds("MCPLITE_CALL_TIMEOUT", 3600)
}

# Seconds from the environment variable `var`: a whole number of at least 1,
# or "none" (Inf); `default` when unset. Anything else stops the server
# before a worker starts.
env_seconds <- function(var, default) {
  value <- Sys.getenv(var, "")
  if (!nzchar(value)) {
    return(default)
  }
  if (identical(tolower(trimws(value)), "none")) {
    return(Inf)
  }
  if (!grepl("^\\s*[0-9]+\\s*$", value) || as.numeric(value) < 1) {
    abort(
      "The environment variable `", var, "` must be a whole number of seconds of at least 1, ",
      "or \"none\", not \"", value, "\".",
      class = "mcplite_error_workers"
    )
  }
  as.numeric(value)
}

# RULES N5.3: how much more memory than at its start a worker may keep after
# a call before it is replaced, in bytes (Inf: no limit).
worker_memory_growth <- function() env_bytes("MCPLITE_WORKER_MEMORY", 1024^3)

# RULES N1.2: how a worker starts. R's own options of the server's command
# line, then `-e mcplite:::worker_main()` instead of the script (which
# worker_main() reads from MCPLITE_WORKER_SOURCE: "file:<path>" or
# "exprs:<the -e expressions>"), then the trailing `--args`. So no call of
# the script is on a worker's call stack, and its command line holds no
# expression of the script.
worker_launch <- function(cmd) {
  args <- cmd$args
  at <- match("--args", args, nomatch = length(args) + 1L)
  head <- args[seq_len(at - 1L)]
  tail <- args[seq_along(args) >= at]
  script <- NULL
  exprs <- character()
  keep <- character()
  i <- 1L
  while (i <= length(head)) {
    a <- head[[i]]
    if (startsWith(a, "--file=")) {
      script <- substring(a, 8L)
    } else if (a %in% c("-f", "-e") && i < length(head)) {
      if (a == "-f") script <- head[[i + 1L]] else exprs <- c(exprs, head[[i + 1L]])
      i <- i + 1L
    } else {
      keep <- c(keep, a)
    }
    i <- i + 1L
  }
  source <- if (!is.null(script)) paste0("file:", script) else paste0("exprs:", paste(exprs, collapse = "\n"))
  list(program = cmd$program, args = c(keep, "-e", "mcplite:::worker_main()", tail),
       env = c(MCPLITE_WORKER_SOURCE = source))
}

worker_state <- new.env(parent = emptyenv())

# A worker's R (RULES N1.3): run the server's script, each expression in an
# environment of its own whose parent is the global environment, until its
# mcp_server() call hands over the tools (a condition that unwinds the
# script's calls), then serve them. The global environment stays empty and
# the call stack holds this call only, so that no frame number or
# environment a tool's arguments can name reaches the script's variables or
# its mcp_server() call.
worker_main <- function() {
  served <- worker_load(Sys.getenv("MCPLITE_WORKER_SOURCE"))
  if (is.null(served)) {
    abort("The server's script ended without calling `mcp_server()` in this worker.",
          class = "mcplite_error_workers")
  }
  serve_as_worker(served$tools, served$progress_interval, served$confine, served$resource_changes)
}

worker_load <- function(source) {
  force(source)
  Sys.unsetenv("MCPLITE_WORKER_SOURCE")
  exprs <- if (startsWith(source, "file:")) {
    parse(file = substring(source, 6L), keep.source = FALSE)
  } else {
    # Rscript writes each space of an `-e` expression as "~+~" and each
    # newline as "~n~"; R reads them back so.
    text <- gsub("~n~", "\n", gsub("~+~", " ", substring(source, 7L), fixed = TRUE), fixed = TRUE)
    parse(text = text, keep.source = FALSE)
  }
  worker_state$loading <- TRUE
  on.exit(worker_state$loading <- FALSE)
  tryCatch(
    {
      worker_eval(exprs, new.env(parent = globalenv()))
      NULL
    },
    mcplite_worker_serve = function(cnd) cnd
  )
}

worker_eval <- function(exprs, env) {
  for (e in exprs) eval(e, env)
}

# mcp_server() in a worker started by worker_main(): hand the tools over.
worker_hand_over <- function(tools, progress_interval, confine, resource_changes = FALSE) {
  if (!isTRUE(worker_state$loading)) {
    return(invisible(FALSE))
  }
  signalCondition(structure(
    class = c("mcplite_worker_serve", "condition"),
    list(message = "", call = NULL, tools = tools, progress_interval = progress_interval, confine = confine,
         resource_changes = resource_changes)
  ))
  invisible(FALSE)
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
    # Rscript writes each space of the script's path as "~+~".
    decoded <- gsub("~+~", " ", path, fixed = TRUE)
    if (!file.exists(path) && file.exists(decoded)) {
      path <- decoded
    }
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
serve_as_worker <- function(tools, progress_interval, confine = FALSE, resource_changes = FALSE) {
  Sys.unsetenv("MCPLITE_WORKER")
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  spec <- server_spec(tools)
  # RULES U3.2: the worker's tools may change the server's resources when it
  # has some; the server applies the changes that come with a result.
  spec$resource_changes <- isTRUE(resource_changes)
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
