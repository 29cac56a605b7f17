#' Trace context of the running tool call
#'
#' When tracing is on (see "OpenTelemetry tracing" in [mcp_server()]), every
#' MCP message gets one server span, and a tool runs inside the span of its
#' `tools/call` request. `mcp_trace_context()` returns that span's W3C trace
#' context, so a tool can hand it on, for example as the `traceparent` and
#' `tracestate` headers of an HTTP request, or as the parent of spans it
#' records itself.
#'
#' The same context is also in the `TRACEPARENT` (and, when not empty,
#' `TRACESTATE`) environment variables while the tool runs, so child
#' processes started with [system()], [system2()] or processx continue the
#' trace on their own (the OpenTelemetry environment-variable carrier). The
#' previous values of both variables are restored when the call ends.
#'
#' @return A named character vector with element `traceparent` and, when the
#'   span has one, `tracestate`; or `NULL` when tracing is off or no tool
#'   call is running.
#' @seealso [mcp_server()] for enabling tracing.
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
mcp_trace_context <- function() {
  .Call(wrap__engine_trace_context)
}

#' @rdname mcp_server
#' @name mcp_server
#' @section OpenTelemetry tracing:
#' mcplite records one OpenTelemetry server span for every MCP message that
#' passes JSON-RPC envelope validation: `initialize`, notifications, `ping`,
#' `server/discover`, `tools/list`, `tools/call` and unknown methods, including
#' those answered with a JSON-RPC error. Blank lines, unparsable JSON, invalid
#' envelopes and client responses produce no span. A span is named after the
#' method (`"tools/call <tool name>"` for tool calls), has kind SERVER and the
#' instrumentation scope `r.package.mcplite`, and carries only low-cardinality
#' attributes: `mcp.method.name`, `network.transport` (`"pipe"`),
#' `jsonrpc.request.id`, `gen_ai.operation.name` and `gen_ai.tool.name` for tool
#' calls, `mcp.protocol.version`, and for failures `error.type` (the JSON-RPC
#' error code, or `"tool_error"`) and `rpc.response.status_code`. Tool
#' arguments, results, condition messages, client information, `_meta` and
#' trace headers are never recorded. mcplite creates no extra span around the
#' tool itself: spans the tool records become children of the call's span.
#'
#' Tracing is off unless an exporter is chosen with the standard environment
#' variables, read once when the server (or a session) starts; there are no
#' tracing arguments. With it off, nothing is recorded and the protocol is
#' unchanged.
#'
#' * `OTEL_R_TRACES_EXPORTER` (or, when unset, `OTEL_TRACES_EXPORTER`):
#'   `stderr` writes each finished span as one line of OTLP/JSON on standard
#'   error; `otlp` or `http` sends batches over OTLP/HTTP (protobuf) to
#'   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or to `OTEL_EXPORTER_OTLP_ENDPOINT`
#'   plus `/v1/traces` (default `http://localhost:4318`). Only plain `http://`
#'   endpoints are supported: to reach a TLS endpoint, run a local collector
#'   that forwards to it. `none` or unset: off. Unknown values print a warning
#'   and leave tracing off.
#' * `OTEL_EXPORTER_OTLP_HEADERS` (for example an authorization token),
#'   `OTEL_EXPORTER_OTLP_TIMEOUT` and the `OTEL_BSP_*` batch settings are
#'   honoured, as are `OTEL_SERVICE_NAME` (default `"R"`),
#'   `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
#'   `OTEL_TRACES_SAMPLER_ARG` (default: parent-based, always on), and
#'   `OTEL_SDK_DISABLED=true`.
#' * `OTEL_R_SUPPRESS_SCOPES=mcplite` (or an `OTEL_R_EMIT_SCOPES` list that
#'   does not match `r.package.mcplite`) turns mcplite's spans off.
#'
#' Exporting never slows requests down: spans go through a bounded queue to
#' a background thread. If the collector is slow or unreachable, spans are
#' dropped (with one message on standard error), never requests; when the
#' server stops, waiting spans are flushed for at most a few seconds.
#'
#' **Never configure a `stdout` or `console` exporter for a stdio server:**
#' standard output carries the MCP protocol, and telemetry written there
#' would corrupt it. mcplite redirects such a setting to standard error with
#' a warning.
#'
#' A client can make the server's spans part of its own trace by sending a W3C
#' `traceparent` (and optionally `tracestate`) in `params._meta`; malformed
#' values are ignored. While a tool runs, its span's context is available from
#' [mcp_trace_context()] and in the `TRACEPARENT`/`TRACESTATE` environment
#' variables, so child processes can continue the trace.
#'
#' Recipes, for the `env` entry of the client configuration or the shell:
#'
#' ```
#' # Spans as JSON lines in the client's server log (stderr):
#' OTEL_R_TRACES_EXPORTER=stderr Rscript --vanilla /absolute/path/to/server.R
#'
#' # Spans to an OpenTelemetry collector listening for OTLP/HTTP:
#' OTEL_TRACES_EXPORTER=otlp \
#' OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 \
#' OTEL_SERVICE_NAME=my-r-tools \
#' Rscript --vanilla /absolute/path/to/server.R
#' ```
NULL
