# mcp_handle() helpers (R/handle.R): R lists as messages, and a tool's
# warnings and messages signalled to the caller with `signal = TRUE`.

call_request <- function(name, arguments = list(), meta = modern_meta()) {
  list(jsonrpc = "2.0", id = 1, method = "tools/call",
       params = list(name = name, arguments = arguments, `_meta` = meta))
}

result_of <- function(json) jsonlite::fromJSON(json, simplifyVector = FALSE)$result

test_that("an empty list() is an empty object where MCP needs an object", {
  now <- tool(function() "ok", "Says ok.", name = "now")
  # arguments = list() and clientCapabilities = list() used to be sent as []
  res <- result_of(mcp_handle(now, call_request("now")))
  expect_false(res$isError)
  expect_identical(res$content[[1]]$text, "ok")

  s <- mcp_handler(now)
  init <- mcp_handle(s, list(jsonrpc = "2.0", id = 1, method = "initialize", params = list(
    protocolVersion = "2025-06-18",
    capabilities = list(roots = list(), sampling = list()),
    clientInfo = list(name = "t", version = "1")
  )))
  expect_identical(result_of(init)$protocolVersion, "2025-06-18")
  expect_null(mcp_handle(s, list(jsonrpc = "2.0", method = "notifications/initialized", params = list())))
  res <- mcp_handle(s, list(jsonrpc = "2.0", id = 2, method = "tools/call",
                            params = list(name = "now", arguments = list(), `_meta` = list())))
  expect_identical(result_of(res)$content[[1]]$text, "ok")
})

test_that("the conversion only touches the protocol's object positions", {
  expect_identical(
    fixed_json(request_objects(list(
      jsonrpc = "2.0", id = 1, method = "tools/call",
      params = list(
        name = "t",
        arguments = list(values = list(), nested = list(capabilities = list())),
        `_meta` = list(
          "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities" = list(experimental = list()),
          other = list()
        )
      )
    ))),
    paste0(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",',
      '"arguments":{"values":[],"nested":{"capabilities":[]}},',
      '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
      '"io.modelcontextprotocol/clientCapabilities":{"experimental":{}},"other":[]}}}'
    )
  )
  expect_identical(fixed_json(request_objects(list(jsonrpc = "2.0", id = 1, method = "ping", params = list()))),
                   '{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}')
  # nothing to convert, nothing changed (including a NULL params member)
  msg <- list(jsonrpc = "2.0", id = 1, method = "ping", params = NULL)
  expect_identical(request_objects(msg), msg)
  msg <- list(jsonrpc = "2.0", id = 1, method = "ping")
  expect_identical(request_objects(msg), msg)
  # an object written explicitly stays one; so does a non-empty array
  obj <- structure(list(), names = character())
  expect_identical(as_empty_object(obj), obj)
  expect_identical(as_empty_object(list(1)), list(1))
})

# Warnings and messages --------------------------------------------------

noisy <- tool(function(x = 1) {
  message("starting with ", x)
  warning("x is suspicious")
  message("done")
  paste(deparse(sys.call()), collapse = "")
}, "Noisy.", name = "noisy", arguments = list(x = type_number(required = FALSE)))

test_that("signal = TRUE hands the tool's warnings and messages to the caller", {
  expect_warning(
    expect_message(
      res <- mcp_handle(noisy, call_request("noisy", list(x = 2)), signal = TRUE),
      "starting with 2"
    ),
    "x is suspicious"
  )
  res <- result_of(res)
  expect_false(res$isError)
  # the tool still sees its call as `noisy(x = 2L)`
  expect_identical(res$content[[1]]$text, "noisy(x = 2L)")

  # in order, with their calls, and the session's tools restored afterwards
  seen <- list()
  s <- mcp_handler(noisy)
  withCallingHandlers(
    mcp_handle(s, call_request("noisy"), signal = TRUE),
    warning = function(w) {
      seen[[length(seen) + 1L]] <<- w
      invokeRestart("muffleWarning")
    },
    message = function(m) {
      seen[[length(seen) + 1L]] <<- m
      invokeRestart("muffleMessage")
    }
  )
  expect_identical(vapply(seen, function(c) class(c)[1L], ""),
                   c("simpleMessage", "simpleWarning", "simpleMessage"))
  expect_identical(vapply(seen, conditionMessage, ""), c("starting with 1\n", "x is suspicious", "done\n"))
  expect_identical(deparse(conditionCall(seen[[2]])), "noisy()")
  expect_identical(get("noisy", envir = s$spec$tool_env), s$spec$funs[[1]])
})

test_that("without signal, nothing reaches the caller's handlers (stderr only)", {
  caught <- 0L
  stderr <- capture.output(type = "message", withCallingHandlers(
    res <- mcp_handle(noisy, call_request("noisy")),
    warning = function(w) caught <<- caught + 1L,
    message = function(m) caught <<- caught + 1L
  ))
  expect_identical(caught, 0L)
  expect_identical(stderr, c("starting with 1", "Warning in noisy() : x is suspicious", "done"))
  expect_identical(result_of(res)$content[[1]]$text, "noisy()")
})

test_that("signal = TRUE keeps warn = 2 turning warnings into tool errors", {
  withr::local_options(warn = 2)
  expect_message(
    res <- mcp_handle(noisy, call_request("noisy"), signal = TRUE),
    "starting with 1"
  )
  res <- result_of(res)
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "x is suspicious")
})

test_that("warnings before an error are still signalled; the error stays a tool error", {
  fails <- tool(function() {
    warning("first this")
    stop("then this")
  }, "Fails.", name = "fails")
  expect_warning(res <- mcp_handle(fails, call_request("fails"), signal = TRUE), "first this")
  res <- result_of(res)
  expect_true(res$isError)
  expect_identical(res$content[[1]]$text, "then this")
})

test_that("signal must be TRUE or FALSE", {
  expect_snapshot(error = TRUE, {
    mcp_handle(noisy, call_request("noisy"), signal = NA)
  })
})
