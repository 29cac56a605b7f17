# The MCP client over Streamable HTTP: the official SDK servers in both eras
# (Python low-level and MCPServer, TypeScript 1.x and 2.x), server-everything,
# a minimal modern server written here (headers, event streams, hangs) and
# endpoints that answer 401/404/500. Servers run under processx.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("withr")

# The minimal server of tests/clients/python/peers/http_mini_server.py on a
# free port; returns the process (stopped when the calling test ends).
start_mini_server <- function(env = parent.frame()) {
  python <- Sys.which("python3")
  skip_if(!nzchar(python), "python3 not found")
  port <- free_port()
  script <- repo_file("python", "peers", "http_mini_server.py")
  proc <- start_peer_server(python, c(script, port), port, envir = env)
  attr(proc, "port") <- port
  proc
}

url_of <- function(port, path = "/mcp") sprintf("http://127.0.0.1:%d%s", port, path)

test_that("SDK servers over Streamable HTTP, both eras, progress and cancellation", {
  peers <- list()
  py <- venv_python()
  if (!is.null(py)) {
    dir <- repo_file("python", "peers")
    peers$py_lowlevel <- list(py, file.path(dir, "lowlevel_server.py"), c("auto", "2025-11-25"), "2026-07-28", TRUE)
    peers$py_mcpserver <- list(py, file.path(dir, "mcpserver_server.py"), c("auto", "2025-06-18"), "2026-07-28", FALSE)
  }
  node <- Sys.which("node")
  ndir <- test_path("..", "clients", "node")
  if (nzchar(node) && dir.exists(file.path(ndir, "node_modules", "@modelcontextprotocol", "server"))) {
    ndir <- normalizePath(ndir)
    peers$ts_sdk1 <- list(node, file.path(ndir, "peers", "sdk1_server.mjs"), c("auto", "2024-11-05"), "2025-11-25", TRUE)
    peers$ts_server2 <- list(node, file.path(ndir, "peers", "server2_server.mjs"), c("auto", "2025-11-25"), "2026-07-28", TRUE)
  }
  skip_if(length(peers) == 0L, "no peer servers installed (scripts/deps/20-clients.sh)")
  for (name in names(peers)) {
    p <- peers[[name]]
    port <- free_port()
    proc <- start_peer_server(p[[1]], c(p[[2]], "http", port), port)
    for (era in p[[3]]) {
      conn <- mcp_connect(url = url_of(port), name = name, protocol = era)
      info <- mcp_server_info(conn)
      expect_identical(info$protocol_version, if (era == "auto") p[[4]] else era, info = name)
      expect_null(info$pid)
      expect_true(all(c("echo", "add", "fail", "slow") %in% names(mcp_list_tools(conn))), info = name)
      expect_equal(mcp_call(conn, "add", list(x = 1, y = 2.5))$structured_content$sum, 3.5, info = name)
      expect_identical(mcp_call(conn, "echo", list(text = "\u00e9t\u00e9"))$content[[1]]$text, "\u00e9t\u00e9")
      expect_error(mcp_call(conn, "fail", list(message = "bad")), class = "mcplite_error_tool", info = name)
      seen <- 0L
      res <- mcp_call(conn, "slow", list(steps = 3L, delay = 0.05), progress = function(...) seen <<- seen + 1L)
      expect_identical(res$content[[1]]$text, "done")
      expect_identical(seen, 3L, info = paste(name, era))
      # interrupted once the call runs (its first progress report)
      running <- tempfile()
      interrupt_when(running)
      got <- tryCatch(mcp_call(conn, "slow", list(steps = 100L, delay = 0.1), progress = function(...) file.create(running)),
                      interrupt = function(e) "interrupted")
      expect_identical(got, "interrupted", info = name)
      expect_identical(mcp_call(conn, "echo", list(text = "after"))$content[[1]]$text, "after", info = name)
      mcp_close(conn)
    }
    if (isTRUE(p[[5]])) {
      # the server saw each abandoned call as cancelled
      cancelled <- function() {
        err <- server_stderr(proc)
        lengths(regmatches(err, gregexpr("peer: slow was cancelled", err, fixed = TRUE)))
      }
      wait_until(function() cancelled() >= length(p[[3]]), paste(name, "to log the cancellations"))
      proc$kill()
      expect_identical(cancelled(), length(p[[3]]), info = name)
    } else {
      proc$kill()
    }
  }
})

test_that("mcplite's own server over Streamable HTTP: both eras, a bearer token", {
  script <- repo_file("servers", "everything.R")
  port <- free_port()
  proc <- start_peer_server(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script), port,
    c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = as.character(port), MCPLITE_TOKEN = "t0k3n-0123456789ab",
      R_LIBS = paste(.libPaths(), collapse = ":"))
  )
  on.exit(proc$kill(), add = TRUE)
  err <- tryCatch(mcp_connect(url = url_of(port), name = "own"), error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$status, 401L)
  withr::local_envvar(MCPLITE_TEST_TOKEN = "t0k3n-0123456789ab")
  for (era in c("auto", "2025-06-18")) {
    conn <- mcp_connect(url = url_of(port), name = "own", protocol = era,
                        headers = c(Authorization = "Bearer ${MCPLITE_TEST_TOKEN}"))
    expect_identical(mcp_server_info(conn)$protocol_version, if (era == "auto") "2026-07-28" else era)
    expect_identical(mcp_server_info(conn)$server$name, "mcplite")
    expect_true("all_content" %in% names(mcp_list_tools(conn)))
    expect_identical(mcp_call(conn, "stats", list(values = c(1, 2, 3)))$structured_content$n, 3L)
    expect_error(mcp_call(conn, "fail", list(message = "no")), class = "mcplite_error_tool")
    expect_error(mcp_call(conn, "nope"), class = "mcplite_error_rpc")
    types <- vapply(mcp_call(conn, "all_content")$content, function(b) b$type, character(1))
    expect_identical(types, c("text", "image", "audio", "resource_link", "resource", "resource"))
    mcp_close(conn)
  }
})

test_that("mcplite's own server holding connections for 0.3 s (RULES H8): mcp_call() polls to the answer", {
  script <- repo_file("servers", "progress_http.R")
  port <- free_port()
  proc <- start_peer_server(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script), port,
    c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = as.character(port), MCPLITE_STREAM_HOLD = "0.3",
      MCPLITE_TEST_MARKERS = withr::local_tempdir(), R_LIBS = paste(.libPaths(), collapse = ":"))
  )
  on.exit(proc$kill(), add = TRUE)
  conn <- mcp_connect(url = url_of(port), name = "own", protocol = "2025-11-25")
  expect_identical(mcp_server_info(conn)$protocol_version, "2025-11-25")
  expect_identical(mcp_call(conn, "slow", list(seconds = 1.2, tag = "held"))$content[[1]]$text, "slept 1.2")
  # Reports made while no connection was open arrive too, in order.
  seen <- character()
  res <- mcp_call(conn, "folds", list(k = 3L), progress = function(progress, total, message) {
    seen <<- c(seen, message)
  })
  expect_identical(res$content[[1]]$text, "folded")
  expect_identical(grep("^fold", seen, value = TRUE), paste("fold", 1:3, "of 3"))
  mcp_close(conn)
  # The server did close the calls' connections before their answers, and
  # the client came back with GET (the access log, RULES H7.1).
  log <- server_stderr(proc)
  expect_match(log, "http_method=POST method=tools/call tool=slow .*outcome=polled")
  expect_match(log, "http_method=GET .*status=200")
})

test_that("server-everything over Streamable HTTP", {
  node <- Sys.which("node")
  index <- test_path("..", "clients", "node", "node_modules", "@modelcontextprotocol", "server-everything",
                     "dist", "index.js")
  skip_if(!nzchar(node) || !file.exists(index), "server-everything not installed")
  port <- free_port()
  proc <- start_peer_server(node, c(normalizePath(index), "streamableHttp"), port, c(PORT = as.character(port)))
  on.exit(proc$kill(), add = TRUE)
  ev <- mcp_connect(url = url_of(port), name = "everything")
  on.exit(mcp_close(ev), add = TRUE, after = FALSE)
  expect_identical(mcp_server_info(ev)$protocol_version, "2025-11-25")
  expect_identical(mcp_call(ev, "echo", list(message = "over http"))$content[[1]]$text, "Echo: over http")
  seen <- c()
  mcp_call(ev, "trigger-long-running-operation", list(duration = 0.3, steps = 3L),
           progress = function(progress, total, message) seen <<- c(seen, progress))
  expect_equal(seen, c(1, 2, 3))
  expect_identical(mcp_call(ev, "get-tiny-image")$content[[2]]$type, "image")
})

test_that("headers: ${ENV} interpolation, protocol headers, event streams, timeouts", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  withr::local_envvar(MCPLITE_TEST_TOKEN = "s3cret")
  conn <- mcp_connect(url = url_of(port), headers = c(Authorization = "Bearer ${MCPLITE_TEST_TOKEN}", `X-Team` = "r"))
  on.exit(mcp_close(conn), add = TRUE, after = FALSE)
  expect_identical(conn$name, sprintf("127.0.0.1:%d", port))
  expect_identical(mcp_server_info(conn)$server$name, "mini-http")
  h <- mcp_call(conn, "headers")$structured_content
  expect_identical(h$authorization, "Bearer s3cret")
  expect_identical(h$`x-team`, "r")
  expect_identical(h$`mcp-protocol-version`, "2026-07-28")
  expect_identical(h$`mcp-method`, "tools/call")
  expect_identical(h$`mcp-name`, "headers")
  expect_match(h$accept, "application/json")
  expect_match(h$accept, "text/event-stream")

  seen <- c()
  res <- mcp_call(conn, "stream", progress = function(progress, total, message) seen <<- c(seen, progress))
  expect_identical(res$content[[1]]$text, "streamed")
  expect_equal(seen, c(1, 2))

  err <- tryCatch(mcp_call(conn, "hang", timeout = 0.5), error = function(e) e)
  expect_s3_class(err, "mcplite_error_timeout")
  # closing the stream cancelled the call on the server
  wait_until(function() grepl("closed the stream", server_stderr(proc)), "the server to see the stream closed", 5)
  expect_match(server_stderr(proc), "mini: the client closed the stream")
  expect_identical(mcp_call(conn, "headers")$content[[1]]$text, "ok")

  err <- tryCatch(mcp_call(conn, "unknown-method-tool"), error = function(e) e)
  expect_s3_class(err, "mcplite_error_rpc")

  # header checks
  expect_field_error(mcp_connect(url = url_of(port), headers = c(Authorization = "${MCPLITE_UNSET_VAR_X}")),
                     "headers$Authorization")
  expect_field_error(mcp_connect(url = url_of(port), headers = c(`Mcp-Session-Id` = "x")), "headers")
  expect_field_error(mcp_connect(url = url_of(port), headers = c(A = "x", a = "y")), "headers")
  expect_field_error(mcp_connect(url = "localhost:3000/mcp"), "url")
  expect_field_error(mcp_connect(url = url_of(port), env = c(A = "b")), "url")
})

test_that("x-mcp-header arguments are mirrored into Mcp-Param headers; invalid tools are left out", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  conn <- mcp_connect(url = url_of(port), name = "mini")
  on.exit(mcp_close(conn), add = TRUE, after = FALSE)
  # the first call lists the tools (for their input schemas, RULES K5.2),
  # so the mirrored header is sent at once (a HeaderMismatch would list
  # them again and resend the call once, RULES K4.3: engine tests)
  res <- mcp_call(conn, "route", list(region = "us-west1", query = "q"))
  expect_identical(res$structured_content, list(`mcp-param-region` = "us-west1"))
  expect_warning(tools <- mcp_list_tools(conn), "`bad_header`: x-mcp-header \"N\" is on a property that is not")
  expect_false("bad_header" %in% names(tools))
  expect_true("route" %in% names(tools))
  res <- mcp_call(conn, "route", list(region = "Hello, \u4e16\u754c", opts = list(tenant = 42L)))
  expect_identical(res$structured_content$`mcp-param-region`, "=?base64?SGVsbG8sIOS4lueVjA==?=")
  expect_identical(res$structured_content$`mcp-param-tenant`, "42")
  expect_identical(mcp_call(conn, "route", list(query = "no region"))$structured_content, structure(list(), names = character()))
})

test_that("HTTP failures: 401, 404, 500, not an MCP endpoint, connection refused", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  for (code in c(401L, 404L, 500L)) {
    err <- tryCatch(mcp_connect(url = url_of(port, paste0("/status/", code)), name = "bad"), error = function(e) e)
    expect_s3_class(err, "mcplite_error_connection")
    expect_identical(err$reason, "http", info = code)
    expect_identical(err$status, code)
    expect_match(conditionMessage(err), paste0("HTTP ", code), info = code)
  }
  err <- tryCatch(mcp_connect(url = url_of(port, "/status/401")), error = function(e) e)
  expect_match(conditionMessage(err), "credentials")
  err <- tryCatch(mcp_connect(url = url_of(port, "/nowhere"), name = "lost"), error = function(e) e)
  expect_identical(
    conditionMessage(err),
    "MCP server `lost` answered with HTTP 404: not found (check that the URL is the server's MCP endpoint)."
  )
  err <- tryCatch(mcp_connect(url = url_of(port, "/status/200")), error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_match(conditionMessage(err), "instead of JSON or an event stream")

  closed <- free_port()
  err <- tryCatch(mcp_connect(url = url_of(closed), name = "nobody"), error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$reason, "connect")
  expect_match(conditionMessage(err), "Cannot connect to MCP server `nobody`: connection refused", fixed = TRUE)

  # https:// to a closed port (HTTPS itself: test-client-tls.R)
  err <- tryCatch(mcp_connect(url = sprintf("https://127.0.0.1:%d/mcp", closed)), error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$reason, "connect")
})

test_that("configuration files may name remote servers", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  withr::local_envvar(MCPLITE_TEST_TOKEN = "t0k")
  config <- withr::local_tempfile(fileext = ".json")
  writeLines(sprintf('{"mcpServers": {"remote": {"type": "http", "url": "%s", "timeout": 5,
    "headers": {"Authorization": "Bearer ${MCPLITE_TEST_TOKEN}"}}}}', url_of(port)), config)
  servers <- mcp_connect_config(config)
  on.exit(mcp_close(servers), add = TRUE, after = FALSE)
  expect_identical(servers$remote$transport, "http")
  expect_identical(mcp_call(servers$remote, "headers")$structured_content$authorization, "Bearer t0k")
  expect_identical(suppressWarnings(names(mcp_tools(servers))), c("headers", "stream", "hang", "route"))
})

test_that("an HTTP server that drops the connection mid-call, or answers too much, is a clear error (issue 18)", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  conn <- mcp_connect(url = url_of(port), name = "mini")
  on.exit(mcp_close(conn), add = TRUE, after = FALSE)
  # Dropped before, during a JSON answer, and during an event stream: the
  # call fails at once (the timeout is only a guard against a hang) with a
  # connection error whose reason is "closed", naming the server and the call.
  for (tool in c("drop", "drop_body", "drop_stream")) {
    err <- tryCatch(mcp_call(conn, tool, timeout = 30, progress = function(...) NULL), error = function(e) e)
    expect_s3_class(err, "mcplite_error_connection")
    expect_s3_class(err, "mcplite_error_client")
    expect_identical(err$reason, "closed", info = tool)
    expect_identical(err$server, "mini", info = tool)
    expect_match(conditionMessage(err), "MCP server `mini` closed the connection during the call to `", fixed = TRUE, info = tool)
    expect_match(conditionMessage(err), tool, fixed = TRUE, info = tool)
    # the connection stays usable
    expect_identical(mcp_call(conn, "headers")$content[[1]]$text, "ok", info = tool)
  }
  # An answer over the client's limit, as JSON and as an event: dropped, and
  # the call fails with a protocol error naming the limit and its option.
  withr::local_options(mcplite.client_max_message = 65536)
  small <- mcp_connect(url = url_of(port), name = "small")
  on.exit(mcp_close(small), add = TRUE, after = FALSE)
  for (tool in c("huge", "huge_stream")) {
    err <- tryCatch(mcp_call(small, tool, list(bytes = 300000), timeout = 30, progress = function(...) NULL),
                    error = function(e) e)
    expect_s3_class(err, "mcplite_error_connection")
    expect_identical(err$reason, "protocol", info = tool)
    expect_match(conditionMessage(err), "longer than 65536 bytes", fixed = TRUE, info = tool)
    expect_match(conditionMessage(err), "mcplite.client_max_message", fixed = TRUE, info = tool)
    expect_identical(mcp_call(small, "headers")$content[[1]]$text, "ok", info = tool)
  }
  # Under the limit, the same tools answer.
  res <- mcp_call(small, "huge", list(bytes = 1000))
  expect_identical(nchar(res$content[[1]]$text), 1000L)
})

test_that("a legacy server answering server/discover with {} gets initialize; its streams resume (RULES K2.4, K4.4)", {
  proc <- start_mini_server()
  port <- attr(proc, "port")
  conn <- mcp_connect(url = url_of(port, "/legacy"), name = "legacy")
  on.exit(mcp_close(conn), add = TRUE, after = FALSE)
  expect_identical(mcp_server_info(conn)$protocol_version, "2025-11-25")
  expect_identical(mcp_server_info(conn)$server$name, "mini-legacy")
  # the session is the one initialize assigned, not the one of the discover answer
  expect_identical(mcp_call(conn, "session")$structured_content, list(session = "legacy-session", version = "2025-11-25"))
  # a stream that closes after an event id is resumed with GET and
  # Last-Event-ID, after the server's `retry` time, until the answer comes
  expect_identical(mcp_call(conn, "resume")$content[[1]]$text, "resumed")
  log <- server_stderr(proc)
  waited <- function(id) {
    hit <- regmatches(log, regexpr(sprintf("mini: resumed from %s after [0-9]+ ms", id), log))
    as.numeric(sub("^.* after ([0-9]+) ms$", "\\1", hit))
  }
  expect_gte(waited("r1"), 280)
  expect_gte(waited("r2"), 90)
  # without an event id there is nothing to resume
  err <- tryCatch(mcp_call(conn, "cut"), error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$reason, "closed")
  expect_match(conditionMessage(err), "the server ended the event stream without answering the request", fixed = TRUE)
  expect_identical(mcp_call(conn, "session")$content[[1]]$text, "ok")
})

test_that("K4.7: credentials in headers are not sent to a plain http:// URL on another machine unless allow_http", {
  token <- "Bearer s3cr3t-static-token"
  e <- expect_error(mcp_connect(url = "http://mcp.example.invalid/mcp", headers = c(Authorization = token)),
                    class = "mcplite_error_argument")
  expect_match(conditionMessage(e), "plain http:// on another machine .*`Authorization`.*`allow_http = TRUE`")
  expect_false(grepl("s3cr3t", conditionMessage(e), fixed = TRUE))
  expect_identical(conditionCall(e)[[1L]], quote(mcp_connect))
  # other credential headers, by name; `${NAME}` values after interpolation
  withr::local_envvar(MY_KEY = "k3y-value")
  expect_error(mcp_connect(url = "http://10.1.2.3:8080/mcp", headers = c(`X-API-Key` = "${MY_KEY}")),
               "`X-API-Key`", class = "mcplite_error_argument")
  expect_error(mcp_connect(url = "http://[2001:db8::1]/mcp", headers = c(Cookie = "sid=1")), "`Cookie`",
               class = "mcplite_error_argument")
  # allowed: https://, a loopback host, headers without credentials, allow_http
  # (each then fails only at connecting: no such host)
  reaches <- function(...) {
    e <- tryCatch(mcp_connect(..., timeout = 10), error = function(e) e)
    expect_s3_class(e, "mcplite_error_connection")
    expect_false(inherits(e, "mcplite_error_argument"))
  }
  reaches(url = "https://mcp.example.invalid/mcp", headers = c(Authorization = token))
  reaches(url = "http://mcp.example.invalid/mcp", headers = c(`X-Region` = "eu"))
  reaches(url = "http://mcp.example.invalid/mcp", headers = c(Authorization = token), allow_http = TRUE)
  port <- free_port()
  for (host in c("127.0.0.1", "localhost", "[::1]", "127.1.2.3")) {
    reaches(url = sprintf("http://%s:%d/mcp", host, port), headers = c(Authorization = token))
  }
  # a configuration entry's `allow_http` is passed on
  cfg <- withr::local_tempfile(fileext = ".json")
  entry <- list(url = "http://mcp.example.invalid/mcp", headers = list(Authorization = token))
  jsonlite::write_json(list(mcpServers = list(r = entry)), cfg, auto_unbox = TRUE)
  expect_error(mcp_connect_config(cfg), "allow_http", class = "mcplite_error_argument")
  entry$allow_http <- TRUE
  entry$timeout <- 10
  jsonlite::write_json(list(mcpServers = list(r = entry)), cfg, auto_unbox = TRUE)
  expect_error(mcp_connect_config(cfg), class = "mcplite_error_connection")
  entry$allow_http <- "yes"
  jsonlite::write_json(list(mcpServers = list(r = entry)), cfg, auto_unbox = TRUE)
  expect_error(mcp_connect_config(cfg), "mcpServers$r$allow_http", fixed = TRUE)
})
