#' Connections closed when a test ends
#'
#' `local_mcp_connect()` and `local_mcp_connect_script()` are
#' [mcp_connect()] and [mcp_connect_script()] whose connection is closed
#' (with [mcp_close()]) when the function or test that called them ends, as
#' `withr::local_*()` functions do. In a testthat test:
#'
#' ```
#' test_that("add adds", {
#'   mem <- local_mcp_connect(tools = add)
#'   expect_equal(mcp_call(mem, "add", list(x = 1, y = 2))$structured_content, 3)
#' })
#' ```
#'
#' @param ... Arguments for [mcp_connect()] or [mcp_connect_script()].
#' @param .local_envir The environment whose end closes the connection:
#'   by default the caller's (the test's).
#' @return The connection, as [mcp_connect()] returns it.
#' @seealso `vignette("write-tools")`, "Test your tools".
#' @export
#' @examples
#' add <- tool(function(x, y) x + y, "Add two numbers.",
#'   arguments = list(x = type_number(), y = type_number()), name = "add")
#' sum_of <- function(x, y) {
#'   mem <- local_mcp_connect(tools = add)
#'   mcp_call(mem, "add", list(x = x, y = y))$content[[1]]$text
#' }
#' sum_of(1, 2) # the connection is closed again
local_mcp_connect <- function(..., .local_envir = parent.frame()) {
  conn <- mcp_connect(...)
  defer_close(conn, .local_envir)
  conn
}

#' @rdname local_mcp_connect
#' @export
local_mcp_connect_script <- function(..., .local_envir = parent.frame()) {
  conn <- mcp_connect_script(...)
  defer_close(conn, .local_envir)
  conn
}

# RULES K9.5: close `conn` when `envir` ends (on.exit() run in that frame).
defer_close <- function(conn, envir, call = caller_env()) {
  if (!is.environment(envir)) {
    mcp_close(conn)
    abort_arg("`.local_envir` must be an environment, not ", describe(envir), ".", call = call)
  }
  thunk <- as.call(list(function() invisible(mcp_close(conn))))
  do.call(base::on.exit, list(thunk, add = TRUE, after = FALSE), envir = envir)
  invisible(conn)
}
