#' Trace context of the running tool call
#'
#' When tracing is on (see "OpenTelemetry tracing and metrics" in
#' [mcp_server()] and `vignette("telemetry")`), every MCP message gets one
#' server span, and a tool runs inside the span of its `tools/call` request.
#' `mcp_trace_context()` returns that span's W3C trace context, so a tool can
#' hand it on, for example as the `traceparent`, `tracestate` and `baggage`
#' headers of an HTTP request, or as the parent of spans it records itself.
#'
#' `mcp_trace_env()` gives the same context as the environment variables
#' `TRACEPARENT`, `TRACESTATE` and `BAGGAGE`, for a child process the tool
#' starts, so it continues the trace (the OpenTelemetry
#' environment-variable carrier): pass them in that process's own
#' environment, for example `processx::run(cmd, env = c("current",
#' mcp_trace_env()))` or `system2(cmd, env = sprintf("%s=%s", names(e),
#' shQuote(e)))` with `e <- mcp_trace_env()`. The server's own environment
#' is never changed: other threads of the server run while a tool does, and
#' changing the environment of a process while other threads may read it is
#' not safe. W3C baggage that the client sent in the request's
#' `params._meta.baggage` is the `baggage` element and `BAGGAGE`.
#'
#' @return `mcp_trace_context()`: a named character vector with element
#'   `traceparent` and, when present, `tracestate` and `baggage` (the
#'   client's W3C baggage, validated and re-encoded); or `NULL` when tracing
#'   is off or no tool call is running. `mcp_trace_env()`: the same values
#'   named `TRACEPARENT`, `TRACESTATE` and `BAGGAGE`, all three (an absent one
#'   is `""`, which replaces a value the child would otherwise inherit); or an
#'   empty named character vector when there is no context.
#' @seealso [mcp_server()] for enabling tracing; `vignette("telemetry")`.
#' @export
#' @examples
#' # Outside a tool call there is no context.
#' mcp_trace_context()
#'
#' # A tool that forwards its trace context to a web service.
#' lookup <- tool(
#'   function(id) {
#'     ctx <- mcp_trace_context()
#'     headers <- if (is.null(ctx)) character() else ctx
#'     paste("would call the service with", length(headers), "trace header(s)")
#'   },
#'   name = "lookup",
#'   description = "Look up a record by id.",
#'   arguments = list(id = type_string("Record id."))
#' )
#'
#' # A tool whose child process continues the trace.
#' run_script <- tool(
#'   function() {
#'     e <- mcp_trace_env()
#'     system2("echo", "child started", env = sprintf("%s=%s", names(e), shQuote(e)), stdout = TRUE)
#'   },
#'   name = "run_script",
#'   description = "Run a script in a child process."
#' )
#' # Outside a tool call: no variables.
#' mcp_trace_env()
mcp_trace_context <- function() {
  .Call(wrap__engine_trace_context)
}

#' @rdname mcp_trace_context
#' @export
mcp_trace_env <- function() {
  ctx <- mcp_trace_context()
  if (is.null(ctx)) {
    return(structure(character(), names = character()))
  }
  # All three, empty when absent, so that a child's inherited values are
  # replaced rather than mixed with this call's.
  c(
    TRACEPARENT = unname(ctx[["traceparent"]]),
    TRACESTATE = if ("tracestate" %in% names(ctx)) unname(ctx[["tracestate"]]) else "",
    BAGGAGE = if ("baggage" %in% names(ctx)) unname(ctx[["baggage"]]) else ""
  )
}

#' @rdname mcp_server
#' @name mcp_server
#' @section OpenTelemetry tracing and metrics:
#' mcplite records one OpenTelemetry server span for every MCP message that
#' passes JSON-RPC envelope validation: `initialize`, notifications, `ping`,
#' `server/discover`, `tools/list`, `tools/call` and unknown methods, including
#' those answered with a JSON-RPC error. Blank lines, unparsable JSON, invalid
#' envelopes and client responses produce no span. A span is named after the
#' method, and `"tools/call <tool name>"` for a call to a registered tool; a
#' call to an unknown tool is named `"tools/call"` and a method that is not an
#' MCP method `"_OTHER"` (the method itself is kept, cut to 256 characters, in
#' `rpc.method_original`), so names stay few whatever clients send. Spans
#' have kind SERVER and the instrumentation scope `r.package.mcplite` with the
#' schema URL of the OpenTelemetry MCP conventions, and carry only
#' low-cardinality attributes: `mcp.method.name`, `network.transport`
#' (`"pipe"`), `jsonrpc.request.id`, `gen_ai.operation.name` and
#' `gen_ai.tool.name` for tool calls, `mcp.protocol.version`, and for failures
#' `error.type` and `rpc.response.status_code`. The status description of a
#' failed request is the JSON-RPC error message the server sent. `error.type`
#' is one of `"-32600"` (invalid request, for example before `initialize`),
#' `"-32601"` (method not found), `"-32602"` (invalid params, an unknown tool
#' included), `"-32603"` (internal error), `"-32022"` (unsupported protocol
#' version) and `"tool_error"` (a result with `isError: true`: a tool that
#' failed, was interrupted or returned an error). Tool arguments, results,
#' condition messages, client information, `_meta` and trace headers are never
#' recorded. mcplite creates no extra span around the tool itself: spans the
#' tool records become children of the call's span.
#'
#' Metrics follow the same conventions: the histogram
#' `mcp.server.operation.duration` (seconds, from the arrival of a message
#' until its response is written) with the span's attributes minus the
#' request id and minus anything a client chose (no unknown tool names, no
#' original method text), and `mcp.server.session.duration` for each legacy
#' session, from `initialize` until the next `initialize`, the end of input or
#' shutdown.
#'
#' Telemetry is off unless an exporter is chosen with the standard
#' environment variables, read once when the server (or a session) starts;
#' there are no telemetry arguments. With it off, nothing is recorded and the
#' protocol is unchanged.
#'
#' * `OTEL_R_TRACES_EXPORTER` (or, when unset, `OTEL_TRACES_EXPORTER`) for
#'   spans and `OTEL_R_METRICS_EXPORTER` (or `OTEL_METRICS_EXPORTER`) for
#'   metrics: `stderr` writes OTLP/JSON lines on standard error (one per
#'   finished span; one per metrics export); `otlp` or `http` sends OTLP/HTTP
#'   (protobuf) to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
#'   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, or to `OTEL_EXPORTER_OTLP_ENDPOINT`
#'   plus `/v1/traces` or `/v1/metrics` (default `http://localhost:4318`). Only
#'   plain `http://` endpoints are supported: to reach a TLS endpoint, run a
#'   local collector that forwards to it. `none` or unset: off. Unknown values
#'   print a warning and leave that exporter off.
#' * `OTEL_EXPORTER_OTLP_HEADERS` (for example an authorization token) and
#'   the per-signal `..._TRACES_HEADERS` / `..._METRICS_HEADERS`,
#'   `OTEL_EXPORTER_OTLP_TIMEOUT` (and per signal), the `OTEL_BSP_*` batch
#'   settings, `OTEL_METRIC_EXPORT_INTERVAL` (default 60000 ms; metrics are
#'   also exported once when the server stops),
#'   `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`, `OTEL_SERVICE_NAME`
#'   (default `"R"`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
#'   `OTEL_TRACES_SAMPLER_ARG` (default: parent-based, always on),
#'   `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` and
#'   `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, and `OTEL_SDK_DISABLED=true`
#'   are honoured.
#' * `OTEL_R_SUPPRESS_SCOPES=mcplite` (or an `OTEL_R_EMIT_SCOPES` list that
#'   does not match `r.package.mcplite`) turns mcplite's spans and metrics
#'   off.
#'
#' Exporting never slows requests down: spans and metrics go to background
#' threads. If the collector is slow or unreachable, telemetry is dropped
#' (with one message on standard error), never requests; when the server
#' stops, waiting spans and the last metrics are flushed for at most a few
#' seconds.
#'
#' **Never configure a `stdout` or `console` exporter for a stdio server:**
#' standard output carries the MCP protocol, and telemetry written there
#' would corrupt it. mcplite redirects such a setting to standard error with
#' a warning.
#'
#' A client can make the server's spans part of its own trace by sending a W3C
#' `traceparent` (and optionally `tracestate`) in `params._meta`; malformed
#' values are ignored. W3C `baggage` sent the same way is handed to the tool.
#' A `TRACEPARENT` in the server's own environment when it starts (set by
#' whatever launched it) becomes a link on every span. While a tool runs, its
#' span's context is available from [mcp_trace_context()], and as the
#' `TRACEPARENT`/`TRACESTATE`/`BAGGAGE` variables for the environment of a
#' child process from [mcp_trace_env()], so child processes can continue the
#' trace; the server's own environment is not changed.
#'
#' Recipes, for the `env` entry of the client configuration or the shell:
#'
#' ```
#' # Spans as JSON lines in the client's server log (stderr):
#' OTEL_R_TRACES_EXPORTER=stderr Rscript --vanilla /absolute/path/to/server.R
#'
#' # Spans and metrics to an OpenTelemetry collector listening for OTLP/HTTP:
#' OTEL_TRACES_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp \
#' OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 \
#' OTEL_SERVICE_NAME=my-r-tools \
#' Rscript --vanilla /absolute/path/to/server.R
#' ```
#'
#' @section Troubleshooting:
#' When a client "shows no tools" or a tool never seems to run, first look at
#' what the server received and answered. Set `MCPLITE_LOG=debug` in the
#' client configuration's `env` (for example
#' `mcp_client_config("server.R", env = c(MCPLITE_LOG = "debug"))`) and read
#' the server's standard error, which clients keep as a log: one line per
#' message received and one per message answered, with the method, the
#' request id, the protocol era and version, the tool, the duration and the
#' outcome (an error's code and message included). No `initialize` line means
#' the client never reached the server (check the command and paths); an
#' `initialize` without a `tools/list` means the client gave up after the
#' handshake; errors say why a request was refused. `MCPLITE_LOG=info` logs
#' only the answers; `trace` is the same as `debug`; `off` (the default)
#' logs nothing and costs nothing. Tool arguments and results are never
#' logged, and standard output is never touched.
NULL
