# mcp_trace_context(), mcp_trace_env() and child processes (RULES T9),
# through in-process handlers; MCPLITE_LOG through a real stdio server.
# Sampling is switched off so nothing is exported (the span context still
# propagates); exporters are tested end to end in tests/suites/*-telemetry.sh.

remote_tp <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

ctx_tool <- tool(
  function() {
    # What a child process started with mcp_trace_env() in its environment
    # sees ("<unset>" when the variable is not set at all).
    child <- function(v) {
      e <- mcp_trace_env()
      script <- sprintf('printf %%s "${%s-<unset>}"', v)
      out <- system2("sh", c("-c", shQuote(script)), env = sprintf("%s=%s", names(e), shQuote(e)), stdout = TRUE)
      if (length(out) == 0L) "" else out
    }
    jsonlite::toJSON(list(
      ctx = as.list(mcp_trace_context()),
      tenv = as.list(mcp_trace_env()),
      env_tp = Sys.getenv("TRACEPARENT", "<unset>"),
      env_ts = Sys.getenv("TRACESTATE", "<unset>"),
      env_bg = Sys.getenv("BAGGAGE", "<unset>"),
      child = child("TRACEPARENT"),
      child_ts = child("TRACESTATE"),
      child_bg = child("BAGGAGE")
    ), auto_unbox = TRUE)
  },
  name = "ctx",
  description = "Report the trace context seen by the tool."
)

seen_by_tool <- function(session, id, meta = "") {
  res <- jsonlite::fromJSON(mcp_handle(session, modern_call("ctx", "{}", id, meta)), simplifyVector = FALSE)
  expect_false(res$result$isError)
  jsonlite::fromJSON(res$result$content[[1]]$text, simplifyVector = FALSE)
}

test_that("mcp_trace_context() is NULL and mcp_trace_env() empty outside a tool call", {
  expect_null(mcp_trace_context())
  expect_identical(mcp_trace_env(), structure(character(), names = character()))
})

test_that("with tracing off, tools see no context and children inherit the environment", {
  withr::local_envvar(
    OTEL_TRACES_EXPORTER = NA, OTEL_R_TRACES_EXPORTER = NA,
    TRACEPARENT = "outer-value", TRACESTATE = NA
  )
  s <- mcp_handler(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s"', remote_tp))
  expect_length(seen$ctx, 0)
  expect_length(seen$tenv, 0)
  expect_equal(seen$env_tp, "outer-value")
  expect_equal(seen$child, "outer-value")
})

test_that("with tracing on, the call's span context reaches R and child processes; the server's environment is untouched", {
  withr::local_envvar(
    OTEL_R_TRACES_EXPORTER = "stderr", OTEL_TRACES_SAMPLER = "always_off",
    TRACEPARENT = NA, TRACESTATE = "previous=1"
  )
  s <- mcp_handler(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s","tracestate":"vendor=abc"', remote_tp))
  tp <- seen$ctx$traceparent
  # Same trace as the client's, a new span id (the server span), sampling off.
  expect_match(tp, "^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$")
  expect_false(grepl("00f067aa0ba902b7", tp, fixed = TRUE))
  expect_equal(seen$ctx$tracestate, "vendor=abc")
  expect_named(seen$ctx, c("traceparent", "tracestate"))
  expect_equal(seen$tenv, list(TRACEPARENT = tp, TRACESTATE = "vendor=abc", BAGGAGE = ""))
  # The child process continues the trace ...
  expect_equal(seen$child, tp)
  expect_equal(seen$child_ts, "vendor=abc")
  # ... and the server's own environment never changed (RULES T9).
  expect_equal(seen$env_tp, "<unset>")
  expect_equal(seen$env_ts, "previous=1")
  expect_equal(Sys.getenv("TRACEPARENT", NA), NA_character_)
  expect_equal(Sys.getenv("TRACESTATE"), "previous=1")
  expect_null(mcp_trace_context())

  # Without a client context: a fresh trace, no tracestate (the child's
  # inherited one is replaced by an empty value), a new span per call.
  a <- seen_by_tool(s, 2)
  b <- seen_by_tool(s, 3)
  expect_match(a$ctx$traceparent, "^00-[0-9a-f]{32}-[0-9a-f]{16}-00$")
  expect_named(a$ctx, "traceparent")
  expect_equal(a$child_ts, "")
  expect_false(identical(a$ctx$traceparent, b$ctx$traceparent))
  # Malformed context: ignored, a fresh trace.
  m <- seen_by_tool(s, 4, ',"traceparent":"00-XYZ"')
  expect_false(grepl("4bf92f3577b34da6a3ce929d0e0e4736", m$ctx$traceparent, fixed = TRUE))
})

test_that("suppressing the mcplite scope switches the context off", {
  withr::local_envvar(
    OTEL_R_TRACES_EXPORTER = "stderr", OTEL_R_SUPPRESS_SCOPES = "mcplite",
    TRACEPARENT = NA
  )
  s <- mcp_handler(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s"', remote_tp))
  expect_length(seen$ctx, 0)
  expect_length(seen$tenv, 0)
  expect_equal(seen$child, "<unset>")
})

test_that("client baggage reaches mcp_trace_context(), mcp_trace_env() and the child, not the server's environment", {
  withr::local_envvar(
    OTEL_R_TRACES_EXPORTER = "stderr", OTEL_TRACES_SAMPLER = "always_off",
    TRACEPARENT = NA, TRACESTATE = NA, BAGGAGE = "outer=1"
  )
  s <- mcp_handler(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(
    ',"traceparent":"%s","baggage":"userId=alice,serverNode=DF%%2028"', remote_tp
  ))
  members <- sort(strsplit(seen$ctx$baggage, ",")[[1]])
  expect_equal(members, c("serverNode=DF%2028", "userId=alice"))
  expect_named(seen$ctx, c("traceparent", "baggage"))
  expect_equal(seen$tenv$BAGGAGE, seen$ctx$baggage)
  expect_equal(seen$child_bg, seen$ctx$baggage)
  expect_equal(seen$env_bg, "outer=1")
  expect_equal(Sys.getenv("BAGGAGE"), "outer=1")

  # Baggage without a traceparent still arrives; other shapes are ignored
  # (and the child's inherited BAGGAGE is replaced by an empty value).
  only <- seen_by_tool(s, 2, ',"baggage":"k=v"')
  expect_equal(only$ctx$baggage, "k=v")
  bad <- seen_by_tool(s, 3, ',"baggage":["k=v"]')
  expect_null(bad$ctx$baggage)
  expect_equal(bad$child_bg, "")
})

test_that("with tracing off, baggage is not read", {
  withr::local_envvar(OTEL_TRACES_EXPORTER = NA, OTEL_R_TRACES_EXPORTER = NA, BAGGAGE = NA)
  s <- mcp_handler(ctx_tool)
  seen <- seen_by_tool(s, 1, ',"baggage":"k=v"')
  expect_length(seen$ctx, 0)
  expect_equal(seen$child_bg, "<unset>")
})

test_that("MCPLITE_LOG=debug logs every message on stderr and leaves stdout to the protocol", {
  skip_if_not_installed("processx")
  skip_on_cran()
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "echo <- tool(function(text) paste('echo:', text), name = 'echo',",
    "  description = 'Echo.', arguments = list(text = type_string('Text.')))",
    "mcp_server(echo)"
  ), script)
  secret <- "s3cr3t-log-argument"
  lines <- c(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    sprintf('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}', secret),
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
  )
  input <- withr::local_tempfile()
  writeLines(lines, input)
  run <- function(level) {
    env <- c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
    env <- c(env, OTEL_TRACES_EXPORTER = "none", OTEL_METRICS_EXPORTER = "none")
    if (!is.na(level)) env <- c(env, MCPLITE_LOG = level)
    processx::run(
      file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
      stdin = input, env = env, error_on_status = FALSE, timeout = 60
    )
  }
  res <- run("debug")
  expect_equal(res$status, 0L)
  # stdout: exactly the four responses, nothing else.
  out <- strsplit(res$stdout, "\n")[[1]]
  expect_length(out, 4)
  ids <- vapply(out, function(l) jsonlite::fromJSON(l)$id, numeric(1), USE.NAMES = FALSE)
  expect_equal(ids, c(1, 2, 3, 4))
  err <- strsplit(res$stderr, "\n")[[1]]
  log <- grep("mcplite:", err, value = TRUE, fixed = TRUE)
  expect_length(grep(" received ", log, fixed = TRUE), 5)
  expect_length(grep(" (answered|handled) ", log), 5)
  expect_true(any(grepl('answered method="tools/list" id="2".*version="2025-06-18".*outcome="ok"', log)))
  expect_true(any(grepl('received method="tools/call" id="3" tool="echo" known_tool=true era="legacy"', log, fixed = TRUE)))
  expect_true(any(grepl('outcome="error" code=-32602 error="Invalid params: unknown tool"', log, fixed = TRUE)))
  expect_true(any(grepl("logging on spans=\"off\" metrics=\"off\"", log)))
  expect_false(grepl(secret, res$stderr, fixed = TRUE))

  # info: answers only. Unset: no log line at all, same responses.
  info <- run("info")
  expect_equal(info$stdout, res$stdout)
  expect_length(grep(" received ", info$stderr, fixed = TRUE), 0)
  expect_length(grep(" answered ", strsplit(info$stderr, "\n")[[1]], fixed = TRUE), 4)
  quiet <- run(NA)
  expect_equal(quiet$stdout, res$stdout)
  expect_false(grepl("mcplite: (received|answered)", quiet$stderr))
  expect_false(grepl("answered", quiet$stderr, fixed = TRUE))
})

test_that("an unknown MCPLITE_LOG value warns once and logs nothing", {
  skip_if_not_installed("processx")
  skip_on_cran()
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c("library(mcplite)", "mcp_server(list())"), script)
  input <- withr::local_tempfile()
  writeLines('{"jsonrpc":"2.0","id":1,"method":"ping"}', input)
  res <- processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
    stdin = input, error_on_status = FALSE, timeout = 60,
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), MCPLITE_LOG = "loud")
  )
  expect_equal(res$status, 0L)
  expect_equal(jsonlite::fromJSON(res$stdout)$id, 1)
  warn <- grep("MCPLITE_LOG", strsplit(res$stderr, "\n")[[1]], value = TRUE)
  expect_length(warn, 1)
  expect_match(warn, '"loud"', fixed = TRUE)
  expect_false(grepl("answered", res$stderr, fixed = TRUE))
})
