# R as an MCP client (RULES section 13): connect to a server (a child
# process over stdio, or a Streamable HTTP endpoint), list and call its
# tools, turn them into mcplite tools, read Claude Desktop / mcptools
# configuration files. The protocol work (process, framing, JSON-RPC, era
# negotiation, retries, reserved headers, timeouts, cancellation, error
# messages) is done by the engine (rust/engine/src/client/);
# rust/mcplite-r/src/client.rs is the glue, reached through the wrappers of
# R/extendr-wrappers.R, whose errors bridge_value() raises (RULES K1). This
# file checks arguments, shapes arguments by the tool's schema (K5) and
# converts results (K6). Waiting happens in short slices so R keeps control
# of interrupts and of the progress callback.
#
# A connection is an environment of class `mcplite_connection`; every
# function that uses one goes through the methods in "Connection methods"
# below (conn_*), the one place that knows what a connection holds.

#' Connect to an MCP server
#'
#' @description
#' `mcp_connect()` starts an MCP server as a child process and talks to it
#' over its standard input and output (`command`), or connects to a Streamable
#' HTTP endpoint (`url`). It negotiates the protocol and returns a connection
#' for [mcp_call()], [mcp_list_tools()] and [mcp_tools()].
#'
#' With `tools`, `mcp_connect()` connects in memory to those tools, served
#' by this R session: no process, no pipe, no socket, but the same client and
#' server code as a real connection (negotiation, argument validation,
#' result conversion, errors and progress). It is the quickest way to test
#' tools (see the section "In memory").
#'
#' `mcp_connect_script()` starts an R server script the way an MCP client
#' would (`Rscript --vanilla script.R`, with the R running this function and
#' its library paths), which is the quickest way to test a server script
#' over real stdio, for example from testthat.
#'
#' `mcp_close()` ends a connection: it closes the server's standard input,
#' waits up to 2 seconds for the server to exit, and if it does not, stops it
#' with SIGTERM and then (2 seconds later) SIGKILL (sent to the server's whole process group, so programs it
#' started go too). It also takes a list of connections, or the tools made by
#' [mcp_tools()], whose connections it closes (the way to close the
#' connections `mcp_tools()` opened for a configuration file). Connections
#' that are no longer referenced are closed the same way when R's garbage
#' collector runs, and when R exits.
#'
#' @section Protocol negotiation:
#' With `protocol = "auto"` the client first asks the server with
#' `server/discover` whether it speaks the modern revision 2026-07-28. If it
#' does, every request carries its protocol version and there is no
#' handshake. If the server answers with anything but a valid discover result
#' (an empty or malformed result, a JSON-RPC error, an HTTP error status, a
#' body that is not JSON), or does not answer within a few seconds (option
#' `mcplite.client_probe_timeout`, default 5), it is treated as a legacy
#' server and the client performs the `initialize` handshake, asking for
#' 2025-11-25 and accepting 2025-06-18, 2025-03-26 and 2024-11-05. A modern
#' server that rejects 2026-07-28 but lists a legacy version it supports is
#' also reached through `initialize`. Name a version in
#' `protocol` to insist on it: a legacy version skips the probe, and
#' `"2026-07-28"` fails clearly instead of falling back. [mcp_server_info()]
#' shows the version in use.
#'
#' @section Child processes:
#' On Windows there are no signals: the server runs in a new process group
#' without a console window, inside a Job object, and where the description
#' above says SIGTERM and SIGKILL, the whole Job (the server and everything
#' it started) is terminated instead; it is also terminated when R exits. A
#' bare `command` such as `"npx"` is looked up on the `PATH` with the
#' extensions `.exe`, `.cmd`, `.bat` and `.com`.
#'
#' The server process gets an allowlisted copy of R's environment plus the
#' variables in `env` (which win over inherited ones with the same name): only
#' `HOME`, `USER`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `TMPDIR`, `TZ`, `LANG`,
#' `LANGUAGE`, the `LC_*` locale variables, the `XDG_*` directory variables,
#' the proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, `ALL_PROXY`,
#' also in lower case), the certificate variables (`SSL_CERT_FILE`,
#' `SSL_CERT_DIR`, `CURL_CA_BUNDLE`) and R's library variables (`R_LIBS`,
#' `R_LIBS_USER`, `R_LIBS_SITE`) are inherited. Secrets in R's environment
#' therefore do not leak to servers; pass what a server needs in `env`.
#'
#' The server's standard error is never mixed into R's output. Its last
#' 16 KiB are kept: [mcp_stderr()] returns them, and errors about a server
#' that exited or stopped answering quote the last lines. Lines on the
#' server's standard output that are not JSON-RPC messages are skipped (and
#' mentioned in such errors); a single message longer than the option
#' `mcplite.client_max_message` (bytes, default 64 MiB) is dropped and fails
#' the call it belonged to.
#'
#' @section Streamable HTTP:
#' With `url`, each request is an HTTP POST; answers may be plain JSON or a
#' server-sent event stream (which carries progress notifications). `headers`
#' are sent with every request; a value may refer to environment variables as
#' `${NAME}`, which is replaced when connecting (an unset variable is an
#' error), so tokens need not be written into scripts or configuration files.
#' Headers the protocol owns (`Accept`, `Content-Type`, `Content-Length`,
#' `Host`, `Last-Event-ID`, `MCP-Protocol-Version`, `Mcp-Session-Id`,
#' `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`) cannot be set. There is no
#' OAuth support: supply a token in `headers`.
#'
#' With a legacy server (protocol 2025-11-25 and earlier), an answer stream
#' that the server closes before the answer is resumed the way the protocol
#' describes: after the time the server asked for (its `retry` field), the
#' client reconnects with a GET request carrying the last event id it saw
#' (`Last-Event-ID`) and reads the answer from there.
#'
#' @section In memory:
#' `mcp_connect(tools = tools)` takes the tools as [mcp_server()] does (one
#' tool or a list), or a handler made by [mcp_handler()] (which also carries
#' `instructions` and `session_tools`). Each [mcp_call()] runs the tool at
#' once in this R session, as a server would: the arguments are validated
#' against the tool's schema, the result or the error comes back as from a
#' server over stdio, warnings and messages of the tool go to this session's
#' console, and `progress` callbacks get the notifications the server made
#' (after the tool returned, in order). Because the call runs in this
#' process, `timeout` cannot stop it. `mcp_close()` returns `"closed (in
#' memory)"`.
#'
#' @section HTTPS:
#' `https://` URLs are supported (TLS by rustls, compiled into the package:
#' no system TLS library is needed). The server's certificate must be valid
#' for the URL's host name and be issued by a trusted certificate authority:
#' by default one of the platform's trust store (the system's CA bundle on
#' Linux, the Keychain on macOS, the certificate store on Windows). For a
#' server whose certificate comes from a private CA, give that CA's
#' certificate (a PEM file, which may hold several) in `ca_file`, or name the
#' file in the environment variable `SSL_CERT_FILE`; then only the CAs of that
#' file are trusted. A certificate that is rejected fails the connection with
#' an error of class `mcplite_error_tls` (also `mcplite_error_connection`)
#' whose message names the URL and why (unknown issuer, wrong host name,
#' expired, ...), and whose `url` holds the URL.
#'
#' @param command The program that runs the server, e.g. `"npx"`, `"uvx"`,
#'   `"docker"` or the path of an executable. Looked up on the child's `PATH`.
#' @param args Character vector of arguments for `command`.
#' @param ... Must be empty.
#' @param env Extra environment variables for the server: a named character
#'   vector or a named list of single strings.
#' @param cwd Working directory for the server (default: R's working
#'   directory).
#' @param url The Streamable HTTP endpoint of a remote server (instead of
#'   `command`).
#' @param headers Extra HTTP headers: a named character vector or a named
#'   list of single strings; `${NAME}` in a value is replaced by the
#'   environment variable `NAME`.
#' @param ca_file `NULL`, or the path of a PEM file of CA certificates that
#'   `https://` servers must be certified by instead of the platform's trust
#'   store (a private CA). `NULL` uses the file named by the environment
#'   variable `SSL_CERT_FILE` when it is set. See the HTTPS section.
#' @param name A short name for the server, used in messages and printing.
#'   Defaults to the command's file name or the URL's host.
#' @param timeout Seconds the whole connection attempt may take (a server
#'   that has not completed the handshake by then is stopped, and the error
#'   comes within half a second), and the default for each call (see
#'   [mcp_call()]). `Inf` waits forever.
#' @param protocol `"auto"` (the default) negotiates; a version string
#'   (`"2026-07-28"`, `"2025-11-25"`, `"2025-06-18"` or `"2024-11-05"`) insists
#'   on that version.
#' @param tools Tools to connect to in memory (instead of `command` or
#'   `url`): a tool made by [tool()], a list of tools, or a handler made by
#'   [mcp_handler()].
#' @param script Path of an R script that ends with [mcp_server()].
#' @param x A connection from `mcp_connect()`, a list of connections, or a
#'   list of tools made by [mcp_tools()].
#' @return `mcp_connect()` and `mcp_connect_script()`: a connection, an object
#'   of class `mcplite_connection`. `mcp_close()`: invisibly, a string saying
#'   how each server process ended (`"exited with status 0"`, ...), one per
#'   connection.
#' @seealso [mcp_call()], [mcp_tools()], [mcp_connect_config()] to connect to
#'   every server of a configuration file, and the vignette
#'   `vignette("use-mcp-servers", package = "mcplite")`.
#' @export
#' @examples
#' # A server script, started the way an MCP client starts it.
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()), name = \"add\")",
#'   "mcp_server(add)"
#' ), script)
#' server <- mcp_connect_script(script)
#' server
#' mcp_call(server, "add", list(x = 1, y = 2))
#' mcp_close(server)
#'
#' # The same tool in memory, without a process: the quickest way to test it.
#' add <- tool(function(x, y) x + y, "Add two numbers.",
#'   arguments = list(x = type_number(), y = type_number()), name = "add")
#' mem <- mcp_connect(tools = add)
#' mcp_call(mem, "add", list(x = 1, y = 2))
#' mcp_close(mem)
#'
#' \dontrun{
#' # A server from npm, and a remote one
#' everything <- mcp_connect("npx", c("-y", "@modelcontextprotocol/server-everything"))
#' remote <- mcp_connect(
#'   url = "http://localhost:3001/mcp",
#'   headers = c(Authorization = "Bearer ${MY_TOKEN}")
#' )
#' }
mcp_connect <- function(command = NULL, args = character(), ..., env = NULL, cwd = NULL,
                        url = NULL, headers = NULL, ca_file = NULL, name = NULL, timeout = 60,
                        protocol = "auto", tools = NULL) {
  check_dots_empty(...)
  if (sum(!is.null(command), !is.null(url), !is.null(tools)) != 1L) {
    abort("Supply exactly one of `command` (a server to start), `url` (a remote server) and ",
          "`tools` (tools served in memory).")
  }
  timeout <- check_seconds(timeout, "timeout")
  protocol <- check_protocol(protocol)
  if (!is.null(tools)) {
    if (!identical(args, character()) || !is.null(env) || !is.null(cwd) || !is.null(headers) ||
        !is.null(ca_file)) {
      abort("`args`, `env`, `cwd`, `headers` and `ca_file` do not apply to `tools`.")
    }
    return(connect_memory(tools, name, timeout, protocol))
  }
  if (!is.null(url)) {
    if (!identical(args, character()) || !is.null(env) || !is.null(cwd)) {
      abort("`args`, `env` and `cwd` apply to `command`, not to `url`.")
    }
    return(connect_http(url, headers, ca_file, name, timeout, protocol))
  }
  if (!is.null(headers) || !is.null(ca_file)) {
    abort("`", if (is.null(headers)) "ca_file" else "headers", "` applies to `url`, not to `command`.")
  }
  if (!is_scalar_string(command) || !nzchar(command)) {
    abort("`command` must be a single non-empty string, not ", describe(command), ".")
  }
  if (!is.character(args) || anyNA(args) || is.object(args)) {
    abort("`args` must be a character vector without NA, not ", describe(args), ".")
  }
  env <- check_env(env)
  if (!is.null(cwd)) {
    if (!is_scalar_string(cwd) || !dir.exists(cwd)) {
      abort("`cwd` must be NULL or the path of an existing directory, not ",
            if (is_scalar_string(cwd)) paste0("\"", cwd, "\"") else describe(cwd), ".")
    }
    cwd <- normalizePath(cwd, mustWork = TRUE)
  }
  name <- check_connection_name(name, basename(command))
  child_env <- c(inherited_env(), env)
  child_env <- child_env[!duplicated(names(child_env), fromLast = TRUE)]
  ptr <- client_connect_stdio(
    command, unname(args), child_env, cwd, if (identical(protocol, "auto")) NULL else protocol,
    timeout, probe_timeout(), max_message(), client_version(), name
  )
  new_connection(ptr, name, "stdio", paste(c(command, args), collapse = " "), timeout)
}

#' @rdname mcp_connect
#' @export
mcp_connect_script <- function(script, args = character(), ..., env = NULL, name = NULL,
                               timeout = 60, protocol = "auto") {
  check_dots_empty(...)
  if (!is_scalar_string(script) || !file.exists(script) || dir.exists(script)) {
    abort("`script` must be the path of an existing R script, not ",
          if (is_scalar_string(script)) paste0("\"", script, "\"") else describe(script), ".")
  }
  script <- normalizePath(script, mustWork = TRUE)
  env <- check_env(env)
  libs <- c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  mcp_connect(
    rscript_path(), c("--vanilla", script, args),
    env = c(libs, env[names(env) != "R_LIBS"], env[names(env) == "R_LIBS"]),
    name = name %||% basename(script), timeout = timeout, protocol = protocol
  )
}

#' @rdname mcp_connect
#' @export
mcp_close <- function(x) {
  if (is_connection_list(x)) {
    return(invisible(vapply(x, mcp_close, character(1))))
  }
  if (!is_connection(x) && is.list(x) && !is.object(x)) {
    conns <- tools_connections(x)
    if (length(conns) > 0L) {
      return(invisible(vapply(conns, mcp_close, character(1))))
    }
  }
  check_connection(x, open = FALSE)
  invisible(conn_close(x))
}

#' Call a tool on an MCP server
#'
#' @description
#' `mcp_call()` calls one tool and returns its result the way mcplite
#' represents results everywhere: a [tool_result()] whose `content` holds
#' content blocks made by the [content constructors][content_text()] and whose
#' `structured_content` holds the structured output converted to R.
#'
#' `mcp_list_tools()` lists the server's tools (following pagination).
#'
#' @section Arguments and results:
#' `arguments` is converted to JSON by the same encoder and payload options
#' that mcplite uses for tool results ([mcplite-results]), guided by the
#' tool's input schema from the server's tool list (listed once per
#' connection and kept): where the schema says an argument (or a property of
#' an object argument, or the items of an array) is
#' * an array, a length-one vector is sent as an array (`values = 5` becomes
#'   `[5]`);
#' * an object, an empty `list()` is sent as `{}` (not `[]`);
#' * allowed to be `null`, a single `NA` is sent as `null`, and `NA`
#'   elements of a vector for nullable items as `null` too.
#'
#' Everything else, and every argument of a tool without a listed schema,
#' follows the encoder's rules: with the default options a length-one vector
#' becomes a JSON scalar and a longer vector an array; use `I()` to send a
#' length-one vector as an array.
#'
#' The result comes back converted by the rules tools receive their arguments
#' by: JSON objects become named lists, arrays become unnamed lists (never
#' atomic vectors), numbers written without fraction or exponent that fit in
#' R's integer range become integers and other numbers doubles, `null`
#' becomes `NULL`. So `result$structured_content` is the server's structured
#' output and `result$content[[1]]$text` the text of its first block. Content
#' annotations and metadata use the R spellings (`mime_type`,
#' `last_modified`, `meta` for `_meta`).
#'
#' @section Errors:
#' Every error is an R condition of class `mcplite_error` and
#' `mcplite_error_client`, plus one of:
#' * `mcplite_error_tool`: the tool ran and reported an error (`isError:
#'   true`). The message is the text of the error; the condition's `text`
#'   holds that text and `result` the whole result.
#' * `mcplite_error_rpc`: the server answered with a JSON-RPC error. The
#'   condition holds `code`, `error_message` and `data`.
#'
#' Servers differ in how they answer a call of a tool they do not have:
#' mcplite servers (code -32602) and the TypeScript SDK 2.x `McpServer`
#' answer with a JSON-RPC error (`mcplite_error_rpc`); the TypeScript SDK
#' 1.x `McpServer` and the Python SDK's `MCPServer` answer with a tool error
#' (`mcplite_error_tool`); a server written with the Python SDK's low-level
#' `Server` answers as its handler does (a JSON-RPC error when it raises).
#' Handle `mcplite_error_client` to catch both.
#' * `mcplite_error_timeout`: no answer within `timeout` seconds (or
#'   `max_time`); the request was cancelled on the server.
#' * `mcplite_error_connection`: the server could not be started or reached,
#'   exited, closed the connection, or broke the protocol. Its `reason` is one
#'   of `"spawn"`, `"connect"`, `"tls"`, `"closed"`, `"http"` or
#'   `"protocol"`; `status` is the HTTP status (reason `"http"`) or the exit
#'   status of a server that exited (reason `"closed"`), otherwise `NULL`;
#'   `stderr` holds the server's recent standard error, one line per
#'   element. A rejected TLS certificate (reason `"tls"`) also has class
#'   `mcplite_error_tls` and the URL in `url`.
#'
#' Every condition also holds `server`, the connection's name. Messages say
#' which server failed at what, mention lines the server wrote that were
#' not JSON-RPC, and end with the last lines of its standard error.
#'
#' Interrupting R (Ctrl-C, Esc) during a call cancels the request on the
#' server (`notifications/cancelled` on stdio; the response stream is closed
#' on HTTP) and returns control at once; the connection stays usable.
#'
#' @section Progress and timeouts:
#' With a `progress` function the request asks the server for progress
#' notifications, and each one calls `progress(progress, total, message)`
#' (`total` and `message` are `NULL` when the server sent none). Each
#' notification also restarts the `timeout` clock, as the protocol allows, but
#' never beyond `max_time` seconds after the call started.
#'
#' @param x A connection from [mcp_connect()].
#' @param tool The tool's name.
#' @param arguments A named list of arguments (`list()` for none).
#' @param ... Must be empty.
#' @param timeout Seconds to wait for the answer; by default the connection's
#'   `timeout`.
#' @param progress `NULL`, or a function called with each progress
#'   notification: `function(progress, total, message)`.
#' @param max_time The longest a call may take in seconds, however much
#'   progress the server reports; by default ten times `timeout`.
#' @return `mcp_call()`: an object of class `mcplite_tool_result` (see
#'   [tool_result()]), never with `is_error = TRUE` (errors are raised).
#'   `mcp_list_tools()`: a list with one element per tool, named by tool
#'   name, each a list with `name`, `title`, `description`, `input_schema`,
#'   `output_schema`, `annotations` (R spellings: `read_only_hint`, ...) and
#'   `meta`; absent fields are `NULL`.
#' @seealso [mcp_connect()], [mcp_tools()] to call remote tools as R
#'   functions or serve them again.
#' @export
#' @examples
#' script <- file.path(tempdir(), "stats-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "mean_sd <- tool(function(values) {",
#'   "    v <- unlist(values)",
#'   "    tool_result(structured_content = list(mean = mean(v), sd = sd(v)))",
#'   "  }, \"Mean and standard deviation.\",",
#'   "  arguments = list(values = type_array(type_number())), name = \"mean_sd\")",
#'   "mcp_server(mean_sd)"
#' ), script)
#' server <- mcp_connect_script(script)
#' names(mcp_list_tools(server))
#' res <- mcp_call(server, "mean_sd", list(values = c(1, 2, 4)))
#' res$structured_content$mean
#' res$content[[1]]$text
#' # errors are classed conditions
#' tryCatch(
#'   mcp_call(server, "no_such_tool"),
#'   mcplite_error_rpc = function(e) e$code
#' )
#' mcp_close(server)
mcp_call <- function(x, tool, arguments = list(), ..., timeout = NULL, progress = NULL,
                     max_time = NULL) {
  check_dots_empty(...)
  check_connection(x)
  if (!is_scalar_string(tool)) {
    abort("`tool` must be a single string (the tool's name), not ", describe(tool), ".")
  }
  check_arguments(arguments)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  max_time <- if (is.null(max_time)) 10 * timeout else check_seconds(max_time, "max_time")
  if (!is.null(progress) && !is.function(progress)) {
    abort("`progress` must be NULL or a function, not ", describe(progress), ".")
  }
  # Arguments are shaped by the tool's input schema (RULES K5.2); a call
  # without arguments needs none, so it never makes the client list tools.
  schema <- if (length(arguments) > 0L) conn_input_schema(x, tool, timeout)
  args_json <- arguments_json(arguments, schema)
  ev <- conn_call(x, tool, args_json, !is.null(progress), timeout, max_time)
  repeat {
    if (identical(ev$status, "done")) {
      return(call_result(x, tool, ev$value))
    }
    # progress: the callback runs in R; if it fails or is interrupted, the
    # request is cancelled on the server
    id <- ev$id
    finished <- FALSE
    on.exit(if (!finished) conn_cancel(x, id, "cancelled by the client"))
    p <- ev$value
    if (!is.null(progress)) {
      progress(p$progress, p$total, p$message)
    }
    finished <- TRUE
    ev <- conn_wait(x, id)
  }
}

#' @rdname mcp_call
#' @export
mcp_list_tools <- function(x, ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  tools <- conn_list_tools(x, timeout)
  rejected <- attr(tools, "rejected", exact = TRUE)
  if (length(rejected) > 0L) {
    warning("MCP server `", x$name, "` listed tools with invalid `x-mcp-header` annotations, left out: ",
            paste(rejected, collapse = "; "), call. = FALSE)
  }
  defs <- lapply(tools, tool_definition)
  names(defs) <- vapply(defs, function(d) d$name %||% "", character(1))
  defs
}

#' Use a server's tools as mcplite tools
#'
#' `mcp_tools()` turns the tools of one or more MCP servers into [tool()]
#' objects with the same name, description, input and output schema (through
#' [type_from_schema()]) and annotations. Each is an R function that calls the
#' remote tool with its (named) arguments and returns the [tool_result()] of
#' [mcp_call()]; a tool-level error is raised as a `mcplite_error_tool`. The
#' tools can be passed to [mcp_server()] like any other, alone or next to
#' local tools, which makes a proxy or an aggregator of several servers a few
#' lines of code (see the examples).
#'
#' Tools whose name or schema mcplite cannot represent (a name outside
#' `[A-Za-z0-9_.-]`, an input schema whose root `type` is not `"object"`) are
#' skipped with a warning. Annotations that fail mcplite's checks are dropped
#' with a warning.
#'
#' When tools are served again, structured content passes through R and is
#' encoded again with the payload options ([mcplite-results]): set
#' `options(mcplite.json.digits = NA)` to keep every digit of non-integer
#' numbers. A call that the client of [mcp_server()] made with a progress
#' token asks the remote server for progress too, and passes each report on
#' with [mcp_progress()]; a call that client cancels is cancelled on the
#' remote server.
#'
#' `mcp_close(tools)` closes the connections the tools use, which is how the
#' connections opened for a configuration file (`x` a path) are closed;
#' otherwise they are closed when the tools are no longer referenced and R's
#' garbage collector runs, or when R exits.
#'
#' @param x A connection from [mcp_connect()], a list of connections (e.g.
#'   from [mcp_connect_config()]), or the path of a configuration file, which
#'   is passed to [mcp_connect_config()].
#' @param prefix `NULL` (keep the server's names), a string put in front of
#'   every tool name, or `TRUE` to use each connection's name followed by `_`
#'   (useful when several servers have tools with the same name).
#' @return A list of mcplite tools, named by tool name.
#' @seealso [mcp_connect()], [mcp_call()], [mcp_server()], [mcp_close()]
#' @export
#' @examples
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()), name = \"add\")",
#'   "mcp_server(add)"
#' ), script)
#' server <- mcp_connect_script(script)
#' tools <- mcp_tools(server)
#' tools$add
#' tools$add(x = 1, y = 2)$content[[1]]$text
#' mcp_close(tools) # closes `server`
#'
#' \dontrun{
#' # An aggregator: a server script that serves its own tool and every tool
#' # of the servers in a configuration file.
#' library(mcplite)
#' greet <- tool(function(who) paste("Hello,", who), "Greet someone.",
#'   arguments = list(who = type_string()), name = "greet")
#' mcp_server(c(list(greet), mcp_tools("~/.config/mcptools/config.json", prefix = TRUE)))
#'
#' # The connections of a configuration file, closed when done
#' tools <- mcp_tools("~/.config/mcptools/config.json", prefix = TRUE)
#' tools$everything_echo(message = "hi")
#' mcp_close(tools)
#' }
mcp_tools <- function(x, prefix = NULL) {
  if (is_scalar_string(x)) {
    x <- mcp_connect_config(x)
  }
  if (is_connection_list(x)) {
    if (isTRUE(prefix) && (is.null(names(x)) || !all(nzchar(names(x))))) {
      nm <- vapply(x, function(conn) conn$name, character(1))
      names(x) <- nm
    }
    out <- list()
    for (i in seq_along(x)) {
      p <- if (isTRUE(prefix)) paste0(names(x)[[i]] %||% x[[i]]$name, "_") else prefix
      out <- c(out, mcp_tools(x[[i]], prefix = p))
    }
    return(out)
  }
  check_connection(x)
  if (isTRUE(prefix)) {
    prefix <- paste0(x$name, "_")
  }
  if (!is.null(prefix) && !is_scalar_string(prefix)) {
    abort("`prefix` must be NULL, TRUE or a single string, not ", describe(prefix), ".")
  }
  defs <- mcp_list_tools(x)
  tools <- list()
  for (def in defs) {
    t <- proxy_tool(x, def, prefix %||% "")
    if (!is.null(t)) {
      tools[[attr(t, "mcplite", exact = TRUE)$name]] <- t
    }
  }
  tools
}

#' Connect to the servers of a configuration file
#'
#' `mcp_connect_config()` reads a configuration file in the JSON format used
#' by Claude Desktop and the mcptools package and connects to each server it
#' lists, with [mcp_connect()].
#'
#' The file holds an object `mcpServers` whose members configure one server
#' each, under its name:
#' * a local server started over stdio: `command`, optional `args` (array of
#'   strings), `env` (object of strings) and `cwd`;
#' * a remote Streamable HTTP server: `url`, optional `headers` (object of
#'   strings, values may use `${NAME}` for environment variables).
#'
#' Either kind may set `timeout` (seconds). An entry with `"disabled": true`
#' is skipped; `"type"` may say `"stdio"`, `"http"` or `"streamable-http"`.
#' Other members are ignored. Stdio servers get the allowlisted environment
#' described in [mcp_connect()] plus their `env`.
#'
#' @param path Path of the configuration file.
#' @param servers `NULL` (every server), or the names of the servers to
#'   connect to.
#' @param on_error `"stop"` (the default) closes the connections already made
#'   and raises the error of the server that failed; `"warn"` warns and skips
#'   that server.
#' @return A named list of connections (class `mcplite_connection`), in the
#'   order of the file.
#' @seealso [mcp_tools()] to turn the servers' tools into mcplite tools,
#'   [mcp_close()].
#' @export
#' @examples
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()), name = \"add\")",
#'   "mcp_server(add)"
#' ), script)
#' config <- file.path(tempdir(), "config.json")
#' writeLines(sprintf(
#'   '{"mcpServers": {"adder": {"command": "%s", "args": ["--vanilla", "%s"],
#'     "env": {"R_LIBS": "%s"}}}}',
#'   file.path(R.home("bin"), "Rscript"), script, paste(.libPaths(), collapse = ":")
#' ), config)
#' servers <- mcp_connect_config(config)
#' names(servers)
#' mcp_call(servers$adder, "add", list(x = 2, y = 3))
#' mcp_close(servers)
mcp_connect_config <- function(path, servers = NULL, on_error = c("stop", "warn")) {
  on_error <- check_choice(on_error, c("stop", "warn"), "on_error")
  entries <- read_client_config(path)
  if (!is.null(servers)) {
    if (!is.character(servers) || anyNA(servers)) {
      abort("`servers` must be NULL or a character vector of server names, not ", describe(servers), ".")
    }
    unknown <- setdiff(servers, names(entries))
    if (length(unknown) > 0L) {
      abort("`servers` names servers that `path` does not configure: ",
            paste0("\"", unknown, "\"", collapse = ", "), ".")
    }
    entries <- entries[names(entries) %in% servers]
  }
  out <- list()
  for (nm in names(entries)) {
    e <- entries[[nm]]
    if (isTRUE(e$disabled)) {
      next
    }
    conn <- tryCatch(
      connect_entry(nm, e),
      mcplite_error = function(err) {
        if (on_error == "warn") {
          warning(conditionMessage(err), call. = FALSE)
          return(NULL)
        }
        for (open in out) mcp_close(open)
        stop(err)
      }
    )
    if (!is.null(conn)) {
      out[[nm]] <- conn
    }
  }
  out
}

#' Information about a connected server
#'
#' `mcp_server_info()` tells what the client learned while connecting:
#' the negotiated protocol version and era, the server's identity,
#' capabilities and instructions. `mcp_stderr()` returns what the server
#' wrote to its standard error recently (the last 16 KiB; stdio only).
#'
#' @param x A connection from [mcp_connect()].
#' @return `mcp_server_info()`: a list with `name` (the connection's name),
#'   `protocol_version`, `era` (`"modern"` for 2026-07-28, `"legacy"` for the
#'   `initialize` versions), `server` (the server's `name`, `version` and
#'   other identity fields, or `NULL`), `capabilities`, `instructions`,
#'   `supported_versions` (modern servers), `open` and `pid` (the process id
#'   of a server started over stdio, `NULL` for HTTP). `mcp_stderr()`: a
#'   character vector of lines.
#' @export
#' @examples
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()), name = \"add\")",
#'   "mcp_server(add, instructions = \"Arithmetic.\")"
#' ), script)
#' server <- mcp_connect_script(script)
#' info <- mcp_server_info(server)
#' info$protocol_version
#' info$server$name
#' info$instructions
#' mcp_stderr(server)
#' mcp_close(server)
mcp_server_info <- function(x) {
  check_connection(x, open = FALSE)
  info <- conn_info(x)
  list(
    name = x$name,
    protocol_version = info$version,
    era = info$era,
    server = info$server_info,
    capabilities = info$capabilities,
    instructions = info$instructions,
    supported_versions = info$supported_versions,
    open = info$open,
    pid = if (is.null(info$pid)) NULL else as.integer(info$pid)
  )
}

#' @rdname mcp_server_info
#' @export
mcp_stderr <- function(x) {
  check_connection(x, open = FALSE)
  conn_stderr(x)
}

#' @export
print.mcplite_connection <- function(x, ...) {
  info <- mcp_server_info(x)
  cat("<mcplite connection> ", x$name, " (", x$transport, ": ", x$target, ")\n", sep = "")
  server <- info$server
  if (is.list(server) && is_scalar_string(server$name)) {
    cat("Server: ", server$name, if (is_scalar_string(server$version)) paste0(" ", server$version), "\n", sep = "")
  }
  cat("Protocol: ", info$protocol_version, " (", info$era, ")\n", sep = "")
  if (!info$open) {
    cat("Closed.\n")
  }
  invisible(x)
}

# --- Connection methods --------------------------------------------------------
# The one place that knows what a connection holds: an environment with the
# engine's connection (`ptr`, rust/mcplite-r/src/client.rs), its `name`,
# `transport` ("stdio", "http", "memory"), `target` and default `timeout`. Every
# exported function uses a connection only through these.

new_connection <- function(ptr, name, transport, target, timeout) {
  conn <- new.env(parent = emptyenv())
  conn$ptr <- ptr
  conn$name <- name
  conn$transport <- transport
  conn$target <- target
  conn$timeout <- timeout
  class(conn) <- "mcplite_connection"
  conn
}

conn_info <- function(x) client_info(x$ptr)
conn_check_open <- function(x) client_check_open(x$ptr)
conn_list_tools <- function(x, timeout) client_list_tools(x$ptr, timeout)
conn_input_schema <- function(x, tool, timeout) client_input_schema(x$ptr, tool, timeout)
conn_call <- function(x, tool, args_json, progress, timeout, max_time) {
  if (identical(x$transport, "memory")) {
    # The tool runs now, in this process: as a server runs it (R/server.R).
    old <- serving_options()
    on.exit(options(old), add = TRUE)
  }
  client_call(x$ptr, tool, args_json, progress, timeout, max_time)
}
conn_wait <- function(x, id) client_wait(x$ptr, id)
conn_cancel <- function(x, id, reason) client_cancel(x$ptr, id, reason)
conn_close <- function(x) client_close(x$ptr)
conn_stderr <- function(x) client_stderr(x$ptr)

is_connection <- function(x) inherits(x, "mcplite_connection") && is.environment(x)

is_connection_list <- function(x) {
  is.list(x) && !is.object(x) && length(x) > 0L && all(vapply(x, is_connection, logical(1)))
}

check_connection <- function(x, open = TRUE) {
  if (!is_connection(x)) {
    abort("`x` must be a connection made by `mcp_connect()`, not ", describe(x), ".")
  }
  if (open) {
    conn_check_open(x)
  }
  invisible(x)
}

# The distinct connections used by a list of tools made by mcp_tools().
tools_connections <- function(tools) {
  conns <- list()
  for (t in tools) {
    conn <- if (is_mcplite_tool(t) && !is.null(environment(t))) {
      get0("proxied_connection", envir = environment(t), inherits = FALSE)
    }
    if (is_connection(conn) && !any(vapply(conns, identical, logical(1), conn))) {
      conns[[length(conns) + 1L]] <- conn
    }
  }
  conns
}

check_dots_empty <- function(...) {
  if (...length() > 0L) {
    abort("`...` must be empty; name the arguments after `...`, for example `timeout = 10`.")
  }
}

check_seconds <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x <= 0) {
    abort("`", arg, "` must be a positive number of seconds (or Inf), not ", describe(x), ".")
  }
  as.double(x)
}

client_versions <- function() protocol_constants()$client_versions

check_protocol <- function(protocol) {
  if (!is_scalar_string(protocol) || !protocol %in% c("auto", client_versions())) {
    abort("`protocol` must be \"auto\" or one of ",
          paste0("\"", client_versions(), "\"", collapse = ", "), ", not ",
          if (is_scalar_string(protocol)) paste0("\"", protocol, "\"") else describe(protocol), ".")
  }
  protocol
}

check_connection_name <- function(name, default) {
  if (is.null(name)) {
    return(default)
  }
  if (!is_scalar_string(name) || !nzchar(name)) {
    abort("`name` must be NULL or a single non-empty string, not ", describe(name), ".")
  }
  name
}

probe_timeout <- function() {
  v <- getOption("mcplite.client_probe_timeout", 5)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v <= 0) {
    abort("Option `mcplite.client_probe_timeout` must be a positive number of seconds, not ",
          describe(v), ".")
  }
  as.double(v)
}

max_message <- function() {
  v <- getOption("mcplite.client_max_message", 64 * 1024^2)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 65536) {
    abort("Option `mcplite.client_max_message` must be a number of bytes of at least 65536, not ",
          describe(v), ".")
  }
  as.double(v)
}

client_version <- function() server_version()

# Environment variables a server inherits (see ?mcp_connect).
inherited_env_names <- c(
  "HOME", "USER", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LANGUAGE",
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
  "http_proxy", "https_proxy", "no_proxy", "all_proxy",
  "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
  "R_LIBS", "R_LIBS_USER", "R_LIBS_SITE"
)

inherited_env <- function() {
  env <- Sys.getenv()
  keep <- names(env) %in% inherited_env_names | grepl("^(LC_|XDG_[A-Z_]+_(HOME|DIR|DIRS)$)", names(env))
  vapply(env[keep], identity, character(1), USE.NAMES = TRUE)
}

check_arguments <- function(arguments) {
  if (!is.list(arguments) || is.object(arguments)) {
    abort("`arguments` must be a named list of argument values, not ", describe(arguments), ".")
  }
  if (length(arguments) > 0L && !is_named_list(arguments, empty_ok = FALSE)) {
    abort("`arguments` must have unique, non-empty names (one per tool argument).")
  }
  invisible(arguments)
}

# Named list -> the JSON object of a tools/call, shaped by the tool's input
# schema when there is one (RULES K5).
arguments_json <- function(arguments, schema = NULL) {
  if (length(arguments) == 0L) {
    return("{}")
  }
  if (is.list(schema)) {
    arguments <- shape_arguments(arguments, schema)
  }
  tryCatch(
    payload_json_impl(arguments, FALSE),
    mcplite_error = function(e) {
      abort("`arguments` cannot be converted to JSON: ", conditionMessage(e),
            class = setdiff(class(e), c("mcplite_error", "error", "condition")))
    }
  )
}

# RULES K5.2. The JSON types a schema (a list) allows, NULL when it does not
# say, looking through `anyOf`/`oneOf` branches; `nullable: true` and an
# `enum` holding null allow null. Called for every argument of every call:
# kept to a few primitive operations in the common case.
schema_types <- function(schema) {
  type <- schema[["type"]]
  types <- if (is.character(type)) type else if (is.list(type)) as.character(unlist(type, use.names = FALSE))
  if (!is.null(schema[["anyOf"]]) || !is.null(schema[["oneOf"]])) {
    for (b in c(schema[["anyOf"]], schema[["oneOf"]])) {
      if (is.list(b)) types <- c(types, schema_types(b))
    }
  }
  if (isTRUE(schema[["nullable"]])) {
    types <- c(types, "null")
  }
  enum <- schema[["enum"]]
  if (is.list(enum) && any(vapply(enum, is.null, TRUE))) {
    types <- c(types, "null")
  }
  types
}

# The first subschema (the schema itself, or an `anyOf`/`oneOf` branch)
# that allows `type`.
schema_branch <- function(schema, type) {
  if (any(unlist(schema[["type"]], use.names = FALSE) == type)) {
    return(schema)
  }
  for (b in c(schema[["anyOf"]], schema[["oneOf"]])) {
    if (is.list(b) && any(schema_types(b) == type)) return(schema_branch(b, type))
  }
  NULL
}

# Does the JSON type of a length-one atomic value (not NA) fit `types`?
scalar_fits <- function(value, types) {
  if (is.character(value)) return(any(types == "string"))
  if (is.logical(value)) return(any(types == "boolean"))
  any(types == "number") || (any(types == "integer") && (is.integer(value) || value == trunc(value)))
}

# Each named element of `value` shaped by its property's schema (exact
# names, RULES section 0).
shape_arguments <- function(value, schema) {
  props <- schema[["properties"]]
  extra <- schema[["additionalProperties"]]
  if (!is.list(props) && !is.list(extra)) {
    return(value)
  }
  nms <- names(value)
  for (i in seq_along(value)) {
    sub <- if (is.list(props)) props[[nms[[i]]]]
    if (is.null(sub) && is.list(extra)) sub <- extra
    v <- value[[i]]
    if (is.list(sub) && !is.null(v)) {
      shaped <- shape_value(v, sub)
      if (!identical(shaped, v)) value[i] <- list(shaped)
    }
  }
  value
}

# One R value shaped by its schema: a length-one vector where only an array
# fits becomes an array (I()), an empty list where an object fits `{}`, a
# single NA where null fits a logical NA (null), NA elements of a vector
# whose items may be null become nulls; objects and arrays of lists are
# shaped inside. Classed values (factors, dates, I(), data frames) are left
# to the encoder.
shape_value <- function(value, schema) {
  if (is.object(value)) {
    return(value)
  }
  types <- schema_types(schema)
  if (is.null(types)) {
    return(value)
  }
  if (is.atomic(value)) {
    if (length(value) == 1L && is.na(value) && any(types == "null")) {
      return(NA)
    }
    if (!(any(types == "array")) || is.null(value)) {
      return(value)
    }
    if (anyNA(value)) {
      items <- schema_branch(schema, "array")[["items"]]
      if (is.list(items) && any(schema_types(items) == "null")) {
        return(lapply(value, function(v) if (is.na(v)) NA else v))
      }
    }
    if (length(value) == 1L && !(!is.na(value) && scalar_fits(value, types))) {
      return(I(value))
    }
    return(value)
  }
  if (is.list(value)) {
    if (length(value) == 0L && any(types == "object") && !(any(types == "array"))) {
      return(structure(list(), names = character()))
    }
    if (!is.null(names(value)) && any(types == "object")) {
      return(shape_arguments(value, schema_branch(schema, "object")))
    }
    if (is.null(names(value)) && any(types == "array")) {
      items <- schema_branch(schema, "array")[["items"]]
      if (is.list(items)) {
        value <- lapply(value, function(v) if (is.null(v)) v else shape_value(v, items))
      }
    }
  }
  value
}

# A listed tool, in R spellings.
tool_definition <- function(t) {
  ann <- t[["annotations"]]
  if (is.list(ann) && length(ann) > 0L) {
    wire <- unname(annotation_keys)
    keys <- names(ann)
    hit <- match(keys, wire)
    keys[!is.na(hit)] <- names(annotation_keys)[hit[!is.na(hit)]]
    names(ann) <- keys
  }
  list(
    name = t[["name"]],
    title = t[["title"]],
    description = t[["description"]],
    input_schema = t[["inputSchema"]],
    output_schema = t[["outputSchema"]],
    annotations = ann,
    meta = t[["_meta"]]
  )
}

# A CallToolResult -> mcplite_tool_result, or a mcplite_error_tool.
call_result <- function(x, tool, value) {
  blocks <- value[["content"]]
  if (!is.list(blocks)) blocks <- list()
  content <- lapply(blocks, block_from_wire)
  is_error <- isTRUE(value[["isError"]])
  meta <- value[["_meta"]]
  if (!is.list(meta) || is.null(names(meta))) meta <- list()
  res <- new_tool_result(content, value[["structuredContent"]], is_error, meta)
  if (is_error) {
    texts <- vapply(content, function(b) if (identical(b$type, "text")) b$text else NA_character_, character(1))
    text <- paste(texts[!is.na(texts)], collapse = "\n")
    abort(
      if (nzchar(text)) text else paste0("Tool `", tool, "` on MCP server `", x$name, "` reported an error."),
      class = error_class("tool"), fields = list(text = text, result = res, tool = tool, server = x$name)
    )
  }
  res
}

# One wire content block -> a content_*() object. Annotations or metadata
# that fail mcplite's checks are dropped (with a warning); a block of an
# unknown type becomes a text block holding its JSON.
block_from_wire <- function(b) {
  # The common case, a plain text block: what content_text(text) makes.
  if (length(b) == 2L && identical(b[["type"]], "text") && is_scalar_string(b[["text"]])) {
    return(structure(list(type = "text", text = b[["text"]], annotations = list(), meta = list()),
                     class = c("mcplite_content_text", "mcplite_content")))
  }
  build <- function(ann, meta) {
    switch(b[["type"]] %||% "",
      text = content_text(b[["text"]], ann, meta),
      image = content_image(b[["data"]], b[["mimeType"]], ann, meta),
      audio = content_audio(b[["data"]], b[["mimeType"]], ann, meta),
      resource_link = content_resource_link(
        b[["uri"]], b[["name"]], b[["title"]], b[["description"]], b[["mimeType"]],
        b[["size"]], ann, meta
      ),
      resource = {
        r <- b[["resource"]]
        content_resource(r[["uri"]], r[["text"]], r[["blob"]], r[["mimeType"]], ann, meta)
      },
      NULL
    )
  }
  ann <- wire_annotations(b[["annotations"]])
  meta <- b[["_meta"]]
  if (!is.list(meta) || is.null(names(meta))) meta <- list()
  block <- tryCatch(build(ann, meta), mcplite_error = function(e) e)
  if (inherits(block, "mcplite_error") && (length(ann) > 0L || length(meta) > 0L)) {
    first <- conditionMessage(block)
    block <- tryCatch(build(list(), list()), mcplite_error = function(e) e)
    if (!inherits(block, "mcplite_error")) {
      warning("Dropped the annotations and metadata of a content block: ", first, call. = FALSE)
    }
  }
  if (is.null(block) || inherits(block, "mcplite_error")) {
    json <- tryCatch(fixed_json(b), error = function(e) "{}")
    warning("Kept a content block mcplite cannot represent as text: ", substr(json, 1L, 200L), call. = FALSE)
    block <- content_text(json)
  }
  block
}

wire_annotations <- function(a) {
  if (!is.list(a) || length(a) == 0L || is.null(names(a))) {
    return(list())
  }
  if (is.list(a[["audience"]])) {
    a[["audience"]] <- as.character(unlist(a[["audience"]]))
  }
  names(a)[names(a) == "lastModified"] <- "last_modified"
  a
}

# A listed tool -> an mcplite tool that calls it, or NULL (with a warning).
# A remote progress report, passed on to the client of the running server.
# A report mcp_progress() refuses (not above the last one, not a number) is
# dropped: the remote server's mistakes do not fail the call.
forward_progress <- function(progress, total, message) {
  tryCatch(mcp_progress(progress, total, message), mcplite_error_progress = function(e) invisible(FALSE))
}

# The tool's function keeps the connection as `proxied_connection` in its
# environment, where mcp_close() finds it (RULES K8.3). While it serves a
# call that asked for progress, the remote call asks too and each report is
# passed on (RULES K8.2); a cancellation interrupts the wait, which cancels
# the remote call.
proxy_tool <- function(conn, def, prefix) {
  remote <- def$name
  local_name <- paste0(prefix, remote)
  proxied_connection <- conn
  fun <- function(...) {
    args <- list(...)
    if (length(args) > 0L && !is_named_list(args, empty_ok = FALSE)) {
      abort("The arguments of `", local_name, "` must be named, e.g. `", local_name, "(x = 1)`.")
    }
    forward <- if (progress_listening()) forward_progress
    res <- mcp_call(proxied_connection, remote, args, progress = forward)
    if (length(res$content) == 0L) {
      res$content <- if (is.null(res$structured_content)) {
        list(content_text(""))
      } else {
        tool_result(structured_content = res$structured_content)$content
      }
    }
    res
  }
  make <- function(annotations) {
    tool(
      fun,
      description = if (is_scalar_string(def$description)) def$description else "",
      arguments = type_from_schema(text = def$input_schema %||% list(type = "object")),
      name = local_name,
      annotations = annotations,
      output_schema = if (is.list(def$output_schema)) type_from_schema(text = def$output_schema)
    )
  }
  ann <- if (is.list(def$annotations) && !is.null(names(def$annotations))) def$annotations else list()
  t <- tryCatch(make(ann), mcplite_error = function(e) e)
  if (inherits(t, "mcplite_error") && length(ann) > 0L) {
    first <- conditionMessage(t)
    t <- tryCatch(make(list()), mcplite_error = function(e) e)
    if (!inherits(t, "mcplite_error")) {
      warning("Dropped the annotations of tool `", remote, "` from MCP server `", conn$name, "`: ",
              first, call. = FALSE)
    }
  }
  if (inherits(t, "mcplite_error")) {
    warning("Skipped tool `", remote, "` of MCP server `", conn$name, "`: ", conditionMessage(t),
            call. = FALSE)
    return(NULL)
  }
  t
}

# --- configuration files -------------------------------------------------------

read_client_config <- function(path) {
  if (!is_scalar_string(path)) {
    abort("`path` must be the path of a configuration file (a single string), not ", describe(path), ".")
  }
  file <- path.expand(path)
  if (!file.exists(file) || dir.exists(file)) {
    abort("`path` must be an existing configuration file; \"", path, "\" does not exist.")
  }
  text <- paste(readLines(file, encoding = "UTF-8", warn = FALSE), collapse = "\n")
  cfg <- tryCatch(
    json_decode(text),
    error = function(e) abort("`path` is not valid JSON (\"", path, "\"): ", conditionMessage(e))
  )
  servers <- if (is.list(cfg)) cfg[["mcpServers"]]
  if (!is.list(servers) || (length(servers) > 0L && is.null(names(servers)))) {
    abort("`path` must hold a JSON object with an `mcpServers` object (\"", path, "\").")
  }
  for (nm in names(servers)) {
    check_config_entry(nm, servers[[nm]])
  }
  servers
}

check_config_entry <- function(nm, e) {
  field <- function(f = NULL) paste0("`mcpServers$", nm, if (!is.null(f)) paste0("$", f), "`")
  if (!is.list(e) || (length(e) > 0L && is.null(names(e)))) {
    abort(field(), " must be an object.")
  }
  if (isTRUE(e$disabled)) {
    return(invisible())
  }
  type <- e[["type"]]
  transports <- c("stdio", "http", "streamable-http", "streamableHttp")
  if (!is.null(type) && !(is_scalar_string(type) && type %in% transports)) {
    abort(field("type"), " is ", if (is_scalar_string(type)) paste0("\"", type, "\"") else describe(type),
          "; only \"stdio\", \"http\" and \"streamable-http\" servers are supported.")
  }
  has_cmd <- !is.null(e[["command"]])
  has_url <- !is.null(e[["url"]])
  if (has_cmd == has_url) {
    abort(field(), " must have either `command` (a local server) or `url` (a remote server).")
  }
  strings <- function(x) is.list(x) && all(vapply(x, is_scalar_string, logical(1)))
  object_of_strings <- function(x) strings(x) && (length(x) == 0L || !is.null(names(x)))
  if (has_cmd) {
    if (!is_scalar_string(e$command)) abort(field("command"), " must be a string.")
    if (!is.null(e$args) && !strings(e$args)) abort(field("args"), " must be an array of strings.")
    if (!is.null(e$env) && !object_of_strings(e$env)) abort(field("env"), " must be an object of strings.")
    if (!is.null(e$cwd) && !is_scalar_string(e$cwd)) abort(field("cwd"), " must be a string.")
  } else {
    if (!is_scalar_string(e$url)) abort(field("url"), " must be a string.")
    if (!is.null(e$headers) && !object_of_strings(e$headers)) {
      abort(field("headers"), " must be an object of strings.")
    }
  }
  if (!is.null(e$timeout) && !(is.numeric(e$timeout) && length(e$timeout) == 1L && e$timeout > 0)) {
    abort(field("timeout"), " must be a positive number of seconds.")
  }
  invisible()
}

connect_entry <- function(nm, e) {
  timeout <- if (is.null(e$timeout)) 60 else as.double(e$timeout)
  if (!is.null(e$url)) {
    return(mcp_connect(url = e$url, headers = unlist(e$headers), name = nm, timeout = timeout))
  }
  env <- if (length(e$env) > 0L) unlist(e$env) else NULL
  mcp_connect(
    e$command, as.character(unlist(e$args)), env = env, cwd = e$cwd,
    name = nm, timeout = timeout
  )
}

# --- HTTP --------------------------------------------------------------------------

# `${NAME}` in header values -> the environment variable's value. The names
# and values are then checked by the engine (RULES K4.1).
interpolate_headers <- function(headers) {
  if (is.null(headers) || length(headers) == 0L) {
    return(character())
  }
  values <- named_strings(headers)
  nms <- names(values)
  if (is.null(values)) {
    abort("`headers` must be a named character vector (or a named list of single strings).")
  }
  for (i in seq_along(values)) {
    v <- values[[i]]
    refs <- regmatches(v, gregexpr("\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}", v))[[1L]]
    for (ref in unique(refs)) {
      var <- substr(ref, 3L, nchar(ref) - 1L)
      val <- Sys.getenv(var, unset = NA)
      if (is.na(val)) {
        abort("`headers$", nms[[i]], "` refers to the environment variable `", var, "`, which is not set.")
      }
      v <- gsub(ref, val, v, fixed = TRUE)
    }
    values[[i]] <- v
  }
  names(values) <- nms
  values
}

connect_http <- function(url, headers, ca_file, name, timeout, protocol) {
  if (!is_scalar_string(url) || !grepl("^https?://[^/?#]+", url)) {
    abort("`url` must be a single http:// or https:// URL, not ",
          if (is_scalar_string(url)) paste0("\"", url, "\"") else describe(url), ".")
  }
  headers <- interpolate_headers(headers)
  ca_file <- check_ca_file(ca_file)
  host <- sub("^https?://([^/?#]+).*$", "\\1", url)
  host <- sub("^[^@]*@", "", host)
  name <- check_connection_name(name, host)
  ptr <- client_connect_http(
    url, unname(headers), names(headers) %||% character(), if (identical(protocol, "auto")) NULL else protocol,
    timeout, probe_timeout(), max_message(), client_version(), ca_file, name
  )
  new_connection(ptr, name, "http", url, timeout)
}

# The CA bundle for https:// URLs: `ca_file`, else SSL_CERT_FILE, else NULL
# (the platform's trust store).
check_ca_file <- function(ca_file) {
  what <- "`ca_file`"
  if (is.null(ca_file)) {
    env <- Sys.getenv("SSL_CERT_FILE")
    if (!nzchar(env)) {
      return(NULL)
    }
    ca_file <- env
    what <- "The environment variable SSL_CERT_FILE"
  }
  if (!is_scalar_string(ca_file) || !file.exists(ca_file) || dir.exists(ca_file)) {
    abort(what, " must be the path of a PEM file of CA certificates, not ",
          if (is_scalar_string(ca_file)) paste0("\"", ca_file, "\"") else describe(ca_file), ".")
  }
  normalizePath(ca_file, mustWork = TRUE)
}
