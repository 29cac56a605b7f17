#' Long jobs as tasks
#'
#' `task_options()` sets how a server keeps the tasks its tools run as
#' (`mcp_server(tasks = task_options(...))`). A task is a tool call that
#' outlives its request: the client gets a handle at once, the call runs on a
#' worker process, and the client asks for its status and fetches its result
#' later, from the same connection or (over HTTP) from another one. Tools say
#' whether they may run as tasks with `tool(task = )`: `"forbidden"` (the
#' default), `"optional"` or `"required"`.
#'
#' Both protocol eras have tasks. With a 2025-11-25 client, a tool that allows
#' it runs as a task when the client asks (`params.task`), and a
#' `"required"` one must be asked so (`tools/list` declares
#' `execution.taskSupport`). With a 2026-07-28 client that declares the
#' `io.modelcontextprotocol/tasks` extension, every call of an `"optional"` or
#' `"required"` tool runs as a task; a client without it cannot call a
#' `"required"` tool (error `-32021`). With `after`, a 2026-07-28 call of an
#' `"optional"` tool runs as an ordinary call instead, and becomes a task
#' only if it is still running `after` seconds after it arrived: quick
#' calls answer at once, long ones are answered with a task's handle and go
#' on as the task.
#'
#' While the task runs, the tool's [mcp_progress()] messages become its status
#' message. In 2026-07-28 a tool running as a task may ask the user
#' ([mcp_elicit()], [mcp_sample()]) what the client declared: the task is then
#' `input_required` until the client answers with `tasks/update` (mcplite's
#' client does so with the connection's functions). A 2025-11-25 task cannot
#' ask: the question fails with an error of class `mcplite_error_ask`.
#' `tasks/cancel` interrupts the call. A task is found only with the bearer
#' token that created it (over HTTP with `token` or `tokens_file`); its id is
#' 128 random bits.
#'
#' Tasks run on worker processes, so a server with `tasks` starts at least one
#' (see `workers` in [mcp_server()]); the tools the server runs itself
#' (`session_tools`) never run as tasks.
#'
#' @param ttl How long, in seconds, a task and its result are kept when the
#'   client asks for no time to live (default one hour).
#' @param max_ttl The longest time to live granted, in seconds (default seven
#'   days): a client asking for more gets this.
#' @param poll_interval The polling interval suggested to clients, in seconds.
#' @param after `NULL` (default), or a number of seconds: 2026-07-28 calls of
#'   `"optional"` tools become tasks only when they have not answered this
#'   long after they arrived (waiting for a worker counts). A call whose
#'   question waits for the client's next round (see [mcp_elicit()]) answers
#'   that round itself and is not made a task; one that would find the store
#'   full runs on as an ordinary call. `"required"` tools, and 2025-11-25
#'   clients (which ask for a task themselves), are not affected.
#' @param max_tasks The most tasks kept at once. When it is reached, finished
#'   tasks are dropped, oldest first; when all are running, a new task is
#'   refused with an error the client can retry.
#' @param max_mb The most task results kept at once, in all, in mebibytes
#'   (2^20 bytes; at least 16, the most one result may take). A result that
#'   does not fit drops finished tasks, those updated longest ago first; when
#'   the others are all running, its task fails, saying so.
#' @param dir `NULL`, or a directory where tasks are kept, so that a finished
#'   task's result survives a restart of the server (a task that was running
#'   when the server stopped is then reported failed, saying so). Created
#'   private to the user (`0700`; files `0600`) if it does not exist.
#'   Replicas of one server behind a load balancer, each with its own
#'   `replica` name (see [mcp_server()]), may share one: a replica's task
#'   ids start with its name, it writes and reads back only its own tasks'
#'   files, and a replica asked about another's task reads that task's
#'   file (read-only: its status and result as last written), so the task
#'   is found whichever replica a request reaches. Such a task cannot be
#'   cancelled there (only on its own replica), and `tasks/list` lists a
#'   replica's own tasks. Other servers, and replicas without names or with
#'   the same name, must not share one. See the "Serve over HTTP" vignette.
#' @return `task_options()`: a list of class `mcplite_task_options`.
#' @seealso `vignette("tasks", package = "mcplite")`, [mcp_server()], [tool()].
#' @export
#' @examples
#' fit <- tool(
#'   function(n) {
#'     for (i in seq_len(n)) mcp_progress(i, n, message = paste("step", i))
#'     n
#'   },
#'   "Run a long fit.",
#'   name = "fit", arguments = list(n = type_integer()), task = "optional"
#' )
#' opts <- task_options(ttl = 600, dir = tempfile("tasks-"))
#' opts$ttl
#' # Calls that answer within 5 seconds are answered as usual:
#' task_options(after = 5)
#' # In a script: mcp_server(list(fit), tasks = opts)
task_options <- function(ttl = 3600, max_ttl = 7 * 86400, poll_interval = 1, max_tasks = 1000,
                         max_mb = 256, dir = NULL, after = NULL) {
  check_number(ttl, min = 1)
  check_number(after, min = 0, max = 86400, allow_null = TRUE)
  check_number(max_ttl, min = 1)
  check_number(poll_interval, min = 0.01, max = 3600)
  check_number_whole(max_tasks, min = 1, max = 1e6)
  check_number(max_mb, min = 16, max = 2^20)
  check_string(dir, allow_null = TRUE, allow_empty = FALSE)
  if (!is.null(dir)) {
    dir <- normalizePath(path.expand(dir), mustWork = FALSE)
    if (file.exists(dir) && !dir.exists(dir)) {
      abort_arg("`dir` must name a directory, not the file ", encodeString(dir, quote = "\""), ".")
    }
  }
  structure(
    list(ttl = as.double(ttl), max_ttl = as.double(max(ttl, max_ttl)), poll_interval = as.double(poll_interval),
         max_tasks = as.double(max_tasks), max_mb = as.double(max_mb), dir = dir,
         after = if (!is.null(after)) as.double(after)),
    class = "mcplite_task_options"
  )
}

#' @export
print.mcplite_task_options <- function(x, ...) {
  cat("<mcplite_task_options> ttl ", x$ttl, " s (at most ", x$max_ttl, " s), poll every ",
      x$poll_interval, " s, at most ", x$max_tasks, " tasks and ", x$max_mb, " MiB of results",
      if (is.null(x$dir)) ", kept in memory" else paste0(", kept in ", x$dir),
      if (!is.null(x$after)) paste0(", optional tools' calls made tasks after ", x$after, " s"), "\n", sep = "")
  invisible(x)
}

# The `tasks` argument of mcp_server(): NULL or FALSE (no tasks), TRUE
# (task_options()'s defaults) or task_options().
tasks_option <- function(tasks, call = caller_env()) {
  if (is.null(tasks) || isFALSE(tasks)) {
    return(NULL)
  }
  if (isTRUE(tasks)) {
    return(task_options())
  }
  if (!inherits(tasks, "mcplite_task_options")) {
    abort_arg("`tasks` must be NULL, TRUE, FALSE or task_options(), not ", describe(tasks), ".", call = call)
  }
  tasks
}

# What the bridge reads (rust/mcplite-r/src/tasks.rs): the options and each
# tool's support, in the server's order. Tools the server runs itself
# (RULES N7.6) never run as tasks.
task_spec <- function(tasks, spec) {
  if (is.null(tasks)) {
    return(NULL)
  }
  support <- spec$task_support %||% rep("forbidden", length(spec$names))
  support[spec$names %in% spec$host_tools] <- "forbidden"
  c(unclass(tasks), list(support = support))
}

# tool(task = ): how the tool runs as a task (RULES V1.2).
check_task_support <- function(task, call = caller_env()) {
  check_choice(task, c("forbidden", "optional", "required"), call = call)
  task
}
