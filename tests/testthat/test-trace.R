# mcp_trace_context() and the TRACEPARENT/TRACESTATE carrier (SPEC T9),
# through in-process sessions. Sampling is switched off so nothing is
# exported (the span context still propagates); exporters are tested end to
# end in tests/suites/*-telemetry.sh.

remote_tp <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

ctx_tool <- tool(
  function() {
    ctx <- mcp_trace_context()
    jsonlite::toJSON(list(
      ctx = as.list(ctx),
      env_tp = Sys.getenv("TRACEPARENT", "<unset>"),
      env_ts = Sys.getenv("TRACESTATE", "<unset>"),
      child = system("printenv TRACEPARENT || true", intern = TRUE)
    ), auto_unbox = TRUE)
  },
  name = "ctx",
  description = "Report the trace context seen by the tool."
)

modern_call <- function(id, meta = "") {
  sprintf(
    paste0(
      '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ctx","arguments":{},',
      '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
      '"io.modelcontextprotocol/clientCapabilities":{}%s}}}'
    ),
    id, meta
  )
}

seen_by_tool <- function(session, id, meta = "") {
  res <- jsonlite::fromJSON(mcp_handle(session, modern_call(id, meta)), simplifyVector = FALSE)
  expect_false(res$result$isError)
  jsonlite::fromJSON(res$result$content[[1]]$text, simplifyVector = FALSE)
}

test_that("mcp_trace_context() is NULL outside a tool call", {
  expect_null(mcp_trace_context())
})

test_that("with tracing off, tools see no context and the environment is untouched", {
  withr::local_envvar(
    OTEL_TRACES_EXPORTER = NA, OTEL_R_TRACES_EXPORTER = NA,
    TRACEPARENT = "outer-value", TRACESTATE = NA
  )
  s <- mcp_session(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s"', remote_tp))
  expect_length(seen$ctx, 0)
  expect_equal(seen$env_tp, "outer-value")
  expect_equal(seen$child, "outer-value")
})

test_that("with tracing on, the call's span context reaches R and child processes", {
  withr::local_envvar(
    OTEL_R_TRACES_EXPORTER = "stderr", OTEL_TRACES_SAMPLER = "always_off",
    TRACEPARENT = NA, TRACESTATE = "previous=1"
  )
  s <- mcp_session(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s","tracestate":"vendor=abc"', remote_tp))
  tp <- seen$ctx$traceparent
  # Same trace as the client's, a new span id (the server span), sampling off.
  expect_match(tp, "^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$")
  expect_false(grepl("00f067aa0ba902b7", tp, fixed = TRUE))
  expect_equal(seen$ctx$tracestate, "vendor=abc")
  expect_named(seen$ctx, c("traceparent", "tracestate"))
  expect_equal(seen$env_tp, tp)
  expect_equal(seen$env_ts, "vendor=abc")
  expect_equal(seen$child, tp)
  # Restored afterwards: unset stays unset, a previous value comes back.
  expect_equal(Sys.getenv("TRACEPARENT", NA), NA_character_)
  expect_equal(Sys.getenv("TRACESTATE"), "previous=1")
  expect_null(mcp_trace_context())

  # Without a client context: a fresh trace, no tracestate (so TRACESTATE is
  # removed for the call), a new span per call.
  a <- seen_by_tool(s, 2)
  b <- seen_by_tool(s, 3)
  expect_match(a$ctx$traceparent, "^00-[0-9a-f]{32}-[0-9a-f]{16}-00$")
  expect_named(a$ctx, "traceparent")
  expect_equal(a$env_ts, "<unset>")
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
  s <- mcp_session(ctx_tool)
  seen <- seen_by_tool(s, 1, sprintf(',"traceparent":"%s"', remote_tp))
  expect_length(seen$ctx, 0)
  expect_equal(seen$env_tp, "<unset>")
})
