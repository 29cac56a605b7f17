#' Run an MCP server for R tools over stdio or HTTP
#'
#' `mcp_server()` serves one or more tools to a Model Context Protocol client.
#' By default it speaks over standard input and output: it blocks until the
#' client closes standard input, answering every request it has received, and
#' then returns `invisible(NULL)`, so a script that ends with `mcp_server()`
#' exits with status 0. With `transport = "http"` (or the environment variable
#' `MCPLITE_TRANSPORT=http`) it serves the Streamable HTTP transport instead;
#' see "Serve over HTTP" below.
#'
#' @param tools One tool made by [tool()] (or a compatible `ellmer::tool()`
#'   object), or a list of them. List names are ignored; tools are listed in
#'   the order given. An empty list serves no tools. Also, as mcptools
#'   takes it: the path of an `.R` file whose last value is such a list (the
#'   file is sourced in an environment of its own: it is the operator's own
#'   code and runs with the server's rights), or `NULL` (the default), which
#'   serves the live-session tools alone (`session_tools` is then `TRUE`).
#' @param instructions `NULL` or a single string that clients may show to the
#'   model as guidance on how to use the server.
#' @param prompts `NULL`, or one prompt made by [prompt_template()] or a list of them:
#'   message templates clients list and offer their users (slash commands).
#' @param resources `NULL`, or one resource made by [resource()] or
#'   [resource_template()] or a list of them: data clients list and read.
#' @param resource_changes `TRUE` to let the tools change the resources
#'   while the server runs, with [mcp_resource_set()] and
#'   [mcp_resource_remove()] (clients that subscribed hear of it). `FALSE`
#'   (the default): the resources stay as given, so a model that calls tools
#'   cannot change what other clients read. Not with confined workers
#'   (`confine = TRUE`, the default of [package_tools()]'s servers): code
#'   the server does not trust never changes what it serves.
#' @param page_size `NULL` or the most tools, prompts, resources or
#'   resource templates one page of a listing holds (a whole number of at
#'   least 1): a longer list is sent in pages that clients follow with
#'   `nextCursor` (MCP pagination). `NULL`: `mcp_server()` reads
#'   `MCPLITE_PAGE_SIZE`, else every list is one page, which every client
#'   reads whole; `mcp_handler()` makes one page (it reads no environment
#'   variable, so what it answers in a test does not depend on the shell).
#' @param transport `"stdio"` or `"http"`. `NULL` (the default) reads the
#'   environment variable `MCPLITE_TRANSPORT`, and uses `"stdio"` when it is
#'   unset.
#' @param host Address to listen on over HTTP. `NULL` reads `MCPLITE_HOST`,
#'   else `"127.0.0.1"` (this machine only).
#' @param port Port to listen on over HTTP, a whole number from 0 to 65535 (0
#'   picks a free port, shown in the start-up line). `NULL` reads
#'   `MCPLITE_PORT`, else 8080.
#' @param path Path of the MCP endpoint over HTTP, starting with `/`; `NULL`
#'   means `/mcp`.
#' @param token `NULL` or a bearer token every HTTP request to the endpoint
#'   must carry (`Authorization: Bearer <token>`), at least 16 characters
#'   (`openssl rand -hex 32` makes one); a template's placeholder
#'   (`replace-me...`, `changeme`) and a token that repeats a few characters
#'   are refused. It is named `default` in the access log. `NULL` reads `MCPLITE_TOKEN`; unset or empty means no token.
#' @param tokens_file `NULL` or the path of a file of named tokens, accepted
#'   besides `token` (see "Named tokens and the access log"). `NULL` reads
#'   `MCPLITE_TOKENS_FILE`.
#' @param trusted_proxies `NULL` or a character vector of the IP addresses of
#'   reverse proxies whose `X-Forwarded-For` header names the client in the
#'   access log and on spans. `NULL` reads `MCPLITE_TRUSTED_PROXIES`
#'   (comma-separated), else none.
#' @param allowed_origins `NULL` or a character vector of extra browser
#'   origins (`"https://app.example.com"`) allowed to call the server;
#'   loopback origins (`http://localhost:*`) are always allowed. `NULL` reads
#'   `MCPLITE_ALLOWED_ORIGINS` (comma-separated), else none.
#' @param allowed_hosts `NULL` or a character vector of extra `Host` header
#'   values (names a proxy or client uses to reach the server, `"name"` for
#'   any port or `"name:port"`). On a loopback address they are accepted
#'   besides the loopback names; on any other address, once set, only they,
#'   loopback names and the bound address are accepted (unset, any `Host`
#'   is). `NULL` reads `MCPLITE_ALLOWED_HOSTS` (comma-separated), else none.
#' @param allow_public `TRUE` to listen on a non-loopback address without a
#'   token. Off by default: anyone who can reach the port could run the tools.
#'   `NULL` (the default) reads `MCPLITE_ALLOW_PUBLIC` (`true` or `false`),
#'   else `FALSE`.
#' @param progress_interval Seconds between progress heartbeats for calls
#'   that asked for progress (see "Long-running tools"), from 0.05 to 3600.
#'   `NULL` reads the environment variable `MCPLITE_PROGRESS_INTERVAL`, else
#'   5.
#' @param max_sessions Most legacy (2025) HTTP sessions kept at once, a whole
#'   number of at least 1; when full, the session unused the longest is
#'   ended. `NULL` reads `MCPLITE_MAX_SESSIONS`, else 1000.
#' @param session_idle Seconds after which an unused legacy HTTP session
#'   ends (a client must then start a new one), a number of at least 0.001.
#'   `NULL` reads `MCPLITE_SESSION_IDLE`, else 3600.
#' @param stream_hold `NULL` or the most seconds (at least 0.05) an HTTP
#'   connection of a legacy (2025-11-25) session's tool call is held open:
#'   then the server closes it, and the client reconnects to read the rest of
#'   the call's stream (SSE polling, for proxies that cut long requests; see
#'   "Serve over HTTP"). `NULL` reads `MCPLITE_STREAM_HOLD`, else a
#'   connection is held until the call is answered.
#' @param max_body Largest HTTP request body in bytes, a whole number of at
#'   least 1; a larger one is refused with 413 without being read. `NULL`
#'   reads `MCPLITE_MAX_BODY`, else 16777216 (16 MB).
#' @param replica `NULL` or the name of this server process among several
#'   behind a load balancer (1 to 32 ASCII letters, digits, `_` or `-`). It
#'   is put in front of every legacy session id and task id
#'   (`<replica>.<random>`) so the balancer can send a session's requests, and
#'   a task's, to the process that holds it (see [task_options()] for tasks).
#'   `NULL` reads `MCPLITE_REPLICA`, else no prefix.
#' @param session_tools `FALSE` (the default) or `TRUE`: work with the user's
#'   open R sessions (see "Live R sessions" below and [mcp_session()]).
#' @param session_wait With `session_tools = TRUE`, the most seconds a tool
#'   call waits for a selected R session that is busy before it fails
#'   (`NULL`: 60).
#' @param workers Number of R worker processes that run tool calls, a whole
#'   number from 1 to 1024. With 1 (the default) tools run in this R
#'   process, one call at a time. With more, each call runs in one of that
#'   many separate R processes: several at once, and a call that crashes its
#'   process does not stop the server. See "Worker processes" below. `NULL`
#'   reads `MCPLITE_WORKERS`, else 1.
#' @param confine Whether to confine the processes that run the tools by
#'   the kernel (Linux): `NULL` (the default) confines them when the tools
#'   include [package_tools()] and the platform allows it, `TRUE` always
#'   (an error where it cannot), `FALSE` never. Confined tools run in worker
#'   processes (one with `workers = 1`) that, once they have loaded your
#'   script, can no longer start programs, open network connections, signal
#'   other processes, read files other than R's, the installed packages' and
#'   the system's libraries, write outside their temporary directory and the
#'   `root` of the package tools they serve, use more than 4 GiB of memory,
#'   write a file larger than 1 GiB or spend more than 10 minutes of CPU time
#'   on one call; environment variables whose names
#'   suggest secrets (`TOKEN`, `SECRET`, `PASSWORD`, `KEY`, ...) are removed
#'   from them. See "Confined workers" below.
#' @param tasks `NULL` (the default) or `FALSE` for no tasks, `TRUE`, or
#'   [task_options()]: the tools that allow it (`tool(task = )`) run as tasks,
#'   calls that outlive their request and are polled for their result (see
#'   [task_options()]). Tasks run on workers: with `tasks`, the server starts
#'   at least one.
#' @param max_queue With workers, how many tool calls may wait for a free
#'   worker, a whole number of at least 0; a call beyond that is refused at
#'   once ("Server busy", 503 over HTTP). `NULL` reads `MCPLITE_MAX_QUEUE`,
#'   else 64.
#'
#' @section Run a server:
#' Put everything in a script that defines (or sources) the tools and ends with
#' `mcplite::mcp_server(<tool or list>)`, then configure the client to start
#' it with `Rscript --vanilla /absolute/path/to/server.R`. Use an absolute path:
#' clients do not promise a working directory. The call blocks, so run it from a
#' client-launched script, not from an interactive console.
#'
#' A server that cannot start (a bad tool definition or environment
#' variable, a port in use, an address that is not this machine's, a public
#' address without a token) stops with an error that names the cause: run by
#' `Rscript`, that is one line ``Error in `mcp_server()`: ...`` on standard
#' error, which is what client logs show, and a non-zero exit status.
#'
#' While the server runs, standard output belongs to the protocol: anything a
#' tool prints with `cat()`, `print()`, `message()`, C-level `printf()` or a
#' child process started with `system()` is sent to standard error instead, and
#' tools cannot read the protocol's standard input (`readline()` sees an empty
#' stream). Warnings raised by a tool are written to standard error as they
#' happen (tools run with `options(warn = 1)` unless `warn` is negative or at
#' least 2, which turns them into errors), and R does not print the errors that
#' become tool results (`show.error.messages = FALSE`); both options are
#' restored when the server returns. A call reads as the tool's name with its
#' arguments, e.g. `add(x = 1L, y = 2)` in warnings and `sys.call()`. Errors
#' and interrupts inside a tool become tool-level errors
#' (`isError: true`); the server keeps running. The exception is a tool that
#' calls `quit()` (or `q()`): R then exits at once with the status given, the
#' call in progress and any requests still queued get no answer, and the client
#' sees the server close. Responses already written are complete.
#'
#' Arguments are passed by name, as R matches them: an argument the function
#' does not take fails the call with R's own message (`unused argument`), and a
#' missing one with R's `argument "x" is missing`, both as tool-level errors
#' the client can act on. An argument with an empty name (`{"": 1}`), which
#' no R call can have, is a tool-level error that says so; the function is
#' not called.
#'
#' Tools own input validation, output conformance, permissions and safe side
#' effects: schemas describe arguments, they do not authorise or sandbox
#' anything. Tool arguments arrive as values parsed from JSON and are never
#' evaluated as R code; request metadata (`_meta`) never reaches tools.
#'
#' @section Serve over HTTP:
#' `mcp_server(tools, transport = "http")` serves the Streamable HTTP
#' transport at `http://<host>:<port><path>` (by default
#' `http://127.0.0.1:8080/mcp`) and prints that URL as one line on standard
#' error. The same script serves stdio or HTTP depending on the environment:
#' `MCPLITE_TRANSPORT=http MCPLITE_PORT=9000 MCPLITE_TOKEN=... Rscript
#' server.R`. Every HTTP argument left `NULL` reads its environment
#' variable: `MCPLITE_HOST`, `MCPLITE_PORT`, `MCPLITE_TOKEN`,
#' `MCPLITE_ALLOWED_ORIGINS`, `MCPLITE_ALLOWED_HOSTS` (both comma-separated),
#' `MCPLITE_ALLOW_PUBLIC` (`true`/`false`), `MCPLITE_MAX_BODY`,
#' `MCPLITE_MAX_SESSIONS`, `MCPLITE_SESSION_IDLE`, `MCPLITE_STREAM_HOLD`,
#' `MCPLITE_REPLICA`, `MCPLITE_TOKENS_FILE` and `MCPLITE_TRUSTED_PROXIES`.
#' Arguments given in the call take precedence over the environment
#' variables.
#'
#' The server blocks until it receives SIGINT (Ctrl+C) or SIGTERM. It then
#' stops accepting connections at once, lets requests in progress finish (at
#' most 7 seconds; a tool still running then is interrupted and its call
#' answered as interrupted because the server was stopping), stops its
#' workers and returns `invisible(NULL)`, within 10 seconds in all, so the
#' script exits with status 0 within a container's default grace. A request
#' that reached the server is answered, also one on a connection opened just
#' before the stop. Ctrl+C while a tool runs interrupts that tool, as it does
#' in R, and then stops the server. The first line on standard error names
#' the URL, the replica and the numbers of workers and tokens; the last says
#' why the server stopped and counts the calls drained and interrupted:
#' `mcplite: HTTP server stopped (SIGTERM): 2 calls drained (0 interrupted),
#' 0 queued calls not run`. Each request's access-log line has an `outcome`
#' (`ok`, `tool_error`, `crashed`, `interrupted`, `cancelled`, `refused`,
#' `error`).
#'
#' Both protocol eras share the endpoint: modern (2026-07-28) clients send
#' one self-contained POST per request; legacy (2025) clients start a session
#' with `initialize` and carry its `MCP-Session-Id` (at most `max_sessions`
#' sessions, 1000 by default; a session unused for `session_idle` seconds,
#' an hour by default, ends; with `replica` the id starts with the
#' replica's name, see the "Serve over HTTP" vignette for nginx). `GET /health` answers
#' `{"status":"ok","name":"mcplite","version":<mcplite's version>,"tools":<count>,"replica":<name or null>}`
#' for load balancers, without a token. Requests that run no tool (`initialize`,
#' `ping`, `server/discover`, `tools/list`) are answered by background
#' threads at once; tool calls run in this R process one at a time, in the
#' order they arrive, so a long tool delays other tool calls but not the
#' listing. Tool output printed with `cat()` or `message()` goes to the
#' console as usual.
#'
#' A tool call that asks for progress (`_meta.progressToken`) from a client
#' that accepts `text/event-stream` (every MCP SDK does) is answered as a
#' Server-Sent Events stream: the progress notifications described under
#' "Long-running tools" while the tool runs, then the result, then the stream
#' ends. The response carries `X-Accel-Buffering: no` so that proxies such as
#' nginx pass each event at once. Calls without a progress token get a plain
#' JSON answer. A modern client that closes the connection of a running call
#' cancels it (the tool is interrupted, see "Long-running tools"); a legacy
#' client cancels with `notifications/cancelled` in its session, which
#' reaches only calls of that session. A cancelled call gets no result (its
#' stream ends, or the request is answered `202` with no body).
#'
#' Security defaults: the server listens on 127.0.0.1 only, accepts only
#' loopback `Host` names there (against DNS rebinding) and only loopback or
#' listed browser `Origin`s (403 otherwise). Set a `token` before listening
#' on another address (`host = "0.0.0.0"`): without one `mcp_server()`
#' refuses, unless `allow_public = TRUE`. Request bodies are limited to
#' `max_body` bytes, 16 MB by default (413), request headers to 16 kB (431),
#' and a client must send its headers within 10 seconds. Listening on
#' another address accepts any `Host` unless `allowed_hosts` is set, which is
#' then enforced there too. At most 256 connections are served at once
#' (open keep-alive connections count); a connection over the limit is
#' answered at once with 503 and `Retry-After: 1`, `/health` included, so
#' clients and load balancers see a saturated server instead of waiting.
#'
#' @section Named tokens and the access log:
#' A tokens file gives each colleague or client a token of their own, so
#' that every request is attributed to a name and one person's access ends
#' by deleting one line. Each line holds a name (letters, digits, `_`, `.`,
#' `@` or `-`), the token (at least 16 characters) or `sha256:` followed by
#' the hex SHA-256 of the token (`printf %s "$TOKEN" | sha256sum`), and
#' optionally a number of tool calls per minute for that token; blank lines
#' and lines starting with `#` are skipped:
#'
#' ```
#' # name   token or hash                      calls per minute
#' alice    3f9c0d7e8b1a4c2f9e6d5b4a3c2f1e0d   60
#' ci-bot   sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
#' ```
#'
#' The file must be readable by its owner only (`chmod 600`); the server
#' refuses to start otherwise, or when a token is shorter than 16
#' characters. It is read again whenever it changes or on SIGHUP, without a restart; if
#' it can no longer be read, every request is refused with 503 until it is
#' fixed. A request without a bearer token gets 401 "bearer token required",
#' one with a token that is not accepted 401 "invalid bearer token" (tokens
#' are compared in constant time). A token over its calls per minute gets
#' 429 with `Retry-After` (seconds) for its tool calls. Each server process
#' counts on its own: behind a load balancer with `n` replicas a token may
#' make up to `n` times its limit.
#'
#' Every HTTP request writes one line on standard error:
#' `mcplite access: time=... client=... token=<name> http_method=POST
#' method=tools/call tool=<name> version=<protocol version> status=200
#' duration_ms=...`, and `reason=` for refused requests (401, 403, 404, 405,
#' 406, 413, 415, 429, 503). With `MCPLITE_LOG_FORMAT=json` each line is a
#' JSON object with the same fields; `MCPLITE_ACCESS_LOG=false` turns the log
#' off. No token, argument or result is ever written. The client address is
#' the peer's, or, when the peer is one of `trusted_proxies`, the last
#' address in `X-Forwarded-For` that is not a trusted proxy. With telemetry
#' on, the token's name is the `enduser.id` of the request's MCP span and the
#' client address its `client.address`.
#'
#' @section Long-running tools:
#' A client that sends a progress token with a tool call
#' (`_meta.progressToken`) receives `notifications/progress` while the tool
#' runs, in every protocol version: heartbeats sent by the engine's own
#' thread while R is busy (the first after one second, then one whenever
#' nothing was sent for `progress_interval` seconds; the message says how long
#' the tool has run), and the tool's own reports made with [mcp_progress()].
#' Clients that reset their request timeout on progress (for example the
#' TypeScript SDK's `resetTimeoutOnProgress`) then wait for slow tools instead
#' of giving up. Nothing is sent for calls without a token, for calls that end
#' within a second, or after the response.
#'
#' A client can cancel a call with `notifications/cancelled` (over HTTP, a
#' modern client closes the connection instead). The running tool
#' is interrupted the way Ctrl+C interrupts R (its `on.exit()` handlers and
#' `tryCatch(interrupt = )` run) and the call gets no response; a call still
#' waiting its turn is dropped unanswered; a cancellation for an unknown or
#' finished request changes nothing. The server keeps serving. Code that does
#' not check for interrupts (compiled code, `suspendInterrupts()`) runs to its
#' end, and the cancelled call still gets no response.
#'
#' Tools run one at a time, in the order the calls arrive. Over stdio, while
#' a tool runs the server still reads everything the client sends, but only
#' three things overtake the running call: cancellations, the progress
#' notifications, and legacy `ping` requests, which are answered at once (so a
#' `ping` answer can arrive before the answer to a call sent earlier, as
#' JSON-RPC allows). Every other request, `tools/list` included, is answered in
#' the order it arrived, after the running call. Over HTTP, requests that run
#' no tool are answered at once by the server's own threads (see "Serve over
#' HTTP"); only tool calls wait for each other.
#'
#' @section Worker processes:
#' One R process runs one tool call at a time, so a slow call delays every
#' other call, and a tool that calls `quit()`, crashes in compiled code or
#' runs out of memory ends the server. With `workers = 4` (or
#' `MCPLITE_WORKERS=4`, so a deployed script needs no edit) the server
#' starts four more R processes, the workers, and runs each tool call in one
#' of them, up to four at once; further calls wait in a queue of
#' `max_queue` calls, taken in turn between tokens and in arrival order
#' within each, so one user's backlog of slow calls does not hold up
#' everyone else's (a call that asked for progress gets heartbeats while it
#' waits), and a call beyond that is refused at once with a "Server busy"
#' error (503 over HTTP). Requests that run no tool
#' (listing, `ping`, `initialize`) are answered by the server process at
#' once, as without workers. Over stdio the answers to calls are written as
#' they finish, so they can arrive in a different order than the requests
#' (clients match answers by id).
#'
#' Each worker starts R again with the server's R options (`Rscript
#' server.R`, `R -f server.R` and `Rscript -e '...'` all work) and runs the
#' same script from the top; in a worker, `mcp_server()` serves the server's
#' calls instead of a transport, and the worker ends when the server does.
#' A worker runs the script's top-level code in an environment of its own
#' (whose parent is the global environment), so that a tool's arguments
#' cannot reach the script's variables through the global environment, a
#' frame number or the command line; the tools themselves see them as
#' usual. So:
#'
#' * The script must build the same tools every time. Everything it does
#'   before `mcp_server()` (loading packages and data, setting options such
#'   as the `mcplite.json.*` payload options) happens in every worker too;
#'   nothing after `mcp_server()` runs in a worker.
#' * Each worker has its own copy of the script's variables: a tool that
#'   keeps state in one (with `<<-`) sees only its own worker's copy, and
#'   calls are spread over the workers. Keep shared state in a file or a
#'   database.
#' * A worker that holds more than 1 GiB more memory after a call than when
#'   it started (R keeps what a tool allocated) is replaced after that call
#'   (Linux; `MCPLITE_WORKER_MEMORY`, for example `"4G"` or `"none"`, sets
#'   the limit).
#' * Each worker costs a start-up (the script's time to reach `mcp_server()`,
#'   at least the 0.2 s of R itself; the server waits until every worker is
#'   ready, at most 120 s) and its own memory (R itself takes about 50 MB,
#'   plus the packages and data the script loads).
#' * Tools built at an interactive console cannot be served with workers
#'   (there is no script to run again): `mcp_server()` then fails with an
#'   error of class `mcplite_error_workers`, as it does for a script read
#'   from standard input and on Windows.
#'
#' Everything else holds in a worker as described above: standard output
#' protection, warnings and errors as tool results, [mcp_progress()],
#' cancellation (the worker running the call is interrupted and its
#' `on.exit()` code runs), tracing (the call's span records the worker), both
#' protocol eras, stdio and HTTP. A worker that exits or dies during a call
#' turns that call into a tool error saying how the process ended (for
#' example "was killed by signal 11 (SIGSEGV, a crash in compiled code)");
#' the other calls go on and a new worker replaces it. If new workers keep
#' failing to start (three in a row), the server stops with that reason.
#' Workers never outlive the server, even one killed with SIGKILL.
#'
#' Workers share one machine. For CPU-bound tools use at most as many
#' workers as cores; for tools that mostly wait (on a database or a web
#' service) more can help. To scale beyond one machine, or for several
#' independent copies that a failing machine cannot take down together,
#' run more server processes (replicas) behind a load balancer such as
#' nginx (see the "Serve over HTTP" vignette); each replica can have
#' workers.
#'
#' @section Confined workers:
#' On Linux, a server whose tools include [package_tools()] (or any server
#' with `confine = TRUE`) runs its tools in worker processes that the kernel
#' holds to a policy once they have run your script up to `mcp_server()`:
#' whatever R code a tool runs, a worker cannot start a program (`system()`
#' reports status 127), open a network connection, signal a process outside
#' it, read files other than R's, the installed packages', the system's
#' libraries and a few system files, or write outside its temporary
#' directory and the `root` of the package tools it serves (see
#' [package_tools()]). The working directory, where the server script and
#' its secrets live, is not readable, and environment variables whose names
#' suggest secrets are removed. Its memory is limited to 4 GiB and the files
#' it writes to 1 GiB (set `MCPLITE_CONFINE_MEMORY` and
#' `MCPLITE_CONFINE_FILE_SIZE`, for example to `"16G"` or `"none"`): beyond
#' them R fails with an error and the worker goes on. A call that uses more
#' than 600 seconds of CPU time (`MCPLITE_CALL_CPU`) ends its worker, and the
#' call fails with an error saying so. A call in any worker that runs longer
#' than an hour of wall time (`MCPLITE_CALL_TIMEOUT`, seconds or `"none"`) is
#' interrupted (its `on.exit()` handlers run) and fails with an error saying
#' so. A worker still busy 5 seconds after its call was cancelled or timed out
#' (a loop in compiled code) is killed and replaced. The kernel's Landlock, resource limits and seccomp enforce
#' this, so it holds even for a tool that the classifier of
#' [package_tools()] would have let through.
#'
#' Load every package and read every file the tools need before
#' `mcp_server()`: after it, a worker can load only what lies under the
#' library paths. Not confined: the server process itself, and your script's variables,
#' which your own tools can reach (keep secrets out of them and read tokens
#' from the environment). Where the kernel cannot confine (macOS,
#' Windows, a kernel without Landlock, or a server without a script to start
#' workers with), package tools run unconfined in the server process and
#' `mcp_server()` says so on standard error; `confine = TRUE` is an error
#' there. With `session_tools = TRUE`, only the package tools run in
#' workers; the server's other tools run in the user's R session (see
#' "Live R sessions"). Run the server as an unprivileged user, in a container or a
#' virtual machine on those platforms.
#'
#' @section Server scope:
#' mcplite serves tools over stdio or Streamable HTTP, with progress
#' notifications and cancellation for slow calls (see "Long-running tools"),
#' and log messages to clients that ask for them: a tool's `message()`,
#' `warning()` and [mcp_log()] (the `logging` capability, in both protocol
#' eras). It also serves prompts ([prompt_template()]) and resources
#' ([resource()], [resource_template()]) with completion of their
#' arguments, answered by the engine without running R, and lets a tool ask
#' the user or the client's model ([mcp_elicit()], [mcp_sample()]). It does
#' not implement JSON-RPC batches, roots, Tasks or MCP Apps. Resource links in results only carry
#' a URI: a client reads it only when it is also one of the server's
#' resources.
#'
#' @section Protocol compatibility:
#' One server definition speaks four protocol versions: the legacy revisions
#' 2024-11-05, 2025-06-18 and 2025-11-25 (negotiated with `initialize`) and the
#' modern, stateless revision 2026-07-28 (selected per request through
#' `params._meta`). Both kinds of client can talk to the same process.
#'
#' * A tool is always listed. Its output schema is omitted for clients that
#'   cannot represent it (2024-11-05; 2025 revisions when the root `type` is not
#'   `"object"`).
#' * Structured content is omitted where the version cannot carry it, while the
#'   text content stays; keep that text useful on its own.
#' * Text, images, embedded resources, annotations and result metadata work in
#'   every version. On 2024-11-05 a result with audio or a resource link is
#'   replaced by a tool-level error explaining why.
#' * Modern clients use `server/discover`, `tools/list` and `tools/call`
#'   without `initialize`; every successful modern result carries
#'   `resultType: "complete"` and the server identity in
#'   `_meta["io.modelcontextprotocol/serverInfo"]`; discovery and listings add
#'   public cache hints (`ttlMs` 300000). Modern `ping` is not supported;
#'   legacy clients keep `ping`.
#'
#' @section Live R sessions:
#' With `session_tools = TRUE` the server works with the interactive R
#' sessions its user opened with [mcp_session()] (for example from
#' `.Rprofile`). It adds the tools `list_r_sessions` and `select_r_session`,
#' and the read-only `list_r_objects`, `describe_r_object` and `read_r_help`,
#' plus `run_r_code`, which only a session opened with
#' `mcp_session(allow_code = TRUE)` accepts. Once a session is selected,
#' every other tool (the server's own included) runs in that session's
#' global environment, when its R is idle at the prompt, and its result
#' comes back as if it had run in the server. A call waits at most
#' `session_wait` seconds for a busy session (progress heartbeats keep the
#' client waiting). With no session selected, or when the selected one is
#' gone, tools run in the server as usual and their answer ends with a note
#' that says so. Package tools are the exception where the server can
#' confine them (Linux, by default): they run in a confined worker
#' process, never in a session, several at once beside the calls that run
#' in the session (`workers` sets how many such processes). Tool functions
#' are sent to the session with `serialize()`:
#' a tool defined at the top of the server script sees the session's global
#' environment instead of the script's, so helpers it needs must be defined
#' inside it, in `local()`, or in a package. See `vignette("live-session")`.
#'
#' @return `invisible(NULL)`, once standard input is closed (stdio) or the
#'   server was stopped by a signal (HTTP).
#' @seealso [tool()], [tool_result()], [mcp_handler()] and [mcp_handle()] to
#'   test a server without starting a process.
#' @export
#' @examples
#' if (identical(Sys.getenv("MCPLITE_CAN_BLOCK_PROCESS"), "true")) {
#'   add_numbers <- tool(
#'     function(x, y) x + y,
#'     name = "add_numbers",
#'     description = "Add two numbers and return the result.",
#'     arguments = list(
#'       x = type_number("First number."),
#'       y = type_number("Second number.")
#'     )
#'   )
#'   mcp_server(list(add_numbers))
#' }
mcp_server <- function(tools = NULL, instructions = NULL, transport = NULL, host = NULL, port = NULL,
                       path = NULL, token = NULL, allowed_origins = NULL, allowed_hosts = NULL,
                       allow_public = NULL, progress_interval = NULL, max_sessions = NULL,
                       session_idle = NULL, max_body = NULL, replica = NULL, tokens_file = NULL,
                       trusted_proxies = NULL, session_tools = FALSE, session_wait = NULL, workers = NULL,
                       max_queue = NULL, confine = NULL, prompts = NULL, resources = NULL,
                       stream_hold = NULL, page_size = NULL, resource_changes = FALSE, tasks = NULL) {
  # RULES R5.7: a tools file is sourced; no tools serve the session tools.
  tools <- server_tools(tools)
  if (is.null(tools)) {
    if (!missing(session_tools) && !isTRUE(session_tools)) {
      abort_arg("`tools` is NULL and `session_tools` is FALSE: there is nothing to serve. ",
                "Supply tools, or leave `session_tools` out to serve the live-session tools.")
    }
    tools <- list()
    session_tools <- TRUE
  }
  record <- load_recorder()
  if (!is.null(record)) {
    # mcp_load_tools() runs the script: record the tools, serve nothing.
    return(record(tools = tools, instructions = instructions))
  }
  check_session_tools(session_tools)
  session_wait <- check_session_wait(session_wait)
  check_confine(confine)
  tasks <- tasks_option(tasks)
  if (is_worker()) {
    if (session_tools) {
      tools <- live_worker_tools(tools)
    }
    confine <- confine_default(confine, tools, worker = TRUE)
    # RULES U3.2: the tools may change the server's resources when the
    # server lets them (never a confined worker's).
    changes <- !isTRUE(confine) && resource_changes_option(resource_changes, resource_specs(resources))
    worker_hand_over(tools, progress_interval, confine, changes)
    return(serve_as_worker(tools, progress_interval, confine, resource_changes = changes))
  }
  transport <- server_transport(transport)
  http <- if (identical(transport, "http")) {
    http_options(host, port, path, token, allowed_origins, allowed_hosts, allow_public,
      limits = list(max_sessions = max_sessions, session_idle = session_idle, max_body = max_body,
                    stream_hold = stream_hold),
      replica = replica, tokens_file = tokens_file, trusted_proxies = trusted_proxies
    )
  }
  interval <- progress_interval(progress_interval)
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  check_string(instructions, allow_null = TRUE)
  spec <- if (session_tools) live_server_spec(tools, session_wait) else server_spec(tools)
  spec$prompts <- prompt_specs(prompts)
  spec$resources <- resource_specs(resources)
  spec$resource_changes <- resource_changes_option(resource_changes, spec$resources)
  spec$page_size <- page_size_option(page_size)
  check_payload_options()
  confine <- confine_default(confine, tools)
  if (isTRUE(confine) && spec$resource_changes) {
    abort_arg("`resource_changes = TRUE` cannot be used with confined workers (`confine = TRUE`, the default for ",
              "`package_tools()`): a confined tool runs code the server does not trust, which must not change ",
              "what the server serves to every client.")
  }
  # RULES V2.1: tasks run on workers, so a server with tasks has some.
  spec$tasks <- task_spec(tasks, spec)
  pool <- worker_options(workers, max_queue, confine, host_tools = spec$host_tools, tools = spec$names,
                         tasks = !is.null(tasks))
  if (!is.null(http)) {
    with_serving_options(engine_serve_http(spec, server_version(), instructions, http, interval, pool))
    return(invisible(NULL))
  }
  if (interactive() && isatty(stdin())) {
    abort(
      "`mcp_server()` blocks the console and talks to an MCP client over stdin and stdout, ",
      "so it cannot run in an interactive session. Save the tools in a script ending with ",
      "`mcplite::mcp_server(...)` and let the client launch it with ",
      "`Rscript --vanilla /absolute/path/to/server.R`."
    )
  }
  # Errors (a server already running in this process, stdio that cannot be
  # set up, workers that cannot start) are raised by the wrapper with their
  # classes (?mcplite_error).
  with_serving_options(engine_serve(spec, server_version(), instructions, interval, pool))
  invisible(NULL)
}

#' Test a server in process
#'
#' `mcp_handler()` prepares a server from tools without starting any I/O (a
#' handler), and `mcp_handle()` feeds it one JSON-RPC message, returning exactly the line the
#' stdio server would write (without the trailing newline), or `NULL` when the
#' server would write nothing (notifications, client responses, blank input).
#' Both go through the same engine as [mcp_server()]: validation, dispatch,
#' version projection, error containment and tracing, with the same options
#' while tools run (`warn`, `show.error.messages`; see [mcp_server()]). Only
#' the stdio transport is missing, so tool output is not redirected.
#'
#' A handler keeps the legacy protocol state (whether `initialize` was
#' called, and the negotiated version) between calls. When `mcp_handle()` is
#' given tools instead of a handler, every call starts from a fresh handler:
#' legacy requests other than `initialize` and `ping` then fail with "server not
#' initialized", while modern (2026-07-28) requests work on their own.
#'
#' @inheritParams mcp_server
#' @param session_tools,session_wait As for [mcp_server()]: with
#'   `session_tools = TRUE` the handler has the live-session tools, so tests
#'   can see what they answer when no session is selected.
#' @param x A handler from `mcp_handler()`, or tools as accepted by
#'   [mcp_server()].
#' @param message One JSON-RPC message: a JSON string, or an R list that is
#'   converted to JSON (named lists become objects; see "Messages given as R
#'   lists" below).
#' @return `mcp_handler()`: an object of class `mcplite_handler`.
#'   `mcp_handle()`: a single string of JSON, or `NULL`.
#' @export
#' @examples
#' echo <- tool(function(text) text, "Echo the text back.", name = "echo",
#'   arguments = list(text = type_string())
#' )
#' handler <- mcp_handler(echo)
#' mcp_handle(handler, list(
#'   jsonrpc = "2.0", id = 1, method = "initialize",
#'   params = list(
#'     protocolVersion = "2025-06-18", capabilities = structure(list(), names = character()),
#'     clientInfo = list(name = "example", version = "1.0")
#'   )
#' ))
#' mcp_handle(handler, '{"jsonrpc":"2.0","id":2,"method":"tools/call",
#'   "params":{"name":"echo","arguments":{"text":"hi"}}}')
mcp_handler <- function(tools, instructions = NULL, session_tools = FALSE, session_wait = NULL, prompts = NULL,
                        resources = NULL, page_size = NULL, resource_changes = FALSE) {
  check_required(tools, "supply a tool made by `tool()` or a list of tools.")
  check_string(instructions, allow_null = TRUE)
  check_session_tools(session_tools)
  session_wait <- check_session_wait(session_wait)
  spec <- if (session_tools) live_server_spec(tools, session_wait) else server_spec(tools)
  spec$prompts <- prompt_specs(prompts)
  spec$resources <- resource_specs(resources)
  spec$resource_changes <- resource_changes_option(resource_changes, spec$resources)
  check_number_whole(page_size, min = 1, max = 2^53, allow_null = TRUE, what = "a whole number of items from 1 up")
  spec$page_size <- if (!is.null(page_size)) as.numeric(page_size)
  check_payload_options()
  ptr <- engine_handler_new(spec, server_version(), instructions)
  structure(list(ptr = ptr, spec = spec, instructions = instructions), class = "mcplite_handler")
}

#' @rdname mcp_handler
#' @export
mcp_handle <- function(x, message, signal = FALSE) {
  check_bool(signal)
  handler <- if (inherits(x, "mcplite_handler")) x else mcp_handler(x)
  check_required(message, "supply one JSON-RPC message as JSON text or a list.")
  line <- if (is.character(message) && inherits(message, "json")) {
    paste(message, collapse = "")
  } else if (is_scalar_string(message)) {
    message
  } else if (is.list(message) && !is.object(message)) {
    fixed_json(request_objects(message))
  } else {
    abort_arg("`message` must be a single string of JSON or a list, not ", describe(message), ".")
  }
  old <- serving_options()
  on.exit(options(old), add = TRUE)
  handle_line(handler, line, signal)
}

#' @export
print.mcplite_handler <- function(x, ...) {
  n <- length(x$spec$names)
  cat("<mcplite_handler> ", n, if (n == 1L) " tool" else " tools", "\n", sep = "")
  if (n > 0L) {
    cat(paste0("  ", x$spec$names, collapse = "\n"), "\n", sep = "")
  }
  invisible(x)
}

# MCP clients usually start servers without LANG/LC_ALL, so R runs in the C
# locale and treats the UTF-8 text of the script as unknown bytes. Serve with a
# UTF-8 character type instead; returns a function that restores the old one.
use_utf8_ctype <- function() {
  if (isTRUE(l10n_info()[["UTF-8"]])) {
    return(function() invisible())
  }
  old <- Sys.getlocale("LC_CTYPE")
  for (candidate in c("C.UTF-8", "C.utf8", "en_US.UTF-8")) {
    if (nzchar(suppressWarnings(Sys.setlocale("LC_CTYPE", candidate)))) {
      return(function() invisible(suppressWarnings(Sys.setlocale("LC_CTYPE", old))))
    }
  }
  function() invisible()
}

server_version <- function() {
  unname(getNamespaceVersion(topenv(environment(server_version))))
}

# RULES R5.7: `tools` as mcp_server() takes it: NULL (none: the session
# tools), the path of an .R file sourced in an environment of its own whose
# last value is the tools, or tools.
server_tools <- function(tools, call = caller_env()) {
  if (!is.character(tools)) {
    return(tools)
  }
  check_string(tools, allow_empty = FALSE, what = "the path of an .R file of tools", arg = "tools", call = call)
  if (!file.exists(tools) || dir.exists(tools)) {
    abort_arg("`tools` must be the path of an existing .R file that yields the tools, but \"", tools,
              "\" is not one.", call = call)
  }
  env <- new.env(parent = globalenv())
  # What the file prints goes to standard error: over stdio, standard
  # output is the protocol's (RULES R5.7, as S1.3 once serving).
  sink(stderr())
  on.exit(sink(), add = TRUE)
  value <- tryCatch(
    withVisible(source(tools, local = env, encoding = "UTF-8", keep.source = FALSE))$value$value,
    error = function(e) {
      abort_arg("`tools` (\"", tools, "\") failed when it was sourced: ", conditionMessage(e), call = call)
    }
  )
  if (!is_servable_tool(value) && !(is.list(value) && !is.object(value))) {
    abort_arg("`tools` (\"", tools, "\") must yield a tool or a list of tools as its last value, not ",
              describe_tool_candidate(value), ".", call = call)
  }
  value
}

is_mcplite_tool <- function(x) is.function(x) && inherits(x, "mcplite_tool")

is_ellmer_tooldef <- function(x) is.function(x) && inherits(x, "ellmer::ToolDef")

is_servable_tool <- function(x) is_mcplite_tool(x) || is_ellmer_tooldef(x)

# Flatten the registry into the vectors the engine reads (RULES R5.2 3-5).
server_spec <- function(tools) {
  if (is_servable_tool(tools)) {
    tools <- list(tools)
  } else if (!is.list(tools) || is.object(tools)) {
    abort_arg(
      "`tools` must be a tool made by `tool()` (or an `ellmer::tool()` definition) ",
      "or a list of them, not ", describe_tool_candidate(tools), "."
    )
  }
  specs <- vector("list", length(tools))
  for (i in seq_along(tools)) {
    x <- tools[[i]]
    if (!is_servable_tool(x)) {
      abort_arg(
        "`tools[[", i, "]]` must be a tool made by `tool()` or an `ellmer::tool()` ",
        "definition, not ", describe_tool_candidate(x), "."
      )
    }
    specs[[i]] <- tryCatch(
      if (is_mcplite_tool(x)) tool_spec(x) else ellmer_tool_spec(x),
      mcplite_error = function(e) {
        abort_arg("`tools[[", i, "]]`", tool_label(x), " is not a valid tool: ", conditionMessage(e))
      }
    )
  }
  names <- vapply(specs, function(s) s$name, character(1))
  dups <- unique(names[duplicated(names)])
  if (length(dups) > 0L) {
    abort_arg(
      "`tools` must have unique names; repeated: ",
      paste0("\"", dups, "\"", collapse = ", "), "."
    )
  }
  funs <- lapply(specs, function(s) s$fun)
  list(
    names = names,
    descriptions = vapply(specs, function(s) s$description, character(1)),
    input_schemas = vapply(specs, function(s) s$input_schema, character(1)),
    annotations = lapply(specs, function(s) s$annotations),
    output_schemas = lapply(specs, function(s) s$output_schema),
    task_support = vapply(specs, function(s) s$task %||% "forbidden", character(1)),
    funs = funs,
    tool_env = tool_env(names, funs),
    normalize = normalize_result,
    condition_message = conditionMessage,
    reset_error = reset_error,
    log_wrap = log_tool_conditions,
    state = new.env(parent = emptyenv())
  )
}

describe_tool_candidate <- function(x) {
  if (inherits(x, "ellmer::ToolBuiltIn")) {
    return("a provider built-in tool (`ellmer::ToolBuiltIn`), which only the provider can run")
  }
  describe(x)
}

tool_label <- function(x) {
  nm <- attr(x, "name", exact = TRUE)
  if (is_mcplite_tool(x)) {
    meta <- attr(x, "mcplite", exact = TRUE)
    nm <- if (is.list(meta)) meta[["name"]] else NULL
  }
  if (is_scalar_string(nm)) paste0(" (\"", nm, "\")") else ""
}

# How tool calls are evaluated (rust/mcplite-r/src/host.rs, src/entrypoint.c):
# each call reads `<tool name>(arg = value, ...)` and is evaluated in
# `tool_env`, a child of the global environment where every tool's function is
# bound under its name. Errors are caught by a calling error handler installed
# through R's C API, which records the condition in `state`; the engine then
# reports `conditionMessage()` as a contained tool error. Errors R signals to
# exiting handlers only (C stack overflow) skip that handler: their message
# is read with geterrmessage(). An interrupt leaves no condition and the error
# message untouched (`reset_error()` puts a known message there after each
# failure).
tool_env <- function(names, funs) {
  env <- new.env(parent = globalenv(), size = max(29L, 2L * length(names)))
  for (i in seq_along(names)) {
    assign(names[[i]], funs[[i]], envir = env)
  }
  env
}

reset_error <- function() stop("mcplite: no error", call. = FALSE)

# Options in force while tools run (RULES S6): warnings are printed to stderr
# as they happen (warn = 1) unless they are errors (warn >= 2) or switched
# off (warn < 0); R does not print the errors the engine reports as tool
# results. Returns the old values for options().
serving_options <- function() {
  warn <- getOption("warn", 0)
  if (!is.numeric(warn) || length(warn) != 1L || is.na(warn) || warn == 0) {
    warn <- 1
  }
  options(warn = warn, show.error.messages = FALSE)
}

# Evaluate `expr` (serving) with the options of serving_options(). An error
# that stops the server (RULES S10: the address cannot be bound, no token on
# a public address, workers that cannot start) is raised again once they
# are restored, so that R prints it (show.error.messages is FALSE while
# serving; R would print only "Execution halted"). A tool's error never
# gets here: the engine catches it.
with_serving_options <- function(expr) {
  old <- serving_options()
  on.exit(options(old))
  tryCatch(expr, mcplite_error = function(e) {
    options(old)
    raise(e)
  })
}

# The transport: the argument, else MCPLITE_TRANSPORT, else "stdio".
server_transport <- function(transport) {
  from_env <- is.null(transport)
  if (from_env) {
    transport <- Sys.getenv("MCPLITE_TRANSPORT", "")
    if (!nzchar(transport)) {
      return("stdio")
    }
  }
  if (!is_scalar_string(transport) || !transport %in% c("stdio", "http")) {
    what <- if (from_env) "The environment variable `MCPLITE_TRANSPORT`" else "`transport`"
    abort_arg(what, " must be \"stdio\" or \"http\", not ", describe(transport), ".")
  }
  transport
}

# Check the HTTP arguments (with their environment variables) and make the
# list the bridge reads (`HttpArgs` in rust/mcplite-r/src/serve_http.rs). An option
# neither given nor set in the environment is NULL: its default is the
# engine's (`HttpOptions::default`), the one place for the defaults.
http_options <- function(host, port, path, token, allowed_origins, allowed_hosts, allow_public,
                         limits = list(), replica = NULL, tokens_file = NULL, trusted_proxies = NULL) {
  env <- function(name) {
    v <- Sys.getenv(name, "")
    if (nzchar(v)) v else NULL
  }
  host_arg <- http_arg_name(host, "host")
  host <- host %||% env("MCPLITE_HOST")
  if (!is.null(host) && (!is_scalar_string(host) || !nzchar(host))) {
    abort_arg(host_arg, " must be a non-empty string such as \"127.0.0.1\", not ", describe(host), ".")
  }
  port_arg <- "`port`"
  if (is.null(port) && !is.null(env("MCPLITE_PORT"))) {
    port_arg <- "The environment variable `MCPLITE_PORT`"
    raw <- env("MCPLITE_PORT")
    port <- suppressWarnings(as.numeric(raw))
    if (is.na(port)) port <- raw
  }
  if (!is.null(port) && (!is.numeric(port) || length(port) != 1L || is.na(port) || port != round(port) ||
    port < 0 || port > 65535)) {
    abort_arg(port_arg, " must be a whole number from 0 to 65535, not ", describe(port), ".")
  }
  if (!is.null(path) && (!is_scalar_string(path) || !startsWith(path, "/") || identical(path, "/health"))) {
    abort_arg("`path` must be a string starting with \"/\" (and not \"/health\"), not ", describe(path), ".")
  }
  token_arg <- http_arg_name(token, "token")
  token <- token %||% env("MCPLITE_TOKEN")
  if (!is.null(token) && (!is_scalar_string(token) || !nzchar(token) || grepl("[^!-~]", token))) {
    abort_arg(token_arg, " must be NULL or a non-empty string of visible ASCII characters, not ",
      describe(token), ".")
  }
  # RULES H6.2 (the engine checks it too); the token itself is never shown.
  if (!is.null(token) && nchar(token) < 16L) {
    abort_arg(token_arg, " is ", nchar(token), " characters long: a token must have at least 16 ",
      "(make one with `openssl rand -hex 32`).")
  }
  tokens_file_arg <- http_arg_name(tokens_file, "tokens_file")
  tokens_file <- tokens_file %||% env("MCPLITE_TOKENS_FILE")
  if (!is.null(tokens_file) && (!is_scalar_string(tokens_file) || !nzchar(tokens_file))) {
    abort_arg(tokens_file_arg, " must be NULL or the path of a file, not ", describe(tokens_file), ".")
  }
  trusted_proxies <- http_names(trusted_proxies, "trusted_proxies")
  log_format <- env("MCPLITE_LOG_FORMAT")
  if (!is.null(log_format) && !log_format %in% c("text", "json")) {
    abort_arg("The environment variable `MCPLITE_LOG_FORMAT` must be \"text\" or \"json\", not ",
      describe(log_format), ".")
  }
  access_log <- if (isFALSE(http_flag(NULL, "access_log"))) "off" else log_format
  allowed_origins <- http_names(allowed_origins, "allowed_origins")
  allowed_hosts <- http_names(allowed_hosts, "allowed_hosts")
  allow_public <- http_flag(allow_public, "allow_public")
  replica_arg <- http_arg_name(replica, "replica")
  replica <- replica %||% env("MCPLITE_REPLICA")
  if (!is.null(replica) && (!is_scalar_string(replica) || !grepl("^[A-Za-z0-9_-]{1,32}$", replica))) {
    abort_arg(replica_arg, " must be NULL or 1 to 32 ASCII letters, digits, \"_\" or \"-\", not ",
      describe(replica), ".")
  }
  list(
    host = host, port = if (!is.null(port)) as.numeric(port), path = path, token = token,
    tokens_file = if (!is.null(tokens_file)) path.expand(tokens_file),
    trusted_proxies = trusted_proxies, access_log = access_log,
    allowed_origins = allowed_origins, allowed_hosts = allowed_hosts,
    allow_public = allow_public,
    max_body = http_limit(limits$max_body, "max_body", 1, whole = TRUE, what = "a whole number of bytes"),
    max_sessions = http_limit(limits$max_sessions, "max_sessions", 1, whole = TRUE, what = "a whole number"),
    session_idle = http_limit(limits$session_idle, "session_idle", 0.001, whole = FALSE, what = "a number of seconds"),
    stream_hold = http_limit(limits$stream_hold, "stream_hold", 0.05, whole = FALSE, what = "a number of seconds"),
    replica = replica
  )
}

# How an error names HTTP argument `name`: the argument, or its environment
# variable (`MCPLITE_` and the upper-case name) when the argument is NULL and
# the variable is set.
http_arg_name <- function(value, name) {
  var <- paste0("MCPLITE_", toupper(name))
  if (is.null(value) && nzchar(Sys.getenv(var, ""))) {
    paste0("The environment variable `", var, "`")
  } else {
    paste0("`", name, "`")
  }
}

# A list of names (origins, hosts): the argument, else its environment
# variable (`MCPLITE_` and the upper-case name), comma-separated, else NULL.
http_names <- function(value, name) {
  if (is.null(value)) {
    raw <- Sys.getenv(paste0("MCPLITE_", toupper(name)), "")
    items <- trimws(strsplit(raw, ",", fixed = TRUE)[[1]])
    items <- items[nzchar(items)]
    return(if (length(items) > 0L) items)
  }
  check_character(value, allow_null = TRUE, arg = name)
}

# A logical HTTP switch: the argument, else its environment variable
# (`true` or `false`, any case), else NULL (the engine's default).
http_flag <- function(value, name) {
  if (is.null(value)) {
    var <- paste0("MCPLITE_", toupper(name))
    raw <- Sys.getenv(var, "")
    if (!nzchar(raw)) {
      return(NULL)
    }
    if (!tolower(raw) %in% c("true", "false")) {
      abort_arg("The environment variable `", var, "` must be \"true\" or \"false\", not ", describe(raw), ".")
    }
    return(identical(tolower(raw), "true"))
  }
  check_bool(value, arg = name)
}

# One numeric HTTP limit: the argument, else its environment variable
# (`MCPLITE_` and the upper-case name), else NULL (the engine's default); at
# least `min` and at most 2^53.
http_limit <- function(value, name, min, whole, what) {
  var <- paste0("MCPLITE_", toupper(name))
  arg <- paste0("`", name, "`")
  if (is.null(value)) {
    raw <- Sys.getenv(var, "")
    if (!nzchar(raw)) {
      return(NULL)
    }
    arg <- paste0("The environment variable `", var, "`")
    value <- suppressWarnings(as.numeric(raw))
    if (is.na(value)) value <- raw
  }
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value < min || value > 2^53 ||
    (whole && value != round(value))) {
    abort_arg(arg, " must be ", what, " from ", format(min, scientific = FALSE), " up, not ", describe(value), ".")
  }
  as.numeric(value)
}

# The page size of mcp_server()'s listings (RULES L5.2): NULL (one page) or
# a whole number of at least 1, from the argument or MCPLITE_PAGE_SIZE.
page_size_option <- function(page_size) {
  http_limit(page_size, "page_size", 1, whole = TRUE, what = "a whole number of items")
}
