# Accountable HTTP access (RULES H6, H7): named tokens from a tokens file, the
# 16-character rule, missing and wrong tokens told apart, per-token limits,
# the access log on stderr (refusals with their reason, never a token, an
# argument or a result), X-Forwarded-For from trusted proxies only, and the
# token's name on the MCP span. Real servers, real HTTP (curl).

alice_token <- "alice-0123456789abcdef-token"
bob_token <- "bob-fedcba9876543210-token"
single_token <- "single-0123456789abcdef"

access_server_code <- function() {
  c(
    "library(mcplite)",
    "echo <- tool(function(text) paste('result-sentinel', nchar(text)), 'Echo.', name = 'echo',",
    "  arguments = list(text = type_string()))",
    "mcp_server(list(echo), port = 0L)"
  )
}

# A tokens file readable by its owner only.
write_tokens <- function(path, lines, mode = "600") {
  writeLines(lines, path)
  Sys.chmod(path, mode)
  path
}

sha256_hex <- function(x) {
  f <- withr::local_tempfile()
  writeBin(charToRaw(x), f)
  sub(" .*", "", processx::run("sha256sum", f)$stdout)
}

echo_call <- function(url, token, text = "argument-sentinel", headers = character()) {
  auth <- if (!is.null(token)) paste("Authorization: Bearer", token)
  modern_post(url, "tools/call", name = "echo",
    params = list(name = "echo", arguments = list(text = text)), headers = c(auth, headers))
}

# The server's stderr lines read so far plus new ones, until `n` access-log
# lines (JSON objects with a "status") have arrived.
access_lines <- function(srv, state, n) {
  deadline <- Sys.time() + 20
  repeat {
    srv$process$poll_io(100)
    state$err <- paste0(state$err, srv$process$read_error())
    lines <- strsplit(state$err, "\n", fixed = TRUE)[[1]]
    json <- lines[startsWith(lines, "{\"time\"")]
    if (length(json) >= n || Sys.time() > deadline) break
  }
  lapply(json, jsonlite::fromJSON)
}

test_that("tokens shorter than 16 characters are refused at start, without showing them", {
  echo <- tool(function() "x", "Echo.", name = "echo")
  err <- expect_error(mcp_server(echo, transport = "http", port = 0, token = "short-secret"),
    "`token` is 12 characters long: a token must have at least 16", class = "mcplite_error")
  expect_false(grepl("short-secret", conditionMessage(err), fixed = TRUE))
  withr::with_envvar(c(MCPLITE_TOKEN = "tiny-secret"), {
    expect_error(mcp_server(echo, transport = "http", port = 0),
      "`MCPLITE_TOKEN` is 11 characters long", class = "mcplite_error")
  })
  # In a tokens file: the line is named, the token is not.
  f <- write_tokens(withr::local_tempfile(), c("# team", "carol too-short-1"))
  err <- expect_error(mcp_server(echo, transport = "http", port = 0, tokens_file = f),
    "line 2.*at least 16", class = "mcplite_error_http")
  expect_false(grepl("too-short-1", conditionMessage(err), fixed = TRUE))
})

test_that("H6.1: a tokens file open to others, or to a group not the server's own, is refused at start", {
  skip_on_os("windows")
  echo <- tool(function() "x", "Echo.", name = "echo")
  f <- write_tokens(withr::local_tempfile(), paste("alice", alice_token), mode = "644")
  expect_error(mcp_server(echo, transport = "http", port = 0, tokens_file = f),
    "accessible to others \\(mode 644\\).*chmod 600", class = "mcplite_error_http")
  withr::with_envvar(c(MCPLITE_TOKENS_FILE = f), {
    expect_error(mcp_server(echo, transport = "http", port = 0), "mode 644", class = "mcplite_error_http")
  })
  Sys.chmod(f, "660", use_umask = FALSE)
  expect_error(mcp_server(echo, transport = "http", port = 0, tokens_file = f),
    "writable or executable by its group \\(mode 660\\)", class = "mcplite_error_http")
  # Group-readable: allowed for the server's own group only (named as its
  # user, never root's); tests/suites/56-deploy.sh runs a server as a
  # service user with a root-owned file of its group.
  if (identical(unname(Sys.info()[["effective_user"]]), "root")) {
    Sys.chmod(f, "640", use_umask = FALSE)
    expect_error(mcp_server(echo, transport = "http", port = 0, tokens_file = f),
      "readable by its group \\(mode 640, group id [0-9]+\\), which is not the server's own group",
      class = "mcplite_error_http")
  }
  expect_error(mcp_server(echo, transport = "http", port = 0, trusted_proxies = "proxy.example"),
    "`trusted_proxies` must hold IP addresses", class = "mcplite_error_http")
})

test_that("named tokens, limits, reloads and the JSON access log, end to end", {
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("sha256sum")), "sha256sum not found")
  tokens <- withr::local_tempfile()
  write_tokens(tokens, c(
    "# name token [calls per minute]",
    paste("alice", alice_token),
    paste("bob", paste0("sha256:", sha256_hex(bob_token)), "2")
  ))
  srv <- start_http_server(access_server_code(), env = c(
    MCPLITE_TRANSPORT = "http", MCPLITE_TOKENS_FILE = tokens, MCPLITE_TOKEN = single_token,
    MCPLITE_LOG_FORMAT = "json", MCPLITE_TRUSTED_PROXIES = "127.0.0.1",
    OTEL_TRACES_EXPORTER = "stderr", OTEL_METRICS_EXPORTER = "none"
  ))
  state <- new.env()
  state$err <- srv$stderr

  # 1-2: missing and wrong tokens, told apart.
  r <- echo_call(srv$url, NULL)
  expect_identical(r$status, 401L)
  expect_match(r$body, "bearer token required")
  r <- echo_call(srv$url, "not-a-token-0123456789")
  expect_identical(r$status, 401L)
  expect_match(r$body, "invalid bearer token")
  # 3: alice through a trusted proxy (the peer is 127.0.0.1).
  r <- echo_call(srv$url, alice_token, headers = "X-Forwarded-For: 203.0.113.7, 127.0.0.1")
  expect_identical(r$status, 200L)
  expect_match(r$body, "result-sentinel 17")
  # 4: the single token.
  expect_identical(echo_call(srv$url, single_token)$status, 200L)
  # 5-7: bob (a hashed token) may make 2 tool calls per minute.
  expect_identical(echo_call(srv$url, bob_token)$status, 200L)
  expect_identical(echo_call(srv$url, bob_token)$status, 200L)
  r <- echo_call(srv$url, bob_token)
  expect_identical(r$status, 429L)
  retry <- as.integer(sub("^[Rr]etry-[Aa]fter: *", "", grep("^[Rr]etry-[Aa]fter:", r$headers, value = TRUE)))
  expect_true(retry >= 1L && retry <= 30L)
  # 8: listing is not a tool call: not limited.
  expect_identical(modern_post(srv$url, "tools/list", headers = paste("Authorization: Bearer", bob_token))$status, 200L)

  # 9: alice's line removed: refused at once, no restart.
  write_tokens(tokens, paste("bob", paste0("sha256:", sha256_hex(bob_token)), "2"))
  r <- echo_call(srv$url, alice_token)
  expect_identical(r$status, 401L)
  expect_match(r$body, "invalid bearer token")
  # 10: the file opened to others: every request refused until fixed.
  Sys.chmod(tokens, "644")
  r <- echo_call(srv$url, single_token)
  expect_identical(r$status, 503L)
  expect_false(grepl(tokens, r$body, fixed = TRUE))
  Sys.chmod(tokens, "600")
  # 11
  expect_identical(echo_call(srv$url, single_token)$status, 200L)

  log <- access_lines(srv, state, 11)
  expect_length(log, 11)
  field <- function(k) vapply(log, function(l) if (is.null(l[[k]])) NA_character_ else as.character(l[[k]]), "")
  expect_identical(field("status"), c("401", "401", "200", "200", "200", "200", "429", "200", "401", "503", "200"))
  expect_identical(field("token"), c(NA, NA, "alice", "default", "bob", "bob", "bob", "bob", NA, NA, "default"))
  expect_identical(field("method")[c(1, 3, 8)], c(NA, "tools/call", "tools/list"))
  expect_identical(field("tool")[3], "echo")
  expect_identical(field("version")[3], "2026-07-28")
  expect_identical(field("http_method")[1], "POST")
  expect_identical(field("client")[3], "203.0.113.7")
  expect_identical(field("client")[4], "127.0.0.1")
  expect_match(field("reason")[1], "bearer token required")
  expect_match(field("reason")[2], "invalid bearer token")
  expect_match(field("reason")[7], "2 tool calls per minute")
  expect_match(field("reason")[10], "accessible to others")
  # RULES H7.1: how each request ended.
  expect_identical(field("outcome"),
    c("refused", "refused", "ok", "ok", "ok", "ok", "refused", "ok", "refused", "refused", "ok"))
  expect_true(all(is.na(field("reason")[c(3:6, 8, 11)])))
  expect_true(all(as.numeric(field("duration_ms")) >= 0))
  expect_match(field("time"), "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$")

  # Never a token, an argument or a result on stderr (access log, spans,
  # diagnostics alike).
  for (secret in c(alice_token, bob_token, single_token, "not-a-token-0123456789", "argument-sentinel",
                   "result-sentinel")) {
    expect_false(grepl(secret, state$err, fixed = TRUE), label = secret)
  }
  # The token's name on the MCP span (enduser.id), the forwarded client
  # address as client.address.
  spans <- strsplit(state$err, "\n", fixed = TRUE)[[1]]
  spans <- spans[grepl("resourceSpans", spans, fixed = TRUE)]
  expect_true(any(grepl('"key":"enduser.id","value":{"stringValue":"alice"}', spans, fixed = TRUE)))
  expect_true(any(grepl('"key":"client.address","value":{"stringValue":"203.0.113.7"}', spans, fixed = TRUE)))
})

test_that("the default access log is one text line per request; X-Forwarded-For from others is ignored", {
  srv <- start_http_server(access_server_code(), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = single_token))
  state <- new.env()
  state$err <- srv$stderr
  r <- echo_call(srv$url, single_token, headers = "X-Forwarded-For: 203.0.113.7")
  expect_identical(r$status, 200L)
  expect_identical(curl_http(srv$url, method = "GET", headers = paste("Authorization: Bearer", single_token))$status, 405L)
  # A call answered as an event stream (it asked for progress): its line is
  # written when the stream ends, with the outcome (RULES H7.1).
  sse_body <- paste0('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},',
    '"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{}}}}')
  r <- curl_http(srv$url, sse_body, c(paste("Authorization: Bearer", single_token), "MCP-Protocol-Version: 2026-07-28",
    "Mcp-Method: tools/call", "Mcp-Name: echo", "Accept: application/json, text/event-stream"))
  expect_identical(r$status, 200L)
  expect_match(r$body, "event: message", fixed = TRUE)
  deadline <- Sys.time() + 20
  repeat {
    srv$process$poll_io(100)
    state$err <- paste0(state$err, srv$process$read_error())
    lines <- grep("^mcplite access: ", strsplit(state$err, "\n", fixed = TRUE)[[1]], value = TRUE)
    if (length(lines) >= 3 || Sys.time() > deadline) break
  }
  expect_length(lines, 3)
  expect_match(lines[3], "token=default http_method=POST method=tools/call tool=echo version=2026-07-28 status=200 outcome=ok duration_ms=[0-9.]+$")
  expect_match(lines[1], "client=127.0.0.1 token=default http_method=POST method=tools/call tool=echo version=2026-07-28 status=200 outcome=ok duration_ms=[0-9.]+$")
  expect_match(lines[2], "http_method=GET method=- tool=- version=- status=405 outcome=refused duration_ms=[0-9.]+ reason=\"Method Not Allowed: use POST\"$")
})

test_that("a stderr nobody reads never stalls the server: access-log lines are dropped and counted (RULES H7.1)", {
  skip_on_os("windows")
  # The server's stderr is a pipe this test does not read after start-up:
  # it fills after a few hundred lines, then the log's queue fills.
  srv <- start_http_server(access_server_code(), env = c(MCPLITE_TRANSPORT = "http"))
  health <- sub("/mcp$", "/health", srv$url)
  cfg <- withr::local_tempfile()
  n <- 6000L
  writeLines(c("silent", "write-out = \"%{http_code}\\n\"", rep(sprintf("url = \"%s\"\noutput = \"/dev/null\"", health), n)), cfg)
  res <- processx::run("curl", c("-K", cfg), timeout = 120, error_on_status = FALSE)
  expect_identical(res$status, 0L)
  expect_identical(sum(strsplit(res$stdout, "\n", fixed = TRUE)[[1]] == "200"), n)
  # Still serving, and once stderr is read again the writer says what it lost.
  expect_identical(curl_http(health)$status, 200L)
  err <- ""
  deadline <- Sys.time() + 30
  while (!grepl("lines dropped (stderr was not read)", err, fixed = TRUE) && Sys.time() < deadline) {
    srv$process$poll_io(100)
    err <- paste0(err, srv$process$read_error())
    if (!grepl("lines dropped", err, fixed = TRUE)) curl_http(health)
  }
  expect_match(err, "mcplite access: [0-9]+ lines dropped \\(stderr was not read\\)")
})

test_that("SIGHUP reads the tokens file again and does not stop the server (RULES H6.1)", {
  skip_on_os("windows")
  tokens <- write_tokens(withr::local_tempfile(), paste("alice", alice_token))
  srv <- start_http_server(access_server_code(), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKENS_FILE = tokens))
  srv$process$signal(tools::SIGHUP)
  err <- ""
  deadline <- Sys.time() + 20
  while (!grepl("was read again", err, fixed = TRUE) && Sys.time() < deadline) {
    srv$process$poll_io(100)
    err <- paste0(err, srv$process$read_error())
  }
  expect_match(err, sprintf("mcplite: the tokens file %s was read again: 1 token(s)", tokens), fixed = TRUE)
  expect_true(srv$process$is_alive())
  expect_identical(echo_call(srv$url, alice_token)$status, 200L)
})

# Reads stderr until `pattern` appears (or 20 s pass); returns all read.
stderr_until <- function(srv, state, pattern) {
  deadline <- Sys.time() + 20
  while (!grepl(pattern, state$err) && Sys.time() < deadline) {
    srv$process$poll_io(100)
    state$err <- paste0(state$err, srv$process$read_error())
  }
  state$err
}

test_that("H6.1, H1.3: a bad line read again keeps that name's token; an unusable file makes /health unavailable", {
  skip_on_os("windows")
  carol_token <- "carol-5a6b7c8d9e0f1a2b-token"
  tokens <- write_tokens(withr::local_tempfile(), c(paste("alice", alice_token), paste("bob", bob_token)))
  srv <- start_http_server(access_server_code(), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKENS_FILE = tokens))
  health <- sub("/mcp$", "/health", srv$url)
  state <- new.env()
  state$err <- srv$stderr
  expect_match(state$err, "mcplite: serving MCP over HTTP at http://127.0.0.1:[0-9]+/mcp \\(no replica name; no worker processes; 2 tokens;")
  # bob's line broken, alice's removed, carol added: carol in, alice out,
  # bob keeps his token.
  write_tokens(tokens, c(paste("bob", "too-short"), paste("carol", carol_token)))
  expect_identical(echo_call(srv$url, carol_token)$status, 200L)
  expect_identical(echo_call(srv$url, bob_token)$status, 200L)
  expect_identical(echo_call(srv$url, alice_token)$status, 401L)
  err <- stderr_until(srv, state, "keeps its token")
  expect_match(err, sprintf(paste0("mcplite: the token of \"bob\" \\(the tokens file %s, line 1\\) is 9 characters long.*; ",
    "the line is skipped and \"bob\" keeps its token from the last good read until it is fixed"), tokens))
  expect_false(grepl("too-short", err, fixed = TRUE))
  r <- curl_http(health)
  expect_identical(r$status, 200L)
  expect_match(r$body, '"status":"ok"', fixed = TRUE)
  # The file removed: every request refused, and /health says so.
  file.remove(tokens)
  expect_identical(echo_call(srv$url, carol_token)$status, 503L)
  r <- curl_http(health)
  expect_identical(r$status, 503L)
  expect_match(r$body, '"status":"unavailable"', fixed = TRUE)
  expect_match(r$body, "the tokens file cannot be used", fixed = TRUE)
  expect_false(grepl(tokens, r$body, fixed = TRUE))
  # Back: ok again.
  write_tokens(tokens, paste("carol", carol_token))
  expect_identical(echo_call(srv$url, carol_token)$status, 200L)
  expect_identical(curl_http(health)$status, 200L)
})
