# An error signalled in a tool ends the call at once, as under
# tryCatch(error = ) (src/tool-unwind.c): code that signals an error and
# prints it when nobody handled it must find it handled.

unwind_call <- function(tools, name) {
  res <- mcp_handle(tools, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = name, `_meta` = list(
      "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities" = structure(list(), names = character())
    )
  )))
  jsonlite::fromJSON(res, simplifyVector = FALSE)$result
}

# Signals a classed error and, like rlang::abort(), prints its own report
# (with a custom format() method) when the signal returns unhandled.
loud_abort <- function(message) {
  cnd <- structure(
    class = c("loud_error", "error", "condition"),
    list(message = message, call = NULL)
  )
  signalCondition(cnd)
  cat(format(cnd), "\nBacktrace:\n  1. loud_abort()\n", file = stderr())
  stop(structure(class = c("loud_fallback", "condition"), list(message = "", call = NULL)))
}
format.loud_error <- function(x, ...) paste0("<loud_error> ", conditionMessage(x))

test_that("a self-reporting error is handled, reported once, not printed", {
  loud <- tool(function() loud_abort("custom failure"), "Loud.", name = "loud")
  err <- capture.output(res <- unwind_call(loud, "loud"), type = "message")
  expect_identical(err, character())
  expect_true(res$isError)
  expect_identical(res$content[[1]]$text, "custom failure")
})

test_that("rlang::abort() inside a tool prints nothing and reports its message", {
  skip_if_not_installed("rlang")
  tidy <- tool(function() rlang::abort(c("Can't compute.", i = "Try again.")), "Tidy.", name = "tidy")
  err <- capture.output(res <- unwind_call(tidy, "tidy"), type = "message")
  expect_identical(err, character())
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "Can't compute.", fixed = TRUE)
  expect_match(res$content[[1]]$text, "Try again.", fixed = TRUE)
})

test_that("a bare signalCondition() of an error ends the call, like tryCatch(error =)", {
  signals <- tool(function() {
    signalCondition(simpleError("only signalled"))
    "not reached"
  }, "Signals.", name = "signals")
  res <- unwind_call(signals, "signals")
  expect_true(res$isError)
  expect_identical(res$content[[1]]$text, "only signalled")
})

test_that("on.exit() code runs and errors handled inside the tool stay handled", {
  log <- character()
  cleanup <- tool(function() {
    on.exit(log <<- c(log, "cleaned up"))
    stop("boom")
  }, "Cleans up.", name = "cleanup")
  res <- unwind_call(cleanup, "cleanup")
  expect_identical(log, "cleaned up")
  expect_identical(res$content[[1]]$text, "boom")

  handled <- tool(function() {
    a <- tryCatch(stop("a"), error = function(e) "caught")
    b <- try(loud_abort("b"), silent = TRUE)
    c <- withCallingHandlers(
      withRestarts(stop("c"), skip = function() "restarted"),
      error = function(e) invokeRestart("skip")
    )
    paste(a, class(b), c)
  }, "Handles.", name = "handled")
  err <- capture.output(res <- unwind_call(handled, "handled"), type = "message")
  expect_false(res$isError)
  expect_identical(res$content[[1]]$text, "caught try-error restarted")
  # try() caught loud_abort() at its signal: nothing was printed either
  expect_identical(err, character())
})
