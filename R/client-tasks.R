#' Tasks on an MCP server
#'
#' A server may run a tool call as a task: it answers at once with a handle
#' and runs the call in the background (for example an mcplite server with
#' `mcp_server(tasks = )`, see [task_options()]). [mcp_call()] follows such a
#' task to its result by default, reporting its status messages to
#' `progress`; with `task = "handle"` it returns the handle instead, and these
#' functions ask about it later, from the same connection or from a new one
#' to the same server (a task is found with the credentials that created it).
#'
#' * `mcp_task_status()` asks for the task's state (`tasks/get`).
#' * `mcp_task_result()` waits for the task to end, polling as the server
#'   suggests, and returns its result as [mcp_call()] would, with the same
#'   errors; an interrupt (Ctrl+C) while it waits stops waiting and leaves the
#'   task running.
#' * `mcp_task_cancel()` cancels it (`tasks/cancel`).
#'
#' @param x A connection from [mcp_connect()].
#' @param task A handle (class `mcplite_task`, from `mcp_call(task =
#'   "handle")` or `mcp_task_status()`) or a task's id (a string).
#' @param ... Must be empty.
#' @param timeout Seconds to wait for each answer of the server; `NULL`: the
#'   connection's.
#' @param max_time `mcp_task_result()`: the most seconds to wait for the task
#'   to end (`NULL`: no limit); past it, an error of class
#'   `mcplite_error_timeout`, and the task goes on.
#' @param progress `mcp_task_result()`: `NULL`, or a function called as
#'   `progress(progress, total, message)` each time the task's status message
#'   changes (`total` is `NULL`).
#' @param simplify As for [mcp_call()].
#' @return `mcp_task_status()`, `mcp_task_cancel()`: the task's handle, a
#'   list of class `mcplite_task` with `id`, `status` (`"working"`,
#'   `"input_required"`, `"completed"`, `"failed"` or `"cancelled"`),
#'   `message` (the status message or `NULL`), `created`, `updated`
#'   (`POSIXct`), `ttl` and `poll_interval` (seconds, `NULL` when not given)
#'   and `server`. `mcp_task_result()`: a tool result, as from [mcp_call()].
#' @seealso `vignette("tasks", package = "mcplite")`
#' @export
#' @examples
#' # A server whose tool may run as a task (over HTTP, the handle's id can
#' # also be used from another connection or R session).
#' script <- file.path(tempdir(), "task-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "slow <- tool(function(n = 3L) { Sys.sleep(n / 10); n * 2 }, 'Double, slowly.',",
#'   "  name = 'slow', arguments = list(n = type_integer(required = FALSE)), task = 'optional')",
#'   "mcp_server(list(slow), tasks = TRUE)"
#' ), script)
#' conn <- mcp_connect_script(script, protocol = "2026-07-28")
#' job <- mcp_call(conn, "slow", list(n = 5L), task = "handle")
#' job$status
#' mcp_task_result(conn, job$id)$content[[1]]$text
#' mcp_task_status(conn, job)$status
#' mcp_close(conn)
mcp_task_status <- function(x, task, ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  id <- task_id_arg(task)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  task_handle(x, conn_task(x, "tasks/get", id, timeout))
}

#' @rdname mcp_task_status
#' @export
mcp_task_result <- function(x, task, ..., timeout = NULL, max_time = NULL, progress = NULL, simplify = FALSE) {
  check_dots_empty(...)
  check_connection(x)
  id <- task_id_arg(task)
  check_bool(simplify)
  check_function(progress, allow_null = TRUE)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  max_time <- if (!is.null(max_time)) check_seconds(max_time, "max_time")
  state <- conn_task(x, "tasks/get", id, timeout)
  res <- follow_task(x, NULL, state, progress, timeout, max_time, cancel_on_exit = FALSE)
  if (simplify) {
    res$structured_content <- simplify_structured(res$structured_content)
  }
  res
}

#' @rdname mcp_task_status
#' @export
mcp_task_cancel <- function(x, task, ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  id <- task_id_arg(task)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  answer <- conn_task(x, "tasks/cancel", id, timeout)
  # 2025-11-25 answers the task; 2026-07-28 an empty result.
  if (is.null(answer[["taskId"]])) {
    answer <- conn_task(x, "tasks/get", id, timeout)
  }
  invisible(task_handle(x, answer))
}

#' @export
print.mcplite_task <- function(x, ...) {
  cat("<mcplite_task> ", x$id, " on MCP server `", x$server, "`: ", x$status,
      if (!is.null(x$message)) paste0(" (", x$message, ")"), "\n", sep = "")
  invisible(x)
}

# `task`: a handle or an id.
task_id_arg <- function(task, call = caller_env()) {
  if (inherits(task, "mcplite_task")) {
    return(task$id)
  }
  check_string(task, allow_empty = FALSE, what = "a task handle (class `mcplite_task`) or a task's id", call = call)
  task
}

# A task object of either era (RULES K14.2) as an R handle.
task_handle <- function(x, t) {
  num <- function(v) if (is.numeric(v) && length(v) == 1L) v / 1000
  time <- function(v) {
    if (is_scalar_string(v)) as.POSIXct(sub("Z$", "", v), format = "%Y-%m-%dT%H:%M:%OS", tz = "UTC")
  }
  structure(
    list(
      id = t[["taskId"]],
      status = t[["status"]],
      message = t[["statusMessage"]],
      created = time(t[["createdAt"]]),
      updated = time(t[["lastUpdatedAt"]]),
      ttl = num(t[["ttlMs"]] %||% t[["ttl"]]),
      poll_interval = num(t[["pollIntervalMs"]] %||% t[["pollInterval"]]),
      server = x$name
    ),
    class = "mcplite_task"
  )
}

# The task a tools/call answered with (2025-11-25 `{"task": {...}}`,
# 2026-07-28 `resultType: "task"`), or NULL.
task_of_result <- function(value) {
  if (identical(value[["resultType"]], "task")) {
    return(value)
  }
  t <- value[["task"]]
  if (is.list(t) && is_scalar_string(t[["taskId"]]) && is.null(value[["content"]])) t
}

task_terminal <- function(status) status %in% c("completed", "failed", "cancelled")

# Follow the task whose state is `state` (a task object) to its result
# (RULES K14.3): poll tasks/get at the interval the server suggests (from
# 10 ms to 5 s), report a new status message to `progress`, then take the
# result (2026-07-28: inlined in the task; 2025-11-25: tasks/result). With
# `cancel_on_exit`, leaving early (an error, an interrupt, `max_time`)
# cancels the task.
follow_task <- function(x, tool, state, progress, timeout, max_time, cancel_on_exit = TRUE) {
  id <- state[["taskId"]]
  if (!is_scalar_string(id)) {
    abort("MCP server `", x$name, "` answered with a task without an id.",
          class = error_class("connection"), fields = list(reason = "protocol", server = x$name))
  }
  started <- Sys.time()
  step <- 0
  said <- NULL
  done <- FALSE
  answered <- character()
  if (cancel_on_exit) {
    on.exit(if (!done) try(conn_task(x, "tasks/cancel", id, timeout), silent = TRUE), add = TRUE)
  }
  repeat {
    status <- state[["status"]]
    message <- state[["statusMessage"]]
    if (!is.null(progress) && is_scalar_string(message) && !identical(message, said)) {
      step <- step + 1
      said <- message
      progress(step, NULL, message)
    }
    if (!is_scalar_string(status) || task_terminal(status)) {
      break
    }
    # RULES K14.4: the task's tool asks (2026-07-28): each question is
    # answered once, with the connection's functions, in tasks/update.
    asked <- state[["inputRequests"]]
    fresh <- setdiff(names(asked), answered)
    if (identical(status, "input_required") && length(fresh) > 0L) {
      bodies <- vapply(asked[fresh], function(r) answer_question(x, r$method, r$params), character(1))
      keys <- vapply(fresh, function(k) as.character(fixed_json(k)), character(1))
      conn_task(x, "tasks/update", id, timeout, paste0("{", paste0(keys, ":", bodies, collapse = ","), "}"))
      answered <- c(answered, fresh)
      state <- conn_task(x, "tasks/get", id, timeout)
      next
    }
    if (!is.null(max_time) && as.double(Sys.time() - started, units = "secs") > max_time) {
      abort("Task ", id, " on MCP server `", x$name, "` did not end within ", max_time, " seconds",
            if (cancel_on_exit) " and was cancelled" else "; it goes on", ".",
            class = error_class("timeout"), fields = list(server = x$name, task = id))
    }
    interval <- state[["pollIntervalMs"]] %||% state[["pollInterval"]] %||% 1000
    Sys.sleep(min(max(as.double(interval) / 1000, 0.01), 5))
    state <- conn_task(x, "tasks/get", id, timeout)
  }
  done <- TRUE
  tool <- tool %||% "(task)"
  if (identical(status, "cancelled")) {
    abort("Task ", id, " on MCP server `", x$name, "` was cancelled", if (is_scalar_string(message))
      paste0(": ", message) else ".", class = error_class("tool"),
      fields = list(text = message %||% "", tool = tool, server = x$name, task = id))
  }
  if (!is.null(state[["result"]])) {
    return(call_result(x, tool, state[["result"]]))
  }
  err <- state[["error"]]
  if (is.list(err)) {
    abort("MCP server `", x$name, "` failed task ", id, ": ", err[["message"]] %||% "no message",
          class = error_class("rpc"),
          fields = list(code = err[["code"]], error_message = err[["message"]], data = err[["data"]],
                        server = x$name, task = id))
  }
  call_result(x, tool, conn_task(x, "tasks/result", id, timeout))
}
