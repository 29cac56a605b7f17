#' mcplite: serve R functions as MCP tools over stdio
#'
#' mcplite turns R functions into tools that a local Model Context Protocol
#' (MCP) client, such as Claude Desktop, Claude Code or Cursor, can discover
#' and call. Define the tools in a script that ends with [mcp_server()] and let
#' the client start that script with `Rscript --vanilla
#' /absolute/path/to/server.R`; [mcp_client_config()] prints the matching
#' client configuration. The server answers requests until the client closes
#' its standard input.
#'
#' @section Define tools and return results:
#' [tool()] attaches a description and an argument schema, built with the
#' [type helpers][type_boolean()], to an ordinary R function, which stays
#' callable from R. A tool can return any R value: character vectors become
#' text and other values become JSON text. To send images, audio, resource
#' links, embedded resources, structured output or result metadata, return a
#' [tool_result()] built from the [content constructors][content_text()]
#' ([content_plot()] and [content_image_file()] turn plots and files into
#' image blocks). The [mcplite-results] topic lists the exact conversions and
#' the options that tune the JSON; check them before returning statistics
#' (see "Numbers, missing values and matrices" in [tool_result()]).
#'
#' Schemas describe arguments to the client; they neither validate values nor
#' grant permissions. Each tool is responsible for checking its input, for
#' deciding what it may do, for safe side effects and for the size of its
#' output. Standard output carries only protocol messages while the server
#' runs; send diagnostics to standard error.
#'
#' @section Scope:
#' mcplite is a tools-only server on the stdio transport. It speaks the legacy
#' MCP revisions 2024-11-05, 2025-06-18 and 2025-11-25 as well as the
#' stateless 2026-07-28 revision, in the same process. Resource links and
#' embedded resources can be returned as content, but there are no resource
#' endpoints. Tools made with `ellmer::tool()` are accepted as they are;
#' ellmer itself is not needed. Every request is recorded as an OpenTelemetry
#' span when an exporter is configured through the standard environment
#' variables (see [mcp_server()] and [mcp_trace_context()]).
#'
#' @section Platforms:
#' Linux is fully supported and tested. macOS (Intel and Apple silicon) is
#' supported by the code but only compile-checked by the package's tests.
#' On Windows, building needs Rtools and the Rust target
#' `x86_64-pc-windows-gnu`; the protocol engine's tests (serving over real
#' pipes, and the MCP client starting a server over stdio, included) run
#' under Wine, and the R layer is compiled but not run by the package's
#' tests. While the server runs, standard output is
#' protected in the same way everywhere: on Windows the C runtime's
#' descriptors and the process's standard handles both point at standard
#' error, and standard input at the `NUL` device. On Windows, Ctrl-Break
#' interrupts a running tool like Ctrl-C instead of ending R.
#'
#' [mcp_handler()] and [mcp_handle()] run the same engine in process, which is
#' how to test tools and servers without a client; [mcp_load_tools()] loads
#' the tools of a server script for such tests.
#'
#' The guides "Get started" (`vignette("mcplite", package = "mcplite")`),
#' "Write tools" (`vignette("write-tools", package = "mcplite")`) and "Return
#' results" (`vignette("return-results", package = "mcplite")`) walk through
#' all of this with running examples.
#'
#' @keywords internal
#' @useDynLib mcplite, .registration = TRUE
"_PACKAGE"

.onLoad <- function(libname, pkgname) {
  # RULES J2.3: detect the installed jsonlite version once, when the package
  # loads, so the encoder reproduces that version's number formatting.
  json_flavor()
  invisible()
}
