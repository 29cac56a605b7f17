# Helpers for mcp_handle() (R/server.R): how an R list becomes a JSON-RPC
# message, and how a tool's warnings and messages reach the caller of an
# in-process call when it asks for them (`signal = TRUE`).

#' @rdname mcp_handler
#' @param signal `FALSE` (the default) or `TRUE`. With `TRUE`, the warnings
#'   and messages that tools raise during this call are not printed; once the
#'   response is ready, `mcp_handle()` signals them again, in order, as
#'   ordinary R conditions, so that [testthat::expect_warning()],
#'   [testthat::expect_message()], [withCallingHandlers()] or
#'   [suppressWarnings()] see them. When a warning becomes an error
#'   (`options(warn = 2)`) it stays a tool error.
#' @section Messages given as R lists:
#' A list `message` is converted to JSON with the fixed encoding: named lists
#' become objects and unnamed lists arrays. An empty `list()` is an array
#' (`[]`), except where MCP only allows an object: `params`,
#' `params$arguments`, `params$capabilities` and each of its members, and
#' `params$_meta` and each of its members whose name ends in `Capabilities`
#' (such as `io.modelcontextprotocol/clientCapabilities`). There `list()` is
#' sent as `{}`. Anywhere else, write an empty object as
#' `structure(list(), names = character())`.
#'
#' @section Warnings and messages in tests:
#' While a tool runs, its warnings are printed to standard error as they
#' happen and its messages go to standard error too; neither is part of the
#' response. To test them, call `mcp_handle(..., signal = TRUE)`: the
#' response is the same, and the tool's warnings and messages are signalled
#' from `mcp_handle()` after the call, for example
#' ```
#' test_that("mean_of warns about missing values", {
#'   handler <- mcp_handler(mean_of)
#'   expect_warning(
#'     response <- mcp_handle(handler, request, signal = TRUE),
#'     "missing values"
#'   )
#'   expect_match(response, '"isError":false', fixed = TRUE)
#' })
#' ```
#' @name mcp_handler
NULL

# The R list given to mcp_handle() as a message, with an empty unnamed list()
# turned into an empty named list ({}) where the protocol only allows an
# object (see the section above).
request_objects <- function(message) {
  if (!"params" %in% names(message)) {
    return(message)
  }
  params <- as_empty_object(message[["params"]])
  if (is.null(params)) {
    return(message)
  }
  if (is.list(params) && !is.object(params) && length(params) > 0L) {
    for (key in intersect(c("arguments", "capabilities", "_meta"), names(params))) {
      params[[key]] <- as_empty_object(params[[key]])
    }
    if ("capabilities" %in% names(params)) {
      params[["capabilities"]] <- members_as_empty_objects(params[["capabilities"]])
    }
    meta <- params[["_meta"]]
    if (is.list(meta) && !is.object(meta) && length(meta) > 0L && !is.null(names(meta))) {
      for (i in grep("Capabilities$", names(meta))) {
        meta[[i]] <- members_as_empty_objects(as_empty_object(meta[[i]]))
      }
      params[["_meta"]] <- meta
    }
  }
  message[["params"]] <- params
  message
}

as_empty_object <- function(x) {
  if (is.list(x) && !is.object(x) && length(x) == 0L && is.null(names(x))) {
    return(structure(list(), names = character()))
  }
  x
}

# Each member of a named list that is an empty unnamed list becomes {}.
members_as_empty_objects <- function(x) {
  if (!is.list(x) || is.object(x) || length(x) == 0L || is.null(names(x))) {
    return(x)
  }
  for (i in seq_along(x)) {
    if (!is.null(x[[i]])) {
      x[[i]] <- as_empty_object(x[[i]])
    }
  }
  x
}

# One line through the handler's engine. With `signal`, the tools' warnings
# and messages are collected while it runs and signalled again afterwards.
handle_line <- function(handler, line, signal = FALSE) {
  if (!isTRUE(signal)) {
    return(engine_handler_handle(handler$ptr, handler$spec, line))
  }
  sink <- new.env(parent = emptyenv())
  sink$conditions <- list()
  restore <- collect_tool_conditions(handler$spec, sink)
  response <- tryCatch(
    engine_handler_handle(handler$ptr, handler$spec, line),
    finally = restore()
  )
  for (cnd in sink$conditions) {
    if (inherits(cnd, "warning")) {
      warning(cnd)
    } else {
      message(cnd)
    }
  }
  response
}

# Tool calls are evaluated as `<name>(<arguments>)` in `spec$tool_env` (see
# tool_env() in R/server.R). For the duration of one call, bind each name to
# a function that evaluates that same call with the real tool, under calling
# handlers that record warnings and messages and muffle them. The tool still
# sees `sys.call()` as `<name>(<arguments>)`. Returns a function that puts the
# tools back.
collect_tool_conditions <- function(spec, sink) {
  env <- spec$tool_env
  names <- spec$names
  # `...` and `..1`-style names are called through the function itself.
  names <- names[!grepl("^\\.\\.(\\.|[0-9]+)$", names)]
  originals <- mget(names, envir = env, inherits = FALSE, ifnotfound = list(NULL))
  for (nm in names) {
    if (is.function(originals[[nm]])) {
      assign(nm, collecting_tool(nm, originals[[nm]], sink), envir = env)
    }
  }
  function() {
    for (nm in names) {
      if (is.function(originals[[nm]])) {
        assign(nm, originals[[nm]], envir = env)
      }
    }
  }
}

collecting_tool <- function(name, fun, sink) {
  inner <- new.env(parent = globalenv())
  assign(name, fun, envir = inner)
  record <- function(cnd) {
    sink$conditions[[length(sink$conditions) + 1L]] <- cnd
  }
  function(...) {
    call <- sys.call()
    withCallingHandlers(
      eval(call, inner),
      warning = function(w) {
        # warn >= 2 makes warnings errors (tool errors); warn < 0 drops them.
        warn <- getOption("warn", 0)
        if (is.numeric(warn) && length(warn) == 1L && !is.na(warn) && warn >= 0 && warn < 2) {
          record(w)
          invokeRestart("muffleWarning")
        }
      },
      message = function(m) {
        record(m)
        invokeRestart("muffleMessage")
      }
    )
  }
}
