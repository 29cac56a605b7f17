# Errors raised by mcplite: one helper that raises them (abort(); abort_arg()
# for an argument's error, warn() for a warning), one class hierarchy
# (documented below), and the conversion of the errors the Rust bridge returns
# (bridge_value()). The argument checks built on them are in R/check.R.

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
#' * `mcplite_error_live`: a tool call routed to a live R session could not
#'   run there or failed there (the session is busy, went away, or refused
#'   the call), or a live-session tool was given an argument it cannot use;
#'   its message is the tool error the client reads.
#' * `mcplite_error_progress`: [mcp_progress()] was given something it cannot
#'   report: not a single finite number, or (while a client listens) a value
#'   not above the previous one.
#' * `mcplite_error_ask`: [mcp_elicit()] or [mcp_sample()] got no answer:
#'   no served call runs, the client cannot be asked (it did not declare the
#'   capability), the call was cancelled, the client refused, or the time
#'   ran out.
#' * `mcplite_error_resources`: [mcp_resource_set()] or
#'   [mcp_resource_remove()] was called outside a tool of a running server
#'   that has resources.
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
#' * `mcplite_error_argument`: an argument of an exported function is not what
#'   it accepts (for example from [tool()], the [type helpers][type_string()]
#'   or the [content constructors][content_text()]). The message names the
#'   argument in backticks; it may come with a more specific class
#'   (`mcplite_error_progress`).
#'
#' The condition's call ([conditionCall()]) is your call of the mcplite
#' function that raised it, so R prints `Error in type_string(required = NA)
#' : ...`, even when the check ran inside mcplite.
#'
#' Warnings that mcplite signals itself have the class `mcplite_warning`,
#' with `mcplite_warning_client` (the MCP client left out or changed
#' something a server sent, or [mcp_connect_config()] skipped a server with
#' `on_error = "warn"`) or `mcplite_warning_insecure` ([mcp_client_config()]
#' with a plain `http://` URL to another machine) in front.
#'
#' Errors inside tools while a server runs are not raised in the calling R
#' session: they become tool-level errors (`isError: true`) that the client
#' receives, as described in [mcp_server()].
#'
#' @name mcplite_error
#' @aliases mcplite_error_argument mcplite_warning mcplite_warning_client mcplite_warning_insecure
#'   mcplite_error_server_running mcplite_error_stdio mcplite_error_http
#'   mcplite_error_option mcplite_error_json mcplite_error_handler mcplite_error_session mcplite_error_live
#'   mcplite_error_progress mcplite_error_ask mcplite_error_workers mcplite_error_internal mcplite_error_client
#'   mcplite_error_tool mcplite_error_rpc mcplite_error_timeout mcplite_error_connection
#'   mcplite_error_tls mcplite_error_ignored_tool mcplite_error_resources
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
# what is expected. `call` is the frame the error comes from (by default
# abort()'s caller): the condition's call is the user's call of the exported
# function that frame runs in (user_call()), so that R prints
# "Error in mcp_server(...) :". A call may also be given as is, or NULL for
# none. `fields` is a named list of further elements of the condition (the
# client's `code`, `status`, `server`, ...; RULES K7.1). RULES R9.
abort <- function(message, ..., class = NULL, call = parent.frame(), fields = NULL) {
  cnd <- structure(
    class = c(class, "mcplite_error", "error", "condition"),
    c(list(message = paste0(message, ...), call = condition_call(call)), fields)
  )
  raise(cnd)
}

# Raise the error `cnd` as rlang does. Handlers (tryCatch(), try(),
# withCallingHandlers(), testthat, a server's containment) see `cnd` itself.
# If none takes it, R's report is written here: "Error in `mcp_server()`:
# <message>", naming the function instead of R's whole call and the chain of
# mcplite's internal calls R adds under Rscript, or "Error: <message>" without
# a call; then R stops with its own report switched off (nothing is written
# while `show.error.messages` is FALSE, as while a server runs its tools). A
# condition already raised can be raised again with it (RULES R9.2, S10.1).
raise <- function(cnd) {
  signalCondition(cnd)
  message <- conditionMessage(cnd)
  if (!isFALSE(getOption("show.error.messages"))) {
    call <- conditionCall(cnd)
    head <- if (is.call(call)) call_name(call)
    cat(if (is.null(head)) "Error: " else paste0("Error in `", head, "()`: "), message, "\n",
        sep = "", file = stderr())
  }
  old <- options(show.error.messages = FALSE)
  on.exit(options(old))
  # Not of class "error": the handlers for errors have seen `cnd` already.
  stop(structure(class = c("mcplite_error_reported", "condition"), list(message = message, call = NULL)))
}

# The name of the function a call calls: `f` for f(...) and pkg::f(...), NULL
# for a function called as a value.
call_name <- function(call) {
  head <- call[[1L]]
  if (is.call(head) && length(head) == 3L && is.symbol(head[[1L]]) && as.character(head[[1L]]) %in% c("::", ":::")) {
    head <- head[[3L]]
  }
  if (is.symbol(head)) as.character(head)
}

# The error of a bad argument (RULES R9.1, R9.2): abort() with the class
# `mcplite_error_argument`. The check_*() helpers of R/check.R raise it; a
# check they do not cover calls it directly.
abort_arg <- function(message, ..., class = NULL, call = parent.frame()) {
  abort(message, ..., class = c(class, "mcplite_error_argument"), call = call)
}

# Signal a warning of class `mcplite_warning` (plus `class`, first), with the
# user's call as abort() finds it (RULES R9.1).
warn <- function(message, ..., class = NULL, call = parent.frame()) {
  cnd <- structure(
    class = c(class, "mcplite_warning", "warning", "condition"),
    list(message = paste0(message, ...), call = condition_call(call))
  )
  warning(cnd)
}

condition_call <- function(call) {
  if (is.environment(call)) user_call(call) else call
}

# The call the user made that led to the frame `env`: walking out from
# `env` through the frames that called it, the first frame of an exported
# mcplite function that mcplite did not call itself (mcp_server() calling
# tool() is mcp_server()'s call). NULL when there is none: code the engine
# runs (a tool a server calls) or a frame no longer on the stack.
user_call <- function(env) {
  frames <- sys.frames()
  n <- 0L
  for (i in rev(seq_along(frames))) {
    if (identical(frames[[i]], env)) {
      n <- i
      break
    }
  }
  ns <- environment(user_call)
  parents <- sys.parents()
  found <- 0L
  while (n > 0L) {
    # A function called in an environment that is no frame (the engine calls
    # tools in one) has, for R, a parent at or inside itself: none here.
    parent <- if (parents[[n]] < n) parents[[n]] else 0L
    if (is_exported_frame(n, ns)) {
      found <- n
      if (!is_mcplite_frame(parent, ns)) {
        break
      }
    }
    n <- parent
  }
  if (found == 0L) NULL else sys.call(found)
}

# Whether frame `n` runs an exported function of the namespace `ns`, called
# by its name (`f(...)`, `mcplite::f(...)`) or as a value (do.call()).
is_exported_frame <- function(n, ns) {
  fn <- sys.function(n)
  if (!identical(environment(fn), ns)) {
    return(FALSE)
  }
  exports <- getNamespaceExports(ns)
  name <- call_name(sys.call(n))
  if (!is.null(name)) {
    return(name %in% exports && identical(fn, get0(name, envir = ns, inherits = FALSE)))
  }
  for (name in exports) {
    if (identical(fn, get0(name, envir = ns, inherits = FALSE))) {
      return(TRUE)
    }
  }
  FALSE
}

# Whether frame `n` runs a function of mcplite (one defined in its namespace
# or inside one of its functions).
is_mcplite_frame <- function(n, ns) {
  if (n <= 0L) {
    return(FALSE)
  }
  env <- environment(sys.function(n))
  !is.null(env) && identical(topenv(env), ns)
}

# The classes of an error of the given kind ("json", "option", "rpc", ...),
# most specific first, without "mcplite_error" itself (RULES R9.1, K7.1).
error_class <- function(kind) {
  switch(kind,
    argument = "mcplite_error_argument",
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
