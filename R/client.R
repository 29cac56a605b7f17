# R as an MCP client (RULES section 13): connect to a server (a child
# process over stdio, or a Streamable HTTP endpoint), list and call its
# tools, turn them into mcplite tools. The protocol work (process, framing,
# JSON-RPC, era negotiation, retries, reserved headers, timeouts,
# cancellation, error messages) is done by the engine
# (rust/engine/src/client/); rust/mcplite-r/src/client.rs is the glue,
# reached through the wrappers of R/bridge-wrappers.R, whose errors
# bridge_value() raises (RULES K1). Waiting happens in short slices so R
# keeps control of interrupts and of the progress callback.
#
# This file holds the exported functions and the tools that call a remote
# tool (mcp_tools()); the rest of the client is one concept per file:
# - client-connection.R: what a connection holds (the conn_* methods, the
#   one place that knows) and the settings it is made with;
# - client-arguments.R: arguments checked and shaped by the tool's input
#   schema (K5);
# - client-results.R: listed tools and call results converted (K6);
# - client-http.R: connections to Streamable HTTP endpoints;
# - client-memory.R: connections in memory (K9);
# - client-config.R: configuration files, written (mcp_client_config()) and
#   read (mcp_connect_config()).

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
#' `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`) cannot be set. A server that
#' wants its users to sign in is signed in to with OAuth (see "Signing in"),
#' unless `headers` set `Authorization` themselves (a static token).
#'
#' @section Signing in:
#' When an HTTP server answers 401 (or 403 asking for more scopes), the
#' client signs in the way the MCP authorization specification describes:
#' it finds the server's authorization server (protected resource metadata,
#' then the authorization server's metadata), registers itself there when
#' needed (dynamic client registration, or a client ID metadata document
#' given as `oauth$client_metadata_url`), and opens the authorization page
#' in the browser (an interactive session; otherwise the URL is printed).
#' After you sign in there, the browser is sent back to a listener on this
#' machine, the client exchanges the code (with PKCE) for tokens and sends
#' the request again. Tokens are kept in a file only you can read under
#' `tools::R_user_dir("mcplite", "cache")` (or `oauth$cache_dir`, or the
#' option `mcplite.oauth_cache_dir`), refreshed when they expire, and never
#' printed. A program that is not interactive can show the page with its
#' own user agent: the option `mcplite.oauth_user_agent` (a function called
#' with the URL) or the environment variable `MCPLITE_OAUTH_USER_AGENT` (a
#' command run with the URL as its last argument).
#'
#' `oauth` takes the settings of mcptools' configuration files:
#' `authorization_server` and `resource` (instead of the discovered ones),
#' `scope` (added to the discovered scopes, or instead of them with
#' `scope_mode = "override"`), `client_info` (a pre-registered client: a list
#' with `client_id` and optionally `client_secret` and
#' `token_endpoint_auth_method`), `manual_client_info` (used only when the
#' server offers no registration), `client_metadata` (members added to a
#' dynamic registration), `client_metadata_url`, `redirect_uri` or
#' `callback_host`, `callback_port` and `callback_path` (the loopback
#' listener; by default `http://127.0.0.1:<free port>/callback`), `cache_dir`,
#' `allow_http` (sign in to a plain `http://` server on another machine, or
#' with an `http://` authorization server, which is otherwise refused) and
#' `timeout` (seconds you have at the sign-in page, default 300: the
#' sign-in's own clock. The connection's `timeout` and a call's `timeout`
#' and `max_time` do not run while the page is open, so a short `timeout`
#' never cuts a sign-in short; when `oauth$timeout` runs out the error says
#' so).
#'
#' Programs that run without a user sign in without a page, with the
#' client-credentials extension: `grant_type = "client_credentials"` (the
#' default when the authorization server offers only that grant) and a
#' `client_info` that authenticates the client, either with
#' `client_secret` (sent as `client_secret_basic`, or `client_secret_post`
#' when the server takes only that or `token_endpoint_auth_method` says so)
#' or with a private key (`token_endpoint_auth_method = "private_key_jwt"`):
#' `private_key_file`, the path of a PEM (PKCS#8) key, or `private_key_env`,
#' the name of an environment variable that holds it, and optionally
#' `token_endpoint_auth_signing_alg` (`"ES256"`, `"RS256"`, ...; by default
#' the first the server lists that fits the key). The client then signs a
#' short-lived assertion (RFC 7523) for each token request. A
#' `client_secret` may be written `"${NAME}"` to take it from the
#' environment variable `NAME`. Keys and secrets are never printed.
#'
#' Cross-app access (the enterprise-managed authorization extension):
#' `identity_provider = list(token_endpoint = , client_id = , id_token_env =
#' )` (or `issuer` instead of `token_endpoint`, `id_token_file` instead of
#' `id_token_env`, and optionally `client_secret`) exchanges the ID token
#' you got from your organisation's identity provider for a grant for this
#' server, which the client (`client_info`) then trades for a token, without
#' a page.
#'
#' @section Proxies and certificate authorities:
#' HTTP requests (to the server and every sign-in request) honour the
#' standard variables as curl reads them: `https://` URLs go through the
#' proxy of `https_proxy` or `HTTPS_PROXY`, `http://` URLs through that of
#' `http_proxy` or `HTTP_PROXY`, either else through `ALL_PROXY`; hosts
#' listed in `NO_PROXY` (comma-separated; a name covers the names under it;
#' `*` for all) are reached directly. A proxy is `http://host:port`
#' (optionally `user:password@`). The CA bundle is `ca_file`, else the file
#' named by `SSL_CERT_FILE`, else by `CURL_CA_BUNDLE`, else the platform's
#' trust store (see "HTTPS").
#'
#' With a legacy server (protocol 2025-11-25 and earlier), an answer stream
#' that the server closes before the answer is resumed the way the protocol
#' describes: after the time the server asked for (its `retry` field), the
#' client reconnects with a GET request carrying the last event id it saw
#' (`Last-Event-ID`) and reads the answer from there.
#'
#' @section In memory:
#' `mcp_connect(tools = tools)` takes the tools as [mcp_server()] does (one
#' tool or a list, with `instructions`), or a handler made by [mcp_handler()]
#' (which carries its own `instructions` and `session_tools`). Each
#' [mcp_call()] runs the tool at once in this R session, as a server would:
#' the arguments are validated against the tool's schema, and the result or
#' the error comes back as from a server over stdio. The tool's warnings and
#' messages are signalled again by [mcp_call()] once it returns (so
#' `expect_warning()` and `expect_message()` catch them, and they are not
#' written to standard error), and `progress` callbacks get the tool's
#' [mcp_progress()] reports (after the tool returned, in order; no
#' heartbeats, unless the environment variable `MCPLITE_PROGRESS_INTERVAL`
#' asks for them). A call still running after `timeout` seconds without a
#' report is interrupted (its `on.exit()` code runs) and fails with
#' `mcplite_error_timeout`, as over stdio. `mcp_close()` returns `"closed
#' (in memory)"`; [local_mcp_connect()] closes the connection when a test
#' ends.
#'
#' @section Questions from the server:
#' A server's tool may ask the user something (elicitation: a message and a
#' form of a few fields) or ask the client's language model (sampling)
#' while it runs. A connection answers when it is given a function for it;
#' the call waits meanwhile (the time it takes does not count against
#' `timeout`). Both protocol eras work the same way for the function: in
#' 2025-era sessions the server's request is answered on the call's own
#' stream, and a 2026-07-28 server's `input_required` answer is followed by
#' the same call sent again with the answers.
#'
#' `elicitation` is called with one list: `message` (what to ask), `schema`
#' (the requested form, a JSON schema as a list), `defaults` (the fields'
#' default values, by name) and `server` (the connection's name). It returns
#' a named list to accept (fields it leaves out take their defaults; values
#' are encoded as the schema's types say), `"decline"` (or `NULL`) to decline,
#' or `"cancel"`.
#'
#' `sampling` is called with one list: `messages` (the conversation, each a
#' list with `role` and `content`), `system_prompt`, `max_tokens`, `params`
#' (the whole request) and `server`. It returns the reply's text, or a list
#' with `text` and optionally `model` and `stop_reason`.
#'
#' An error in either function ends the call: the error is raised from
#' [mcp_call()] and the server is told the call was cancelled. A function
#' that returns something else fails with `mcplite_error_ask_answer`. At
#' most 64 questions of one call reach the functions.
#'
#' The questions are the server's words: show an elicitation's `message` as
#' coming from the server (it may ask for anything, a password included),
#' and treat a sampling request's messages as untrusted input to your model.
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
#'   variable `SSL_CERT_FILE`, else `CURL_CA_BUNDLE`, when one is set. See the
#'   HTTPS section.
#' @param name A short name for the server, used in messages and printing.
#'   Defaults to the command's file name or the URL's host.
#' @param timeout Seconds the whole connection attempt may take (a server
#'   that has not completed the handshake by then is stopped, and the error
#'   comes within half a second), and the default for each call (see
#'   [mcp_call()]). `Inf` waits forever.
#' @param protocol `"auto"` (the default) negotiates; a version string
#'   (`"2026-07-28"`, `"2025-11-25"`, `"2025-06-18"` or `"2024-11-05"`) insists
#'   on that version.
#' @param oauth With `url`: `NULL` (the default) signs in with OAuth when the
#'   server asks for it, `FALSE` never does, and a list of settings (see
#'   "Signing in") signs in with those.
#' @param allow_http With `url`: `FALSE` (the default) refuses to send
#'   credentials in clear text: a plain `http://` URL on another machine (not
#'   `localhost`, `127.0.0.0/8` or `::1`) is refused when `headers` carry
#'   credentials (`Authorization`, `Proxy-Authorization`, `Cookie`, or a
#'   header whose name has `key`, `token`, `secret`, `auth`, `session` or
#'   `password` in it), and signing in to it is refused. `TRUE` allows both
#'   (an explicit, unsafe choice: anyone on the network path can read and
#'   reuse the credentials); it is also `oauth$allow_http` unless that is
#'   given.
#' @param tools Tools to connect to in memory (instead of `command` or
#'   `url`): a tool made by [tool()], a list of tools, or a handler made by
#'   [mcp_handler()].
#' @param instructions With `tools` (not a handler), the server's
#'   instructions, as for [mcp_server()].
#' @param elicitation,sampling With `command` or `url`: `NULL` (the default),
#'   or a function that answers the server's questions during [mcp_call()]
#'   (see "Questions from the server"). Giving one declares the capability
#'   to the server.
#' @param log_level With `command` or `url`: `NULL` (the default: none), or
#'   the least severe level of the server's log messages to show during
#'   [mcp_call()], one of `"debug"`, `"info"`, `"notice"`, `"warning"`,
#'   `"error"`, `"critical"`, `"alert"` and `"emergency"`. Each is signalled
#'   as an R message of class `mcplite_server_log` (with fields `server`,
#'   `level`, `logger` and `data`), so `suppressMessages()` hides them.
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
                        protocol = "auto", tools = NULL, instructions = NULL, oauth = NULL,
                        allow_http = FALSE, elicitation = NULL, sampling = NULL, log_level = NULL) {
  check_dots_empty(...)
  if (sum(!is.null(command), !is.null(url), !is.null(tools)) != 1L) {
    abort_arg("Supply exactly one of `command` (a server to start), `url` (a remote server) and ",
              "`tools` (tools served in memory).")
  }
  timeout <- check_seconds(timeout, "timeout")
  protocol <- check_protocol(protocol)
  if (!is_true_false(allow_http)) {
    abort_arg("`allow_http` must be TRUE or FALSE, not ", describe(allow_http), ".")
  }
  check_ask_handler(elicitation)
  check_ask_handler(sampling)
  log_level <- check_log_level(log_level)
  if (!is.null(tools)) {
    if (!identical(args, character()) || !is.null(env) || !is.null(cwd) || !is.null(headers) ||
        !is.null(ca_file) || !is.null(oauth) || allow_http) {
      abort_arg("`args`, `env`, `cwd`, `headers`, `ca_file`, `oauth` and `allow_http` do not apply to `tools`.")
    }
    if (!is.null(elicitation) || !is.null(sampling) || !is.null(log_level)) {
      abort_arg("`elicitation`, `sampling` and `log_level` apply to `command` and `url`, not to `tools` ",
                "(in memory a tool's messages and warnings are signalled by `mcp_call()`).")
    }
    return(connect_memory(tools, name, timeout, protocol, instructions))
  }
  capabilities <- client_capabilities_json(elicitation, sampling)
  if (!is.null(instructions)) {
    abort_arg("`instructions` applies to `tools`, not to `command` or `url`.")
  }
  if (!is.null(url)) {
    if (!identical(args, character()) || !is.null(env) || !is.null(cwd)) {
      abort_arg("`args`, `env` and `cwd` apply to `command`, not to `url`.")
    }
    conn <- connect_http(url, headers, ca_file, name, timeout, protocol, oauth, allow_http, capabilities,
                         log_level)
    return(conn_set_answers(conn, elicitation, sampling))
  }
  if (!is.null(headers) || !is.null(ca_file) || !is.null(oauth) || allow_http) {
    abort_arg("`", if (!is.null(headers)) "headers" else if (!is.null(ca_file)) "ca_file" else "oauth",
              "` applies to `url`, not to `command`.")
  }
  check_string(command, allow_empty = FALSE)
  if (!is.character(args) || anyNA(args) || is.object(args)) {
    abort_arg("`args` must be a character vector without NA, not ", describe(args), ".")
  }
  env <- check_env(env)
  if (!is.null(cwd)) {
    if (!is_scalar_string(cwd) || !dir.exists(cwd)) {
      abort_arg("`cwd` must be NULL or the path of an existing directory, not ",
                if (is_scalar_string(cwd)) paste0("\"", cwd, "\"") else describe(cwd), ".")
    }
    cwd <- normalizePath(cwd, mustWork = TRUE)
  }
  name <- check_connection_name(name, basename(command))
  child_env <- c(inherited_env(), env)
  child_env <- child_env[!duplicated(names(child_env), fromLast = TRUE)]
  ptr <- client_connect_stdio(
    command, unname(args), child_env, cwd, if (identical(protocol, "auto")) NULL else protocol,
    timeout, probe_timeout(), max_message(), client_version(), capabilities, log_level, name
  )
  conn <- new_connection(ptr, name, "stdio", paste(c(command, args), collapse = " "), timeout)
  conn_set_answers(conn, elicitation, sampling)
}

#' @rdname mcp_connect
#' @export
mcp_connect_script <- function(script, args = character(), ..., env = NULL, name = NULL,
                               timeout = 60, protocol = "auto", elicitation = NULL, sampling = NULL,
                               log_level = NULL) {
  check_dots_empty(...)
  if (!is_scalar_string(script) || !file.exists(script) || dir.exists(script)) {
    abort_arg("`script` must be the path of an existing R script, not ",
              if (is_scalar_string(script)) paste0("\"", script, "\"") else describe(script), ".")
  }
  script <- normalizePath(script, mustWork = TRUE)
  env <- check_env(env)
  libs <- c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  mcp_connect(
    rscript_path(), c("--vanilla", script, args),
    env = c(libs, env[names(env) != "R_LIBS"], env[names(env) == "R_LIBS"]),
    name = name %||% basename(script), timeout = timeout, protocol = protocol,
    elicitation = elicitation, sampling = sampling, log_level = log_level
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
#'   true`). The message names the tool and the server and ends with the
#'   text of the error; the condition's `text` holds that text alone,
#'   `tool` the tool's name and `result` the whole result.
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
#'   progress the server reports; by default ten times `timeout`, except
#'   while a task is followed (see `task`), which is waited for as long as it
#'   runs unless `max_time` is given.
#' @param task How a call may run as a task on the server (see
#'   [mcp_task_status()]): `"auto"` (the default) lets the server run it as
#'   one when the tool requires it (2025-11-25) or the server decides
#'   (2026-07-28), and follows the task to its result, its status messages
#'   going to `progress`; `"never"` calls as before tasks; `"handle"` asks
#'   for a task where the tool allows it and returns its handle (class
#'   `mcplite_task`) at once, for [mcp_task_result()] later (a call the
#'   server answers directly returns its result as usual).
#' @param simplify `FALSE` (the default) or `TRUE`: simplify the structured
#'   content as a tool's R value would look: an array of objects whose
#'   members are single values (rows) becomes a data frame, an array of
#'   single values of one type a vector (`null` as `NA`), at any depth.
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
                     max_time = NULL, simplify = FALSE, task = "auto") {
  check_dots_empty(...)
  check_connection(x)
  check_bool(simplify)
  task <- check_choice(task, c("auto", "never", "handle"))
  check_string(tool, what = "a single string (the tool's name)")
  check_arguments(arguments)
  if (conn_ignores(x, tool)) {
    abort("Tool `", tool, "` of MCP server `", x$name, "` is blocked by the `ignore_tools` of its configuration.",
          class = c("mcplite_error_ignored_tool", "mcplite_error_client"), fields = list(server = x$name))
  }
  # A configuration entry's `timeout` bounds each request overall, as in
  # mcptools (RULES K8.4): the call's default `max_time` too.
  default_max <- if (is.null(timeout) && !is.null(x$max_time)) x$max_time
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  given_max <- if (!is.null(max_time)) check_seconds(max_time, "max_time") else default_max
  max_time <- given_max %||% (10 * timeout)
  check_function(progress, allow_null = TRUE)
  # Arguments are shaped by the tool's input schema (RULES K5.2); a call
  # without arguments needs none, so it never makes the client list tools.
  schema <- if (length(arguments) > 0L) conn_input_schema(x, tool, timeout)
  args_json <- arguments_json(arguments, schema)
  ask <- switch(task, auto = "auto", never = "never", handle = "always")
  ev <- conn_call(x, tool, args_json, !is.null(progress), timeout, max_time, ask)
  repeat {
    if (identical(ev$status, "done")) {
      # RULES K14.2: the server runs the call as a task.
      handle <- task_of_result(ev$value)
      if (!is.null(handle) && identical(task, "handle")) {
        return(task_handle(x, handle))
      }
      res <- if (is.null(handle)) {
        call_result(x, tool, ev$value)
      } else {
        follow_task(x, tool, handle, progress, timeout, given_max)
      }
      if (simplify) {
        res$structured_content <- simplify_structured(res$structured_content)
      }
      return(res)
    }
    # progress, or a question (RULES K12): the callback runs in R; if it
    # fails or is interrupted, the request is cancelled on the server
    id <- ev$id
    finished <- FALSE
    on.exit(if (!finished) conn_cancel(x, id, "cancelled by the client"))
    if (identical(ev$status, "ask") || identical(ev$status, "input")) {
      ev <- answer_event(x, ev)
      finished <- TRUE
      next
    }
    if (identical(ev$status, "log")) {
      relay_server_log(x, ev$value)
      finished <- TRUE
      ev <- conn_wait(x, id)
      next
    }
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
    warn("MCP server `", x$name, "` listed tools with invalid `x-mcp-header` annotations, left out: ",
         paste(rejected, collapse = "; "), class = "mcplite_warning_client")
  }
  defs <- lapply(tools, tool_definition)
  names(defs) <- vapply(defs, function(d) d$name %||% "", character(1))
  defs[!conn_ignores(x, names(defs))]
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
#' With several servers (a configuration file, a list of connections), one
#' that cannot be started or reached, or whose tools cannot be listed, gives
#' a warning of class `mcplite_warning_server` naming it and the others'
#' tools are returned; `on_error = "stop"` makes it an error instead.
#'
#' @param x A connection from [mcp_connect()], a list of connections (e.g.
#'   from [mcp_connect_config()]), or the path of a configuration file, which
#'   is passed to [mcp_connect_config()]. `NULL` (the default) reads the
#'   configuration file found as [mcp_connect_config()] describes: the option
#'   `mcplite.config` or `.mcptools_config`, else
#'   `~/.config/mcplite/config.json` or `~/.config/mcptools/config.json`.
#' @param prefix `NULL` (keep the server's names), a string put in front of
#'   every tool name, or `TRUE` to use each connection's name followed by `_`
#'   (useful when several servers have tools with the same name).
#' @param on_error With several servers: `"warn"` (the default) skips a
#'   server that fails with a warning; `"stop"` raises its error (closing the
#'   connections a configuration file opened).
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
mcp_tools <- function(x = NULL, prefix = NULL, on_error = c("warn", "stop")) {
  on_error <- check_choice(on_error, c("warn", "stop"), "on_error")
  from_file <- is.null(x) || is_scalar_string(x)
  if (from_file) {
    x <- mcp_connect_config(x, on_error = on_error)
    if (length(x) == 0L) {
      return(list())
    }
  }
  if (is_connection_list(x)) {
    if (isTRUE(prefix) && (is.null(names(x)) || !all(nzchar(names(x))))) {
      nm <- vapply(x, function(conn) conn$name, character(1))
      names(x) <- nm
    }
    out <- list()
    for (i in seq_along(x)) {
      p <- if (isTRUE(prefix)) paste0(names(x)[[i]] %||% x[[i]]$name, "_") else prefix
      server <- names(x)[[i]] %||% x[[i]]$name
      tools <- tryCatch(mcp_tools(x[[i]], prefix = p), mcplite_error_client = function(err) {
        if (on_error == "stop") {
          if (from_file) mcp_close(x)
          stop(err)
        }
        if (from_file) mcp_close(x[[i]])
        warn_server(if (nzchar(server)) server else x[[i]]$name, err)
        list()
      })
      out <- c(out, tools)
    }
    return(out)
  }
  check_connection(x)
  if (isTRUE(prefix)) {
    prefix <- paste0(x$name, "_")
  }
  if (!is.null(prefix) && !is_scalar_string(prefix)) {
    abort_arg("`prefix` must be NULL, TRUE or a single string, not ", describe(prefix), ".")
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

check_seconds <- function(x, arg) {
  check_number(x, min = 0, exclusive_min = TRUE, allow_infinite = TRUE,
               what = "a positive number of seconds (or Inf)", arg = arg)
  as.double(x)
}

# A remote progress report, passed on to the client of the running server.
# A report mcp_progress() refuses (not above the last one, not a number) is
# dropped: the remote server's mistakes do not fail the call.
forward_progress <- function(progress, total, message) {
  tryCatch(mcp_progress(progress, total, message), mcplite_error_progress = function(e) invisible(FALSE))
}

# A listed tool -> an mcplite tool that calls it, or NULL (with a warning).
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
      abort_arg("The arguments of `", local_name, "` must be named, e.g. `", local_name, "(x = 1)`.")
    }
    forward <- if (progress_listening()) forward_progress
    # A remote tool error is this tool's, with the remote tool's own text.
    res <- tryCatch(mcp_call(proxied_connection, remote, args, progress = forward),
                    mcplite_error_tool = function(e) {
                      e$message <- e$text
                      stop(e)
                    })
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
      warn("Dropped the annotations of tool `", remote, "` from MCP server `", conn$name, "`: ",
           first, class = "mcplite_warning_client")
    }
  }
  if (inherits(t, "mcplite_error")) {
    warn("Skipped tool `", remote, "` of MCP server `", conn$name, "`: ", conditionMessage(t),
         class = "mcplite_warning_client")
    return(NULL)
  }
  t
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
