# The error classes of ?mcplite_error: every kind is raised with its own
# class in front of `mcplite_error`, through the one path from the Rust bridge
# (bridge_value() in R/conditions.R) or abort().

ping <- function(params) list(jsonrpc = "2.0", id = 1, method = "ping", params = params)

conditions_rscript <- function() file.path(R.home("bin"), "Rscript")

conditions_env <- function(...) {
  c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), ...)
}

test_that("abort() raises mcplite_error with the extra classes first", {
  err <- expect_error(abort("`x` must be ", "a number."), class = "mcplite_error")
  expect_s3_class(err, c("mcplite_error", "error", "condition"), exact = TRUE)
  expect_identical(conditionMessage(err), "`x` must be a number.")
  expect_null(conditionCall(err))
  err <- expect_error(abort("m", class = error_class("option")), class = "mcplite_error_option")
  expect_s3_class(err, c("mcplite_error_option", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_identical(error_class("json"), c("mcplite_error_json", "mcplite_json_error"))
})

test_that("bridge_value() raises the marker of a bridge error and passes anything else through", {
  marker <- structure(list(kind = "handler", message = "gone"), class = "mcplite_bridge_error")
  err <- expect_error(bridge_value(marker), "^gone$", class = "mcplite_error_handler")
  expect_s3_class(err, c("mcplite_error_handler", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_identical(bridge_value("{}"), "{}")
  expect_null(bridge_value(NULL))
  # a list that merely looks like a marker is a value
  look_alike <- list(kind = "json", message = "m")
  expect_identical(bridge_value(look_alike), look_alike)
})

test_that("mcplite_error_json: a value that cannot be converted to JSON", {
  handler <- mcp_handler(list())
  err <- expect_error(mcp_handle(handler, ping(new.env())), class = "mcplite_error_json")
  expect_s3_class(
    err, c("mcplite_error_json", "mcplite_json_error", "mcplite_error", "error", "condition"),
    exact = TRUE
  )
  expect_identical(conditionMessage(err), "No method asJSON S3 class: environment")
  # the older class still catches it
  expect_error(fixed_json(list(f = new.env())), class = "mcplite_json_error")
  expect_error(json_encode(1, auto_unbox = "yes"), "`auto_unbox`", class = "mcplite_error_json")
  expect_error(json_encode_raw(new.env()), "environment", class = "mcplite_error_json")
  expect_error(payload_json(structure(1, class = "foo")), "foo", class = "mcplite_error_json")
})

test_that("mcplite_error_option: an invalid mcplite.json.* option, wherever it is read", {
  withr::local_options(mcplite.json.na = "maybe")
  msg <- "`mcplite.json.na`"
  err <- expect_error(mcp_handler(list()), msg, fixed = TRUE, class = "mcplite_error_option")
  expect_s3_class(err, c("mcplite_error_option", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_error(mcp_server(list()), msg, fixed = TRUE, class = "mcplite_error_option")
  expect_error(tool_result(structured_content = list(a = 1)), msg, fixed = TRUE, class = "mcplite_error_option")
  expect_error(payload_json(1), msg, fixed = TRUE, class = "mcplite_error_option")
  expect_error(check_payload_options(), msg, fixed = TRUE, class = "mcplite_error_option")
})

test_that("mcplite_error_handler: a handler restored from a file", {
  echo <- tool(function(text) text, "Echo.", name = "echo", arguments = list(text = type_string()))
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(mcp_handler(echo), f)
  restored <- readRDS(f)
  err <- expect_error(mcp_handle(restored, ping(NULL)), "saved and restored", class = "mcplite_error_handler")
  expect_s3_class(err, c("mcplite_error_handler", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_match(conditionMessage(err), "`mcp_handler()`", fixed = TRUE)
  # not an external pointer at all
  forged <- structure(list(ptr = "x", spec = list(), instructions = NULL), class = "mcplite_handler")
  expect_error(mcp_handle(forged, ping(NULL)), class = "mcplite_error_handler")
})

test_that("mcplite_error_internal: a server spec the bridge cannot read", {
  err <- expect_error(engine_handler_new(list(), "0.0.0", NULL), class = "mcplite_error_internal")
  expect_s3_class(err, c("mcplite_error_internal", "mcplite_error", "error", "condition"), exact = TRUE)
  expect_identical(conditionMessage(err), "The handler could not be created: the server spec lacks `names`")
})

test_that("mcplite_error_server_running: mcp_server() inside a running server", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "nested <- tool(function() {",
    "  err <- tryCatch(mcp_server(list()), error = function(e) e)",
    "  paste(paste(class(err), collapse = ' '), conditionMessage(err), sep = '|')",
    "}, 'Starts a second server.', name = 'nested')",
    "mcp_server(list(nested))"
  ), script)
  input <- withr::local_tempfile(fileext = ".jsonl")
  writeLines(c(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nested","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  ), input)
  res <- processx::run(conditions_rscript(), c("--vanilla", script), stdin = input,
                       error_on_status = FALSE, timeout = 60, env = conditions_env())
  expect_identical(res$status, 0L)
  out <- jsonlite::parse_json(res$stdout)$result
  expect_false(out$isError)
  expect_identical(
    out$content[[1]]$text,
    paste0(
      "mcplite_error_server_running mcplite_error error condition|",
      "A server is already running in this process; `mcp_server()` cannot be started again until it returns."
    )
  )
})

test_that("mcplite_error_stdio: no file descriptor left for the protocol streams", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_not(nzchar(Sys.which("bash")) && file.exists("/dev/null"), "needs bash and /dev/null")
  # A low limit on open files, 60 of them taken before R starts and the rest by
  # connections: mcp_server() then cannot duplicate stdin and stdout.
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "echo <- tool(function(text) text, 'Echo.', name = 'echo', arguments = list(text = type_string()))",
    "cons <- list()",
    "repeat {",
    "  con <- suppressWarnings(tryCatch(file('/dev/null', 'r'), error = function(e) NULL))",
    "  if (is.null(con)) break",
    "  cons[[length(cons) + 1L]] <- con",
    "}",
    "err <- tryCatch(mcp_server(echo), error = function(e) e)",
    "cat(paste(class(err), collapse = ' '), conditionMessage(err), sep = '|')"
  ), script)
  cmd <- paste(
    "ulimit -n 170 && for fd in $(seq 110 169); do eval \"exec $fd</dev/null\"; done;",
    "exec", shQuote(conditions_rscript()), "--vanilla", shQuote(script)
  )
  res <- processx::run("bash", c("-c", cmd), error_on_status = FALSE, timeout = 60,
                       env = conditions_env(LC_ALL = "C.UTF-8", R_MAX_NUM_DLLS = "100"))
  parts <- strsplit(res$stdout, "|", fixed = TRUE)[[1]]
  expect_identical(parts[1], "mcplite_error_stdio mcplite_error error condition", info = res$stderr)
  expect_match(parts[2], "^The server could not run: cannot set up stdio: .*[Tt]oo many open files")
})
