#' Load the tools of a server script, for tests
#'
#' @description
#' `mcp_load_tools()` runs a server script the way `Rscript` would, but
#' without serving: every call to [mcp_server()] in it records the tools (and
#' instructions) it was given and returns at once, and the rest of the script
#' still runs. It returns those tools, ready for [mcp_handler()] and
#' [mcp_handle()] or to be called directly, so tests can use the script
#' itself rather than a copy of its tools.
#'
#' @details
#' The script is evaluated in a new environment whose parent is the global
#' environment, so its objects do not end up in your workspace. Both
#' `mcp_server(...)` and `mcplite::mcp_server(...)` are intercepted, wherever
#' they appear (the last line, inside `if`, inside a function the script
#' defines, or inside a package's function the script calls, such as a
#' `yourpackage::serve()` that ends with `mcplite::mcp_server(...)`). When
#' the script calls `mcp_server()` more than once, the last
#' call's tools are returned; when it never does, every tool the script
#' assigned to a variable is returned, in alphabetical order of the variable
#' names.
#'
#' Options the script sets with [options()] are put back when
#' `mcp_load_tools()` returns, so a script's `mcplite.json.digits` or `warn`
#' does not leak into the test session. Other global changes are not undone:
#' packages it attaches stay attached, and environment variables, the random
#' seed and the working directory stay as the script left them. Note that the
#' payload options apply when results are built and sent, so a test that
#' depends on the script's options must set them itself, for example with
#' `withr::local_options()`.
#'
#' @param script Path of the server script.
#' @return A named list of tools (names are the tool names), with the
#'   script's `instructions` in the attribute `"instructions"` (`NULL` when it
#'   gave none).
#' @seealso [mcp_handler()] and [mcp_handle()] to send requests to the tools,
#'   `vignette("write-tools")` for testing a server with testthat.
#' @examples
#' script <- tempfile(fileext = ".R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "options(mcplite.json.digits = I(6))",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\", name = \"add\",",
#'   "  arguments = list(x = type_number(), y = type_number()))",
#'   "mcp_server(add, instructions = \"Arithmetic.\")"
#' ), script)
#'
#' tools <- mcp_load_tools(script)
#' names(tools)
#' tools$add(2, 3)
#' getOption("mcplite.json.digits") # not changed by the script
#'
#' handler <- mcp_handler(tools, instructions = attr(tools, "instructions"))
#' mcp_handle(handler, list(
#'   jsonrpc = "2.0", id = 1, method = "tools/call",
#'   params = list(
#'     name = "add", arguments = list(x = 2, y = 3),
#'     `_meta` = list(
#'       "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
#'       "io.modelcontextprotocol/clientCapabilities" = list()
#'     )
#'   )
#' ))
#' @export
mcp_load_tools <- function(script) {
  check_required(script, "the path of a server script.")
  check_string(script, allow_empty = FALSE, what = "the path of a server script (a single string)")
  shown <- encodeString(script, quote = "\"")
  if (dir.exists(script)) {
    abort_arg("`script` must be a file, but ", shown, " is a directory.")
  }
  if (!file.exists(script)) {
    abort_arg("`script` must be an existing file, but ", shown, " does not exist.")
  }
  exprs <- tryCatch(
    parse(script, keep.source = FALSE, encoding = "UTF-8"),
    error = function(e) abort_arg("`script` (", shown, ") is not valid R code: ", conditionMessage(e))
  )

  served <- new.env(parent = emptyenv())
  served$calls <- list()
  # Other arguments (transport, session_tools, ...) do not change the tools.
  record_server <- function(tools, instructions = NULL, ...) {
    served$calls[[length(served$calls) + 1L]] <- list(
      tools = if (missing(tools)) NULL else tools,
      instructions = instructions
    )
    invisible(NULL)
  }
  env <- new.env(parent = globalenv())
  assign("mcp_server", record_server, envir = env)
  # Calls that reach mcplite's own mcp_server() (from a package's function,
  # say) are recorded too (load_recorder()).
  old_record <- loading$record
  loading$record <- record_server
  on.exit(loading$record <- old_record, add = TRUE)

  restore_options <- confine_options()
  on.exit(restore_options(), add = TRUE)
  for (i in seq_along(exprs)) {
    expr <- replace_server_calls(exprs[[i]], record_server)
    tryCatch(
      eval(expr, env),
      error = function(e) {
        abort("`script` (", shown, ") failed in its top-level expression ", i, ": ",
              conditionMessage(e))
      }
    )
  }

  if (length(served$calls) > 0L) {
    last <- served$calls[[length(served$calls)]]
    tools <- last$tools
    instructions <- last$instructions
    if (is_servable_tool(tools)) {
      tools <- list(tools)
    }
  } else {
    vars <- sort(ls(env))
    vars <- vars[vapply(vars, function(v) is_servable_tool(get(v, envir = env)), logical(1))]
    if (length(vars) == 0L) {
      abort_arg("`script` (", shown, ") defines no tools and never calls `mcp_server()`.")
    }
    tools <- mget(vars, envir = env)
    instructions <- NULL
  }
  if (is.list(tools) && !is.object(tools)) {
    names(tools) <- vapply(tools, tool_name_of, character(1))
  }
  attr(tools, "instructions") <- instructions
  tools
}

# While mcp_load_tools() runs a script: the function that records an
# mcp_server() call instead of serving (NULL otherwise).
loading <- new.env(parent = emptyenv())

load_recorder <- function() loading$record

tool_name_of <- function(x) {
  nm <- if (is_mcplite_tool(x)) {
    meta <- attr(x, "mcplite", exact = TRUE)
    if (is.list(meta)) meta[["name"]]
  } else if (is_ellmer_tooldef(x)) {
    attr(x, "name", exact = TRUE)
  }
  if (is_scalar_string(nm)) nm else ""
}

# `mcplite::mcp_server(...)` (or `:::`) anywhere in `x`, including inside
# function definitions, calls `replacement` instead.
replace_server_calls <- function(x, replacement) {
  if (is.call(x)) {
    head <- x[[1L]]
    if (is.call(head) && length(head) == 3L &&
      (identical(head[[1L]], as.name("::")) || identical(head[[1L]], as.name(":::"))) &&
      identical(head[[2L]], as.name("mcplite")) && identical(head[[3L]], as.name("mcp_server"))) {
      x[[1L]] <- replacement
    }
  }
  if (is.call(x) || (is.pairlist(x) && !is.null(x))) {
    for (i in seq_along(x)) {
      if (is.call(x[[i]]) || (is.pairlist(x[[i]]) && !is.null(x[[i]]))) {
        x[[i]] <- replace_server_calls(x[[i]], replacement)
      }
    }
  }
  x
}

# Snapshot the options; the returned function restores them, removing the
# ones that were added since.
confine_options <- function() {
  before <- options()
  function() {
    added <- setdiff(names(options()), names(before))
    if (length(added) > 0L) {
      options(structure(vector("list", length(added)), names = added))
    }
    changed <- names(before)[!vapply(names(before), function(nm) {
      identical(getOption(nm), before[[nm]])
    }, logical(1))]
    if (length(changed) > 0L) {
      options(before[changed])
    }
    invisible()
  }
}
