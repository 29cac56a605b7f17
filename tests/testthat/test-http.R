# mcp_server(transport = "http"): argument and environment checks in
# process, then real servers (`Rscript` started with processx) driven over
# HTTP with the curl command line.

skip_on_cran()

test_that("transport and HTTP arguments are checked with clear errors", {
  echo <- tool(function(x) x, "Echo.", name = "echo", arguments = list(x = type_string()))
  expect_error(mcp_server(echo, transport = "tcp"), "`transport` must be \"stdio\" or \"http\", not", class = "mcplite_error")
  withr::with_envvar(c(MCPLITE_TRANSPORT = "carrier-pigeon"), {
    expect_error(mcp_server(echo), "environment variable `MCPLITE_TRANSPORT`", class = "mcplite_error")
  })
  expect_error(mcp_server(echo, transport = "http", port = 70000), "`port` must be a whole number", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", port = 1.5), "`port`", class = "mcplite_error")
  withr::with_envvar(c(MCPLITE_PORT = "eighty"), {
    expect_error(mcp_server(echo, transport = "http"), "`MCPLITE_PORT` must be a whole number.*\"eighty\"", class = "mcplite_error")
  })
  expect_error(mcp_server(echo, transport = "http", path = "mcp"), "`path` must be a string starting with", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", path = "/health"), "`path`", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", token = ""), "`token` must be NULL or a non-empty string", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", token = "a b"), "`token`", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", host = 1), "`host` must be a non-empty string", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", allowed_origins = NA), "`allowed_origins`", class = "mcplite_error")
  expect_error(mcp_server(echo, transport = "http", allow_public = "yes"), "`allow_public` must be TRUE or FALSE", class = "mcplite_error")
  # A public address without a token is refused before anything is served.
  expect_error(
    mcp_server(echo, transport = "http", host = "0.0.0.0", port = 0),
    "not a loopback address\\) without a token",
    class = "mcplite_error_http"
  )
})

http_server_code <- function(extra = "") {
  c(
    "library(mcplite)",
    "pid <- tool(function() Sys.getpid(), 'Process id.', name = 'pid')",
    "nap <- tool(function(s) { Sys.sleep(s); 'rested' }, 'Sleep.', name = 'nap', arguments = list(s = type_number()))",
    "boom <- tool(function() stop('secret internals'), 'Fails.', name = 'boom')",
    paste0("mcp_server(list(pid, nap, boom), port = 0L", extra, ")"),
    "cat('after-server\\n', file = stderr())"
  )
}

test_that("an R server answers both eras over HTTP and prints its URL", {
  srv <- start_http_server(http_server_code(), env = c(MCPLITE_TRANSPORT = "http"))
  expect_match(srv$stderr, "mcplite: serving MCP over HTTP at http://127.0.0.1:[0-9]+/mcp")
  health <- curl_http(sub("/mcp$", "/health", srv$url))
  expect_identical(health$status, 200L)
  h <- jsonlite::fromJSON(health$body)
  expect_identical(h$tools, 3L)
  expect_identical(h$name, "mcplite")
  expect_null(h$replica)

  r <- modern_post(srv$url, "tools/call", "pid", list(name = "pid", arguments = structure(list(), names = character())))
  expect_identical(r$status, 200L)
  res <- jsonlite::fromJSON(r$body, simplifyVector = FALSE)$result
  expect_identical(res$content[[1]]$text, as.character(srv$process$get_pid()))

  # A failing tool is a tool error; the answer shows its message, no R internals.
  r <- modern_post(srv$url, "tools/call", "boom", list(name = "boom"))
  res <- jsonlite::fromJSON(r$body, simplifyVector = FALSE)$result
  expect_true(res$isError)
  expect_identical(res$content[[1]]$text, "secret internals")

  # Legacy: initialize mints a session; later requests use it.
  init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  r <- curl_http(srv$url, init)
  expect_identical(r$status, 200L)
  sid <- sub("^[Mm][Cc][Pp]-[Ss]ession-[Ii]d: *([^\r]*)\r?$", "\\1", grep("^mcp-session-id:", r$headers, ignore.case = TRUE, value = TRUE))
  expect_match(sid, "^[!-~]{32,}$")
  r <- curl_http(srv$url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', paste0("Mcp-Session-Id: ", sid))
  expect_length(jsonlite::fromJSON(r$body, simplifyVector = FALSE)$result$tools, 3L)
  r <- curl_http(srv$url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
  expect_identical(r$status, 400L)

  # SIGTERM: stop, exit 0.
  srv$process$signal(tools::SIGTERM)
  srv$process$wait(20000)
  expect_identical(srv$process$get_exit_status(), 0L)
  expect_match(srv$process$read_all_error(), "after-server")
})

test_that("a token is required when set, /health stays open, SIGINT stops the server", {
  srv <- start_http_server(http_server_code(), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = "tok-123-0123456789ab"))
  r <- modern_post(srv$url, "tools/list")
  expect_identical(r$status, 401L)
  expect_true(any(grepl("^www-authenticate: Bearer", r$headers, ignore.case = TRUE)))
  r <- modern_post(srv$url, "tools/list", headers = "Authorization: Bearer tok-123-0123456789ab")
  expect_identical(r$status, 200L)
  expect_identical(curl_http(sub("/mcp$", "/health", srv$url))$status, 200L)
  r <- modern_post(srv$url, "tools/list", headers = c("Authorization: Bearer tok-123-0123456789ab", "Origin: https://evil.example"))
  expect_identical(r$status, 403L)
  srv$process$interrupt()
  srv$process$wait(20000)
  expect_identical(srv$process$get_exit_status(), 0L)
})

test_that("SIGINT stops an idle server also once tcltk is loaded (RULES S7)", {
  skip_without_tcltk()
  srv <- start_http_server(c("invisible(suppressWarnings(loadNamespace('tcltk')))", http_server_code()),
                           env = c(MCPLITE_TRANSPORT = "http"))
  expect_identical(curl_http(sub("/mcp$", "/health", srv$url))$status, 200L)
  srv$process$interrupt()
  srv$process$wait(20000)
  expect_false(srv$process$is_alive())
  expect_identical(srv$process$get_exit_status(), 0L)
  expect_match(srv$process$read_all_error(), "interrupt: SIGINT or Ctrl+C", fixed = TRUE)
})

# A modern tools/call of `nap` for `s` seconds, sent by curl in the
# background; read() gives the parsed answer once curl has ended.
nap_call <- function(url, s) {
  body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 1L, method = "tools/call", params = list(
    name = "nap", arguments = list(s = s),
    `_meta` = list("io.modelcontextprotocol/protocolVersion" = "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities" = structure(list(), names = character()))
  )), auto_unbox = TRUE)
  out <- tempfile()
  call <- processx::process$new("curl", c(
    "-s", "--max-time", "60", "-H", "Content-Type: application/json",
    "-H", "MCP-Protocol-Version: 2026-07-28", "-H", "Mcp-Method: tools/call", "-H", "Mcp-Name: nap",
    "--data-binary", body, "-o", out, url
  ))
  list(process = call, read = function() {
    call$wait(60000)
    jsonlite::fromJSON(paste(readLines(out, warn = FALSE), collapse = ""), simplifyVector = FALSE)
  })
}

# A server whose `nap` tool leaves a file when it starts; started() waits
# for it (so a signal surely arrives while the tool runs).
marked_nap_server <- function() {
  marker <- tempfile("nap-started-")
  code <- c(
    "library(mcplite)",
    sprintf("nap <- tool(function(s) { file.create('%s'); Sys.sleep(s); 'rested' }, 'Sleep.', name = 'nap', arguments = list(s = type_number()))", marker),
    "mcp_server(list(nap), transport = 'http', port = 0L)"
  )
  srv <- start_http_server(code, envir = parent.frame())
  srv$started <- function() {
    deadline <- Sys.time() + 30
    while (!file.exists(marker) && Sys.time() < deadline) Sys.sleep(0.05)
    expect_true(file.exists(marker))
  }
  srv
}

test_that("SIGTERM lets the tool call in progress finish", {
  srv <- marked_nap_server()
  call <- nap_call(srv$url, 1.5)
  srv$started()
  srv$process$signal(tools::SIGTERM)
  res <- call$read()
  srv$process$wait(30000)
  expect_identical(srv$process$get_exit_status(), 0L)
  expect_identical(res$result$content[[1]]$text, "rested")
  # RULES H4.2: the stop line says why, also when the engine's thread saw
  # the signal while R ran the tool.
  expect_match(srv$process$read_all_error(), "mcplite: HTTP server stopped (SIGTERM)", fixed = TRUE)
})

test_that("SIGTERM during a long tool stops accepting at once and interrupts the tool after 7 seconds (RULES H4.2)", {
  srv <- marked_nap_server()
  health <- sub("/mcp$", "/health", srv$url)
  expect_identical(curl_http(health)$status, 200L)
  call <- nap_call(srv$url, 120)
  srv$started()
  srv$process$signal(tools::SIGTERM)
  # The listener closes while the tool still runs (the engine acts on the
  # signal, not R): curl's "connection refused" is exit status 7.
  refused <- FALSE
  for (i in 1:50) {
    refused <- processx::run("curl", c("-s", "-o", "/dev/null", "--max-time", "2", health),
      error_on_status = FALSE)$status == 7L
    if (refused) break
    Sys.sleep(0.1)
  }
  expect_true(refused)
  expect_true(srv$process$is_alive())
  # After the drain time the tool is interrupted and its call answered,
  # saying the server was stopping.
  res <- call$read()
  expect_true(res$result$isError)
  expect_match(res$result$content[[1]]$text,
    "^The tool call was interrupted because the server was stopping \\(SIGTERM or Ctrl\\+C\\)")
  srv$process$wait(30000)
  expect_identical(srv$process$get_exit_status(), 0L)
})

test_that("Ctrl+C during a tool interrupts it, answers its call and stops the server (RULES H4.2)", {
  srv <- marked_nap_server()
  call <- nap_call(srv$url, 120)
  srv$started()
  srv$process$interrupt()
  res <- call$read()
  expect_true(res$result$isError)
  expect_identical(res$result$content[[1]]$text, "The tool call was interrupted.")
  srv$process$wait(30000)
  expect_false(srv$process$is_alive())
  expect_identical(srv$process$get_exit_status(), 0L)
  expect_match(srv$process$read_all_error(), "HTTP server stopped (interrupt: SIGINT or Ctrl+C)", fixed = TRUE)
})

test_that("session cap, idle expiry, body limit and replica are checked with clear errors", {
  echo <- tool(function(x) x, "Echo.", name = "echo", arguments = list(x = type_string()))
  serve <- function(...) mcp_server(echo, transport = "http", port = 0, ...)
  expect_error(serve(max_sessions = 0), "`max_sessions` must be a whole number from 1 up, not", class = "mcplite_error")
  expect_error(serve(max_sessions = 2.5), "`max_sessions`", class = "mcplite_error")
  expect_error(serve(max_sessions = "10"), "`max_sessions`.*\"10\"", class = "mcplite_error")
  expect_error(serve(session_idle = -1), "`session_idle` must be a number of seconds from 0.001 up", class = "mcplite_error")
  expect_error(serve(session_idle = NA_real_), "`session_idle`", class = "mcplite_error")
  expect_error(serve(max_body = 1:2), "`max_body` must be a whole number of bytes from 1 up", class = "mcplite_error")
  expect_error(serve(max_body = Inf), "`max_body`", class = "mcplite_error")
  expect_error(serve(stream_hold = 0.01), "`stream_hold` must be a number of seconds from 0.05 up, not the number 0.01",
               class = "mcplite_error")
  expect_error(serve(stream_hold = "1"), "`stream_hold`", class = "mcplite_error")
  expect_error(serve(replica = "r 1"), "`replica` must be NULL or 1 to 32 ASCII letters", class = "mcplite_error")
  expect_error(serve(replica = strrep("r", 33)), "`replica`", class = "mcplite_error")
  withr::with_envvar(c(MCPLITE_MAX_SESSIONS = "many"), {
    expect_error(serve(), "environment variable `MCPLITE_MAX_SESSIONS` must be a whole number.*\"many\"", class = "mcplite_error")
  })
  withr::with_envvar(c(MCPLITE_SESSION_IDLE = "0"), {
    expect_error(serve(), "environment variable `MCPLITE_SESSION_IDLE`", class = "mcplite_error")
  })
  withr::with_envvar(c(MCPLITE_STREAM_HOLD = "soon"), {
    expect_error(serve(), "environment variable `MCPLITE_STREAM_HOLD` must be a number of seconds.*\"soon\"",
                 class = "mcplite_error")
  })
  withr::with_envvar(c(MCPLITE_MAX_BODY = "1e3.5"), {
    expect_error(serve(), "environment variable `MCPLITE_MAX_BODY`", class = "mcplite_error")
  })
  withr::with_envvar(c(MCPLITE_REPLICA = "a.b"), {
    expect_error(serve(), "environment variable `MCPLITE_REPLICA`", class = "mcplite_error")
  })
})

test_that("MCPLITE_ALLOW_PUBLIC is true or false, and the argument wins over it (RULES H5.4)", {
  echo <- tool(function(x) x, "Echo.", name = "echo", arguments = list(x = type_string()))
  serve <- function(...) mcp_server(echo, transport = "http", port = 0, ...)
  for (bad in c("yes", "1", "TRUE ")) {
    withr::with_envvar(c(MCPLITE_ALLOW_PUBLIC = bad), {
      expect_error(serve(host = "0.0.0.0"),
        paste0("The environment variable `MCPLITE_ALLOW_PUBLIC` must be \"true\" or \"false\", not the string \"", bad, "\""),
        fixed = TRUE, class = "mcplite_error")
    })
  }
  # false (any case) keeps the refusal; an explicit FALSE beats true.
  withr::with_envvar(c(MCPLITE_ALLOW_PUBLIC = "False"), {
    expect_error(serve(host = "0.0.0.0"), "without a token", class = "mcplite_error_http")
  })
  withr::with_envvar(c(MCPLITE_ALLOW_PUBLIC = "true"), {
    expect_error(serve(host = "0.0.0.0", allow_public = FALSE), "without a token", class = "mcplite_error_http")
  })
  withr::with_envvar(c(MCPLITE_HOST = "0.0.0.0", MCPLITE_ALLOW_PUBLIC = "true"), {
    expect_error(serve(allow_public = NA), "`allow_public` must be TRUE or FALSE", class = "mcplite_error")
    expect_error(serve(allowed_hosts = 1), "`allowed_hosts` must be NULL or a character vector", class = "mcplite_error")
  })
})

# Ask a server bound to 0.0.0.0 (through 127.0.0.1) with the given Host and
# further headers.
public_status <- function(srv, host, headers = character()) {
  url <- sub("//0\\.0\\.0\\.0:", "//127.0.0.1:", srv$url)
  modern_post(url, "tools/list", headers = c(paste0("Host: ", host), headers))$status
}

test_that("allowed hosts and origins from MCPLITE_* variables, enforced on a public address (RULES H5.2, H5.4)", {
  # The same script, deployed on 0.0.0.0 by the environment alone.
  srv <- start_http_server(http_server_code(), env = c(
    MCPLITE_TRANSPORT = "http", MCPLITE_HOST = "0.0.0.0", MCPLITE_ALLOW_PUBLIC = "TRUE",
    MCPLITE_ALLOWED_HOSTS = "example.test, tools.example:8080,", MCPLITE_ALLOWED_ORIGINS = "https://app.example"
  ))
  expect_match(srv$url, "^http://0\\.0\\.0\\.0:[0-9]+/mcp$")
  port <- sub(".*:([0-9]+)/mcp$", "\\1", srv$url)
  expect_identical(public_status(srv, "evil.test"), 403L)
  expect_identical(public_status(srv, paste0("evil.test:", port)), 403L)
  expect_identical(public_status(srv, "tools.example:9999"), 403L)
  expect_identical(public_status(srv, "example.test"), 200L)
  expect_identical(public_status(srv, paste0("EXAMPLE.test:", port)), 200L)
  expect_identical(public_status(srv, "tools.example:8080"), 200L)
  expect_identical(public_status(srv, paste0("localhost:", port)), 200L)
  expect_identical(public_status(srv, "example.test", "Origin: https://app.example"), 200L)
  expect_identical(public_status(srv, "example.test", "Origin: https://evil.example"), 403L)
})

test_that("on a public address with a token, arguments win over MCPLITE_ALLOWED_* (RULES H5.2, H5.4)", {
  srv <- start_http_server(
    http_server_code(", allowed_hosts = 'arg.test', allowed_origins = 'https://arg.example'"),
    env = c(
      MCPLITE_TRANSPORT = "http", MCPLITE_HOST = "0.0.0.0", MCPLITE_TOKEN = "tok-9-0123456789abc", MCPLITE_ALLOW_PUBLIC = "false",
      MCPLITE_ALLOWED_HOSTS = "example.test", MCPLITE_ALLOWED_ORIGINS = "https://app.example"
    )
  )
  auth <- "Authorization: Bearer tok-9-0123456789abc"
  expect_identical(public_status(srv, "arg.test"), 401L)
  expect_identical(public_status(srv, "arg.test", auth), 200L)
  expect_identical(public_status(srv, "example.test", auth), 403L)
  expect_identical(public_status(srv, "evil.test", auth), 403L)
  expect_identical(public_status(srv, "arg.test", c(auth, "Origin: https://arg.example")), 200L)
  expect_identical(public_status(srv, "arg.test", c(auth, "Origin: https://app.example")), 403L)
})

legacy_init <- function(url) {
  init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  r <- curl_http(url, init)
  sub("^[^:]*: *([^\r]*)\r?$", "\\1", grep("^mcp-session-id:", r$headers, ignore.case = TRUE, value = TRUE))
}

legacy_list <- function(url, sid) {
  curl_http(url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25"))
}

test_that("max_sessions, max_body and replica shape a running server (arguments)", {
  srv <- start_http_server(http_server_code(", transport = 'http', max_sessions = 2, max_body = 2000, replica = 'r7'"))
  # The replica's name leads every session id.
  sids <- vapply(1:3, function(i) legacy_init(srv$url), "")
  expect_match(sids, "^r7\\.[0-9a-f]{32}$")
  # RULES H1.3: /health names the replica and mcplite's version.
  h <- jsonlite::fromJSON(curl_http(sub("/mcp$", "/health", srv$url))$body)
  expect_identical(h$replica, "r7")
  expect_identical(h$version, as.character(packageVersion("mcplite")))
  # At most two sessions: the third ended the least recently used one.
  expect_identical(legacy_list(srv$url, sids[[1]])$status, 404L)
  expect_identical(legacy_list(srv$url, sids[[2]])$status, 200L)
  expect_identical(legacy_list(srv$url, sids[[3]])$status, 200L)
  # A body over max_body is 413; one under it is served.
  pad <- strrep("x", 2500)
  big <- modern_post(srv$url, "tools/call", "nap", list(name = "nap", arguments = list(s = 0), pad = pad))
  expect_identical(big$status, 413L)
  small <- modern_post(srv$url, "tools/call", "nap", list(name = "nap", arguments = list(s = 0), pad = "x"))
  expect_identical(small$status, 200L)
  # The server is up after the refusal.
  expect_identical(curl_http(sub("/mcp$", "/health", srv$url))$status, 200L)
})

test_that("session_idle ends unused sessions; limits come from MCPLITE_* variables", {
  srv <- start_http_server(http_server_code(), env = c(
    MCPLITE_TRANSPORT = "http", MCPLITE_SESSION_IDLE = "0.5", MCPLITE_MAX_BODY = "300", MCPLITE_REPLICA = "east-1"
  ))
  sid <- legacy_init(srv$url)
  expect_match(sid, "^east-1\\.[0-9a-f]{32}$")
  expect_identical(legacy_list(srv$url, sid)$status, 200L)
  Sys.sleep(1.2)
  expect_identical(legacy_list(srv$url, sid)$status, 404L)
  r <- modern_post(srv$url, "tools/list", params = list(pad = strrep("x", 400)))
  expect_identical(r$status, 413L)
})

test_that("legacy: an unknown method is a JSON-RPC error with 200, and the session lives on", {
  # A legacy client reads 404 as "session ended"; only a missing session is 404.
  srv <- start_http_server(http_server_code(", transport = 'http'"))
  sid <- legacy_init(srv$url)
  r <- curl_http(srv$url, '{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}',
    c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25"))
  expect_identical(r$status, 200L)
  expect_identical(jsonlite::fromJSON(r$body)$error$code, -32601L)
  expect_identical(legacy_list(srv$url, sid)$status, 200L)
  # Modern requests keep 404 for an unknown method.
  expect_identical(modern_post(srv$url, "logging/setLevel", params = list(level = "info"))$status, 404L)
})

# Scale-out behind nginx (inst/deploy/nginx.conf): three replicas named as
# mcplite@.service names them, r8081, r8082, r8083 (MCPLITE_REPLICA, "r" and
# the shipped configuration's port), all reached from one client address.
test_that("nginx spreads modern requests, routes legacy sessions by MCP-Session-Id, survives a dead replica", {
  log_dir <- withr::local_tempdir()
  done_dir <- withr::local_tempdir()
  code <- c(
    "library(mcplite)",
    sprintf("log <- file.path('%s', paste0('calls-', Sys.getpid(), '.txt'))", log_dir),
    "pid <- tool(function(n) { cat(n, '\\n', file = log, append = TRUE); Sys.getpid() }, 'Pid.', name = 'pid', arguments = list(n = type_integer()))",
    sprintf("done <- file.path('%s', 'nap-done')", done_dir),
    sprintf("started <- file.path('%s', 'nap-started')", done_dir),
    "nap <- tool(function(s) { file.create(started); Sys.sleep(s); file.create(done); 'rested' }, 'Nap.', name = 'nap', arguments = list(s = type_number()))",
    "mcp_server(list(pid, nap), transport = 'http', port = 0L, progress_interval = 0.5)"
  )
  nx <- start_nginx_replicas(code)
  replicas <- nx$replicas
  front <- nx$nginx
  url <- nx$url
  n <- 0L
  answered <- integer()
  call_pid <- function(sid = NULL) {
    n <<- n + 1L
    if (!is.null(sid)) {
      body <- sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"pid","arguments":{"n":%d}}}', n, n)
      r <- curl_http(url, body, c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25"))
    } else {
      r <- modern_post(url, "tools/call", "pid", list(name = "pid", arguments = list(n = n)))
    }
    pid <- if (r$status == 200L) jsonlite::fromJSON(r$body, simplifyVector = FALSE)$result$content[[1]]$text
    if (r$status == 200L) answered <<- c(answered, n)
    list(status = r$status, pid = pid %||% NA_character_)
  }
  initialize <- function() {
    init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    r <- curl_http(url, init)
    expect_identical(r$status, 200L)
    sub("^[^:]*: *([^\r]*)\r?$", "\\1", grep("^mcp-session-id:", r$headers, ignore.case = TRUE, value = TRUE))
  }
  pids <- vapply(replicas, function(r) as.character(r$process$get_pid()), "")
  names(pids) <- paste0("r808", 1:3)

  # Modern requests reach every replica.
  seen <- vapply(1:30, function(i) call_pid()$pid, "")
  expect_setequal(unique(seen), pids)

  # RULES C6: an SSE response passes nginx unbuffered: a progress event
  # arrives while the tool is still running (before it leaves its marker).
  sse_out <- tempfile()
  meta <- list("io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" = structure(list(), names = character()), progressToken = "n")
  body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = "nap", arguments = list(s = 3), `_meta` = meta)), auto_unbox = TRUE)
  sse <- processx::process$new("curl", c("-s", "-N", "--max-time", "30", "-o", sse_out,
    "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
    "-H", "MCP-Protocol-Version: 2026-07-28", "-H", "Mcp-Method: tools/call", "-H", "Mcp-Name: nap",
    "--data-binary", body, url))
  progressed <- function() file.exists(sse_out) && any(grepl("notifications/progress", readLines(sse_out, warn = FALSE)))
  deadline <- Sys.time() + 20
  while (!progressed() && Sys.time() < deadline) Sys.sleep(0.05)
  expect_true(progressed())
  expect_false(file.exists(file.path(done_dir, "nap-done")))
  sse$wait(30000)
  streamed <- readLines(sse_out, warn = FALSE)
  expect_match(streamed[length(streamed) - 1L], "rested", fixed = TRUE)

  # Nine legacy clients from one address: their sessions are minted by all
  # replicas (the id names its replica), and each session's requests reach
  # the replica that minted it, every time.
  sids <- vapply(1:9, function(i) initialize(), "")
  expect_match(sids, "^r808[1-3]\\.[0-9a-f]{32}$")
  owner <- sub("\\..*$", "", sids)
  expect_setequal(unique(owner), names(pids))
  for (i in seq_along(sids)) {
    for (k in 1:3) {
      a <- call_pid(sids[[i]])
      expect_identical(a$status, 200L)
      expect_identical(a$pid, pids[[owner[[i]]]])
    }
  }

  # A call in flight on a replica that dies: its client is told (nginx
  # answers 502), and the call is not sent to another replica (a POST is
  # never retried: proxy_next_upstream without non_idempotent).
  r1_sid <- sids[owner == "r8081"][[1]]
  body <- '{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"nap","arguments":{"s":30}}}'
  unlink(file.path(done_dir, c("nap-done", "nap-started")))
  inflight <- processx::process$new("curl", c("-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "60",
    "-H", "Content-Type: application/json", "-H", paste0("Mcp-Session-Id: ", r1_sid),
    "-H", "MCP-Protocol-Version: 2025-11-25", "--data-binary", body, url), stdout = "|")
  # the call is running on r1
  deadline <- Sys.time() + 30
  while (!file.exists(file.path(done_dir, "nap-started")) && Sys.time() < deadline) Sys.sleep(0.05)
  expect_true(file.exists(file.path(done_dir, "nap-started")))

  # One replica dies; modern requests keep succeeding on the others, and so
  # do the legacy sessions that live there. Sessions of the dead replica get
  # an error answer (the client is told), never another replica's answer.
  replicas[[1]]$process$kill()
  inflight$wait(60000)
  expect_identical(inflight$read_all_output(), "502")
  expect_false(file.exists(file.path(done_dir, "nap-done")))
  after <- lapply(1:20, function(i) call_pid())
  expect_true(all(vapply(after, function(a) a$status, 1L) == 200L))
  expect_setequal(unique(vapply(after, function(a) a$pid, "")), pids[2:3])
  for (i in seq_along(sids)) {
    a <- call_pid(sids[[i]])
    if (owner[[i]] == "r8081") {
      expect_gte(a$status, 500L)
    } else {
      expect_identical(a$pid, pids[[owner[[i]]]])
    }
  }
  # A new legacy session starts on a live replica.
  expect_match(initialize(), "^r808[23]\\.")

  # Every call that was answered ran exactly once, and every call that ran
  # was answered.
  ran <- unlist(lapply(list.files(log_dir, full.names = TRUE), function(f) as.integer(readLines(f))))
  expect_false(anyDuplicated(ran) > 0)
  expect_setequal(ran, answered)
  front$signal(tools::SIGQUIT)
})
