# Errors raised by mcplite: one helper that raises them (abort()), one class
# hierarchy (documented below), and the conversion of the errors the Rust
# bridge returns (bridge_value()).

#' Errors raised by mcplite
#'
#' Every error mcplite raises is a condition of class `mcplite_error` (and
#' `error`, `condition`), so a handler for `mcplite_error` catches all of them.
#' Its message names the offending argument or option in backticks and says
#' what was expected. Errors of the kinds below have a more specific class as
#' well, in front of `mcplite_error`; handle that class to react to one kind
#' only, and test for it with `testthat::expect_error(class = ...)`.
#'
#' * `mcplite_error_server_running`: [mcp_server()] was called while a server
#'   is already running in the same process (for example from inside a tool).
#' * `mcplite_error_stdio`: [mcp_server()] could not set up standard input and
#'   output for the protocol.
#' * `mcplite_error_http`: [mcp_server()] could not start serving over HTTP,
#'   for example because the port is in use or a non-loopback address was
#'   given without a token.
#' * `mcplite_error_option`: one of the `mcplite.json.*` options (see
#'   [mcplite-results]) is invalid. Raised wherever the options are read:
#'   [mcp_server()], [mcp_handler()], [tool_result()].
#' * `mcplite_error_json`: an R value cannot be converted to JSON, for
#'   example an environment in a message given to [mcp_handle()] as a list.
#'   These errors also have the older class `mcplite_json_error`.
#' * `mcplite_error_handler`: a handler made by [mcp_handler()] cannot be
#'   used because it was saved and restored (for example with [saveRDS()]);
#'   handlers live in one R process only.
#' * `mcplite_error_session`: [mcp_session()] could not open the session (its
#'   directory is not private to the user, or the socket cannot be created),
#'   or a live R session cannot be reached.
#' * `mcplite_error_progress`: [mcp_progress()] was given something it cannot
#'   report: not a single finite number, or (while a client listens) a value
#'   not above the previous one.
#' * `mcplite_error_workers`: [mcp_server()] with `workers` above 1 cannot
#'   start its worker processes (an interactive session or a script read from
#'   standard input has no script to run again; a worker exited before it was
#'   ready), or they kept failing to start while it served.
#' * `mcplite_error_internal`: mcplite broke one of its own invariants. This
#'   is a bug; please report it.
#' * `mcplite_error_client`: a request made as an MCP client failed
#'   ([mcp_connect()], [mcp_call()], [mcp_list_tools()], ...). One of these
#'   classes comes first: `mcplite_error_tool` (the tool reported an error,
#'   `isError: true`), `mcplite_error_rpc` (the server answered with a
#'   JSON-RPC error), `mcplite_error_timeout` (no answer in time) or
#'   `mcplite_error_connection` (the server could not be started or reached,
#'   exited, or broke the protocol; a rejected TLS certificate also has
#'   `mcplite_error_tls`). The fields they carry are described in
#'   [mcp_call()]. A call to a tool hidden by the `ignore_tools` of a
#'   configuration file ([mcp_connect_config()]) is refused with
#'   `mcplite_error_ignored_tool`.
#'
#' Errors that only check arguments (for example from [tool()], the [type
#' helpers][type_string()] or the [content constructors][content_text()])
#' have the class `mcplite_error` alone.
#'
#' Errors inside tools while a server runs are not raised in the calling R
#' session: they become tool-level errors (`isError: true`) that the client
#' receives, as described in [mcp_server()].
#'
#' @name mcplite_error
#' @aliases mcplite_error_server_running mcplite_error_stdio mcplite_error_http
#'   mcplite_error_option mcplite_error_json mcplite_error_handler mcplite_error_session
#'   mcplite_error_progress mcplite_error_workers mcplite_error_internal mcplite_error_client
#'   mcplite_error_tool mcplite_error_rpc mcplite_error_timeout mcplite_error_connection
#'   mcplite_error_tls mcplite_error_ignored_tool
#' @seealso [conditionMessage()], [tryCatch()].
#' @examples
#' handler <- mcp_handler(list())
#'
#' # A value that cannot be converted to JSON
#' tryCatch(
#'   mcp_handle(handler, list(jsonrpc = "2.0", id = 1, method = "ping", params = new.env())),
#'   mcplite_error_json = function(e) conditionMessage(e)
#' )
#'
#' # An invalid option
#' old <- options(mcplite.json.na = "maybe")
#' tryCatch(mcp_handler(list()), mcplite_error_option = function(e) class(e))
#' options(old)
NULL

# Raise an error of class `mcplite_error` (plus any more specific classes in
# `class`, first). Messages name the offending argument in backticks and say
# what is expected.
# `fields` is a named list of further elements of the condition (the
# client's `code`, `status`, `server`, ...; RULES K7.1).
abort <- function(message, ..., class = NULL, call = NULL, fields = NULL) {
  cnd <- structure(
    class = c(class, "mcplite_error", "error", "condition"),
    c(list(message = paste0(message, ...), call = call), fields)
  )
  stop(cnd)
}

# The classes of an error of the given kind ("json", "option", "rpc", ...),
# most specific first, without "mcplite_error" itself (RULES R9.1, K7.1).
error_class <- function(kind) {
  switch(kind,
    argument = character(),
    json = c("mcplite_error_json", "mcplite_json_error"),
    tls = c("mcplite_error_tls", "mcplite_error_connection", "mcplite_error_client"),
    tool = , rpc = , timeout = , connection = c(paste0("mcplite_error_", kind), "mcplite_error_client"),
    paste0("mcplite_error_", kind)
  )
}

# The value a Rust entry point returned, or, when it returned the marker of
# an error (rust/mcplite-r/src/error.rs: a list of class
# "mcplite_bridge_error" with `kind`, `message` and `fields`), that error
# raised with the classes of its kind and its fields. The kind
# "interrupted" (the client consumed a user interrupt while it waited) is
# signalled again as the interrupt it was. Every wrapper in
# R/bridge-wrappers.R returns through this function.
bridge_value <- function(x) {
  if (inherits(x, "mcplite_bridge_error")) {
    if (identical(x[["kind"]], "interrupted")) {
      signal_interrupt()
    }
    abort(x[["message"]], class = error_class(x[["kind"]]), fields = x[["fields"]])
  }
  x
}

# Re-signal a user interrupt that the engine consumed while waiting: the
# same condition R signals, then a jump to the top level like R does.
signal_interrupt <- function() {
  cnd <- structure(class = c("interrupt", "condition"), list(message = "", call = NULL))
  signalCondition(cnd)
  invokeRestart("abort")
}
