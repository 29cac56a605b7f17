#' Send a log message from a tool to the client
#'
#' Call `mcp_log()` from inside a tool to send the MCP client a log message
#' (`notifications/message`) while the tool runs. A tool's `message()` and
#' `warning()` reach the client the same way, at the levels `"info"` and
#' `"warning"` (they also go to standard error, as always). The client
#' decides what it receives: a client of protocol 2025-11-25 or older sets a
#' level for its session with `logging/setLevel`; a 2026-07-28 client asks
#' for the messages of one call in its `_meta`
#' (`io.modelcontextprotocol/logLevel`). Messages below that level, and all
#' messages when the client asked for none, go nowhere, so tools stay
#' ordinary R functions: called directly in R, from testthat or through
#' [mcp_handle()], `mcp_log()` does nothing.
#'
#' A call's messages travel with its answer: on standard output before the
#' response over stdio, on the call's own event stream over HTTP (a client
#' that does not accept `text/event-stream` gets none), in the order they
#' were logged, and never after the response. Tools run by workers send them
#' too. A tool that logs much faster than the client reads loses what does
#' not fit in 1000 waiting messages, and the client is told how many were
#' left out; a message larger than 64 KiB is replaced by a warning saying
#' so. Protocol 2026-07-28 deprecates this kind of logging in favour of
#' standard error and OpenTelemetry, which mcplite also offers (see
#' [mcp_server()]); clients still use it.
#'
#' Log messages are read by the client's user and often by its model: never
#' log secrets or personal data.
#'
#' @param data What to send: a single string (sent as a JSON string), or any
#'   value a tool may return as structured content (a named list, a data
#'   frame, a vector: sent as JSON, encoded as tool results are).
#' @param level The severity: one of `"debug"`, `"info"`, `"notice"`,
#'   `"warning"`, `"error"`, `"critical"`, `"alert"` or `"emergency"`.
#' @param logger `NULL` (the running tool's name) or a single string: the
#'   name of the part of your code that logs.
#' @return Invisibly, `TRUE` when the message goes to a client, `FALSE` when
#'   nobody listens at that level.
#' @seealso [mcp_progress()] for progress, [mcp_server()].
#' @export
#' @examples
#' import_rows <- function(path) {
#'   mcp_log(paste("reading", basename(path)), level = "debug")
#'   rows <- nrow(mtcars) # the real work
#'   if (rows > 10) message("a large file: ", rows, " rows") # info
#'   mcp_log(list(rows = rows, columns = ncol(mtcars)), level = "notice")
#'   rows
#' }
#' # Called directly, the messages go nowhere (message() still prints):
#' import_rows("cars.csv")
mcp_log <- function(data, level = "info", logger = NULL) {
  if (!is_scalar_string(level) || !level %in% log_levels) {
    check_choice(level, log_levels)
  }
  check_string(logger, allow_null = TRUE)
  if (!log_wanted(level)) {
    return(invisible(FALSE))
  }
  json <- if (is_scalar_string(data)) fixed_json(data) else payload_json(data)
  invisible(log_running(level, logger, json))
}

# The levels of RULES G1, least severe first.
log_levels <- c("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Evaluate a tool call (`expr`, a promise) with handlers that send its
# message()s and warning()s to the client (RULES G2.1): the host wraps a call
# in this only when its client listens to log messages
# (rust/mcplite-r/src/host.rs). The conditions go on as before (to standard
# error, or an error under warn = 2).
log_tool_conditions <- function(expr) {
  withCallingHandlers(expr, message = log_message, warning = log_warning)
}

# The handlers, made once (a closure per call would cost every call).
log_message <- function(cnd) log_condition("info", cnd)
log_warning <- function(cnd) log_condition("warning", cnd)

log_condition <- function(level, cnd) {
  text <- tryCatch(conditionMessage(cnd), error = function(e) "")
  if (!is_scalar_string(text)) {
    return(invisible(FALSE))
  }
  text <- sub("\n$", "", text)
  if (log_wanted(level)) {
    log_running(level, NULL, fixed_json(text))
  }
  invisible(FALSE)
}
