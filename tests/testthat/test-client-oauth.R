# Signing in (RULES K10): the settings of mcp_connect(oauth = ) and of a
# configuration entry, and the user agent that gets the sign-in page. The
# whole flow runs against the official conformance suite's authorization
# servers in tests/suites/21-conformance.sh (every auth/* client scenario),
# and end to end against a certified OpenID provider (npm oidc-provider).

test_that("K10.1: oauth settings are checked and errors name the member", {
  expect_null(oauth_settings(FALSE))
  json <- jsonlite::fromJSON(oauth_settings(NULL))
  expect_identical(json$cache_dir, oauth_cache_dir())
  withr::local_options(mcplite.oauth_cache_dir = "/tmp/somewhere")
  expect_identical(jsonlite::fromJSON(oauth_settings(TRUE))$cache_dir, "/tmp/somewhere")
  full <- jsonlite::fromJSON(oauth_settings(list(
    scope = "read write", scope_mode = "override", callback_port = 8765, allow_http = TRUE,
    client_info = list(client_id = "id", client_secret = "s", token_endpoint_auth_method = "client_secret_post"),
    client_metadata = list(client_name = "my R"), timeout = 30
  )), simplifyVector = FALSE)
  expect_identical(full$callback_port, 8765L)
  expect_identical(full$client_metadata, list(client_name = "my R"))
  expect_identical(full$client_info$client_secret, "s")

  expect_field_error(oauth_settings(list(scopes = "x")), "oauth$scopes")
  expect_field_error(oauth_settings(list(scope = 1)), "oauth$scope")
  expect_field_error(oauth_settings(list(scope_mode = "replace")), "oauth$scope_mode")
  expect_field_error(oauth_settings(list(callback_port = 70000)), "oauth$callback_port")
  expect_field_error(oauth_settings(list(callback_port = 1.5)), "oauth$callback_port")
  expect_field_error(oauth_settings(list(allow_http = "yes")), "oauth$allow_http")
  expect_field_error(oauth_settings(list(timeout = -1)), "oauth$timeout")
  expect_field_error(oauth_settings(list(client_info = list(secret = "x"))), "oauth$client_info")
  expect_field_error(oauth_settings(list(manual_client_info = "id")), "oauth$manual_client_info")
  expect_field_error(oauth_settings(list(client_metadata = list(1))), "oauth$client_metadata")
  # `client_metadata` is not `client_metadata_url` (exact names)
  expect_field_error(oauth_settings(list(client_metadata_url = 3)), "oauth$client_metadata_url")
  expect_field_error(oauth_settings("yes"), "oauth")
  # the client credentials and cross-app access (RULES K10.8, K10.9)
  expect_field_error(oauth_settings(list(grant_type = "password")), "oauth$grant_type")
  expect_field_error(oauth_settings(list(client_info = list(client_id = "a", private_key_file = "/no/such/key.pem"))),
                     "oauth$client_info$private_key_file")
  withr::local_envvar(MCPLITE_TEST_NO_KEY = NA, MCPLITE_TEST_SECRET = "from-env")
  expect_field_error(oauth_settings(list(client_info = list(client_id = "a", private_key_env = "MCPLITE_TEST_NO_KEY"))),
                     "oauth$client_info$private_key_env")
  expect_field_error(oauth_settings(list(identity_provider = list(token_endpoint = "https://idp/t"))),
                     "oauth$identity_provider")
  expect_field_error(oauth_settings(list(identity_provider = list(client_id = "c", id_token_file = "/no/such/token"))),
                     "oauth$identity_provider$id_token_file")
  key <- withr::local_tempfile(lines = "-----BEGIN PRIVATE KEY-----")
  cc <- jsonlite::fromJSON(oauth_settings(list(
    grant_type = "client_credentials",
    client_info = list(client_id = "robot", client_secret = "${MCPLITE_TEST_SECRET}", private_key_file = key,
                       token_endpoint_auth_signing_alg = "ES256")
  )), simplifyVector = FALSE)
  expect_identical(cc$client_info$client_secret, "from-env")
  expect_identical(cc$client_info$private_key_file, normalizePath(key))
  expect_identical(cc$grant_type, "client_credentials")
  expect_error(oauth_settings(list(client_info = list(client_id = "a", client_secret = "${MCPLITE_TEST_NO_KEY}"))),
               "refers to the environment variable `MCPLITE_TEST_NO_KEY`", class = "mcplite_error")
  # and checked again by the engine, which says what each grant needs
  expect_field_error(mcp_connect(url = "http://127.0.0.1:9/mcp", oauth = list(grant_type = "client_credentials",
                                                                              client_info = list(client_id = "a"))),
                     "oauth$grant_type")
  # checked again by the engine, which names the member too
  expect_field_error(mcp_connect(url = "http://127.0.0.1:9/mcp", oauth = list(client_metadata_url = "http://x/y")),
                     "oauth$client_metadata_url")
  expect_field_error(mcp_connect("sh", oauth = list()), "oauth")
  expect_error(mcp_connect(tools = list(), oauth = list()), class = "mcplite_error")
})

test_that("K10.1: a configuration entry's oauth and allow_http are checked and passed on", {
  expect_identical(config_oauth("s", list(url = "u", allow_http = TRUE)), list(allow_http = TRUE))
  expect_identical(config_oauth("s", list(url = "u", oauth = list(scope = "a"), allow_http = TRUE)),
                   list(scope = "a", allow_http = TRUE))
  expect_null(config_oauth("s", list(url = "u")))
  dir <- withr::local_tempdir()
  bad <- file.path(dir, "bad.json")
  writeLines('{"mcpServers": {"r": {"url": "https://x/mcp", "oauth": {"scope_mode": "sometimes"}}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$r$oauth$scope_mode")
})

test_that("K10.5: the sign-in page goes to the user agent option, else the command, else is printed", {
  seen <- NULL
  withr::with_options(list(mcplite.oauth_user_agent = function(url) seen <<- url), {
    oauth_open("https://as.example/authorize?x=1", "srv")
  })
  expect_identical(seen, "https://as.example/authorize?x=1")
  skip_on_os("windows")
  out <- withr::local_tempfile()
  script <- withr::local_tempfile(fileext = ".sh")
  writeLines(c("#!/bin/sh", paste0("printf '%s' \"$1\" > ", shQuote(out))), script)
  Sys.chmod(script, "0755")
  withr::with_envvar(c(MCPLITE_OAUTH_USER_AGENT = script), oauth_open("https://as.example/a?b=c&d=e", "srv"))
  expect_identical(readLines(out, warn = FALSE), "https://as.example/a?b=c&d=e")
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  expect_message(oauth_open("https://as.example/a", "srv"), "MCP server `srv` asks you to sign in: open https://as.example/a")
})

test_that("K10.2: a server that takes only a static token is reported as its 401, and no page is opened", {
  skip_on_cran()
  script <- repo_file("servers", "everything.R")
  port <- free_port()
  proc <- start_peer_server(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script), port,
    c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = as.character(port), MCPLITE_TOKEN = "t0k3n-0123456789ab",
      R_LIBS = paste(.libPaths(), collapse = ":"))
  )
  on.exit(proc$kill(), add = TRUE)
  opened <- character()
  withr::local_options(mcplite.oauth_user_agent = function(url) opened <<- c(opened, url))
  cache <- withr::local_tempdir()
  err <- tryCatch(mcp_connect(url = sprintf("http://127.0.0.1:%d/mcp", port), name = "own", oauth = list(cache_dir = cache)),
                  error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$status, 401L)
  expect_match(conditionMessage(err), "unauthorized")
  expect_identical(opened, character())
  # with the token in `headers`, no sign-in is tried at all
  conn <- mcp_connect(url = sprintf("http://127.0.0.1:%d/mcp", port), name = "own", headers = c(Authorization = "Bearer t0k3n-0123456789ab"))
  expect_true("all_content" %in% names(mcp_list_tools(conn)))
  mcp_close(conn)
  expect_identical(opened, character())
  # an http:// authorization server elsewhere is refused (RULES K10.7)
  err <- tryCatch(mcp_connect(url = sprintf("http://127.0.0.1:%d/mcp", port), name = "own",
                              oauth = list(cache_dir = cache, authorization_server = "http://as.invalid")),
                  error = function(e) e)
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$reason, "auth")
  expect_match(conditionMessage(err), "Cannot sign in to MCP server `own`: .*not https://")
})

# The whole sign-in, end to end, against a certified OpenID provider (npm
# oidc-provider, tests/clients/node/peers/oidc_provider.mjs) and an MCP server
# that takes only its tokens (the TypeScript SDK's bearer authentication with
# a JWKS verifier, oidc_protected_server.mjs), the sign-in pages completed by
# a browser-less user agent (oidc_user_agent.mjs). Access tokens live 2 s.
oidc_peers <- function(ttl = 2, envir = parent.frame()) {
  skip_on_cran()
  skip_on_os("windows")
  node <- peer_node("oidc-provider")
  skip_if(is.null(node), "needs Node >= 20 and tests/clients/node's oidc-provider (scripts/deps/20-clients.sh)")
  peers <- file.path(node$dir, "peers")
  op_port <- free_port()
  repeat {
    mcp_port <- free_port()
    if (mcp_port != op_port) break
  }
  issuer <- sprintf("http://127.0.0.1:%d", op_port)
  url <- sprintf("http://127.0.0.1:%d/mcp", mcp_port)
  op <- start_peer_server(node$node, c(file.path(peers, "oidc_provider.mjs"), op_port, url, ttl), op_port, envir = envir)
  rs <- start_peer_server(node$node, c(file.path(peers, "oidc_protected_server.mjs"), mcp_port, issuer), mcp_port,
                          envir = envir)
  # Everything each has said on stdout so far (one event a line).
  said <- new.env()
  said$op <- character()
  said$rs <- character()
  log <- function(which) {
    p <- if (which == "op") op else rs
    said[[which]] <- c(said[[which]], p$read_output_lines())
    said[[which]]
  }
  # The user agent: counts the pages it is given and completes them.
  agent <- new.env()
  agent$urls <- character()
  agent$delay <- 0
  agent$fun <- function(u) {
    agent$urls <- c(agent$urls, u)
    res <- processx::run(node$node, c(file.path(peers, "oidc_user_agent.mjs"), u), error_on_status = FALSE,
                         env = c("current", OIDC_AGENT_DELAY = as.character(agent$delay)))
    if (res$status != 0L && !isTRUE(agent$quiet)) warning("the user agent failed: ", res$stderr)
  }
  list(url = url, issuer = issuer, log = log, agent = agent, node = node)
}

# The query of a URL as a named list (form encoding: `+` is a space).
query_of <- function(url) {
  pairs <- strsplit(strsplit(sub("^[^?]*[?]", "", url), "&", fixed = TRUE)[[1]], "=", fixed = TRUE)
  dec <- function(x) utils::URLdecode(gsub("+", " ", x, fixed = TRUE))
  stats::setNames(lapply(pairs, function(p) dec(paste(p[-1], collapse = "="))), vapply(pairs, function(p) dec(p[[1]]), ""))
}

# The one file of a cache directory, and what it holds.
cached_sign_in <- function(cache) {
  files <- list.files(cache, pattern = "[.]json$", full.names = TRUE)
  expect_length(files, 1L)
  list(path = files[[1]], saved = jsonlite::fromJSON(files[[1]], simplifyVector = FALSE))
}

test_that("K10: signs in end to end to an OpenID provider (registration, PKCE, resource), reuses and refreshes", {
  o <- oidc_peers()
  withr::local_options(mcplite.oauth_user_agent = o$agent$fun)
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  cache <- file.path(withr::local_tempdir(), "oauth")

  # First connection: dynamic registration, the pages, PKCE, the resource.
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  expect_length(o$agent$urls, 1L)
  page <- query_of(o$agent$urls[[1]])
  expect_identical(page$code_challenge_method, "S256")
  expect_match(page$code_challenge, "^[A-Za-z0-9_-]{43}$")
  expect_identical(page$resource, o$url)
  expect_setequal(strsplit(page$scope, " ")[[1]], c("mcp:tools", "offline_access"))
  expect_identical(page$response_type, "code")
  expect_match(page$redirect_uri, "^http://127[.]0[.]0[.]1:[0-9]+/callback$")
  op <- o$log("op")
  registration <- strsplit(grep("^registered ", op, value = TRUE), " ")
  expect_length(registration, 1L)
  registered <- registration[[1]][[2]]
  expect_identical(registration[[1]][[3]], "authorization_code,refresh_token")
  expect_identical(page$client_id, registered)
  expect_true(paste("authorized", registered) %in% op)
  # a refresh token came with it: `offline_access` asked with prompt=consent
  # (OpenID Connect Core, section 11)
  expect_identical(page$prompt, "consent")
  expect_true("token authorization_code refresh_token" %in% op)
  who <- mcp_call(conn, "whoami")$structured_content
  expect_identical(who$sub, "r-user")
  expect_identical(who$client_id, registered)
  expect_true("mcp:tools" %in% unlist(who$scopes))

  # What is kept: 0700 / 0600, the client, a refresh token.
  kept <- cached_sign_in(cache)
  expect_identical(format(file.info(cache)$mode), "700")
  expect_identical(format(file.info(kept$path)$mode), "600")
  expect_identical(kept$saved$issuer, o$issuer)
  expect_identical(kept$saved$client$client_id, registered)
  expect_identical(kept$saved$resource, o$url)
  tokens <- kept$saved$tokens
  expect_true(nzchar(tokens$access_token) && nzchar(tokens$refresh_token))
  # No token in printed output or in a condition.
  shown <- c(capture.output(print(conn)), capture.output(str(mcp_server_info(conn))),
             conditionMessage(tryCatch(mcp_call(conn, "no_such_tool"), error = function(e) e)))
  for (secret in c(tokens$access_token, tokens$refresh_token)) {
    expect_false(any(grepl(secret, shown, fixed = TRUE)))
  }
  mcp_close(conn)

  # A second connection reuses the sign-in: no page, no registration.
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  expect_identical(mcp_call(conn, "whoami")$structured_content$client_id, registered)
  mcp_close(conn)
  expect_length(o$agent$urls, 1L)
  expect_length(grep("^(registered|authorized) ", o$log("op")), 2L)

  # Once the access token has expired (the server refuses it), the next
  # connection refreshes it, without a page.
  expired <- cached_sign_in(cache)$saved$tokens
  wait_until(function() as.numeric(Sys.time()) > expired$expires_at + 1, "the access token to expire", 10)
  init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  refused <- curl_http(o$url, init, c(paste("Authorization: Bearer", expired$access_token), "Accept: application/json, text/event-stream"))
  expect_identical(refused$status, 401L)
  refreshes <- sum(startsWith(o$log("op"), "token refresh_token "))
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  expect_identical(mcp_call(conn, "whoami")$structured_content$sub, "r-user")
  mcp_close(conn)
  expect_length(o$agent$urls, 1L)
  expect_gt(sum(startsWith(o$log("op"), "token refresh_token ")), refreshes)
  now <- cached_sign_in(cache)$saved$tokens
  expect_false(identical(now$access_token, expired$access_token))
  # rotated on each use (a public client), and the new one kept
  expect_false(identical(now$refresh_token, expired$refresh_token))
  expect_false(any(grepl("^refused ", o$log("op"))))

  # A token the server refuses before its expiry: refreshed on the 401, no page.
  forge <- function(access, refresh = NULL) {
    kept <- cached_sign_in(cache)
    kept$saved$tokens$access_token <- access
    kept$saved$tokens$expires_at <- round(as.numeric(Sys.time())) + 3600
    if (!is.null(refresh)) kept$saved$tokens$refresh_token <- refresh
    writeLines(jsonlite::toJSON(kept$saved, auto_unbox = TRUE, digits = NA), kept$path)
  }
  forge("not-a-token-this-server-takes")
  served <- length(o$log("rs"))
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  expect_identical(mcp_call(conn, "whoami")$structured_content$sub, "r-user")
  mcp_close(conn)
  expect_length(o$agent$urls, 1L)
  expect_true("mcp 401" %in% o$log("rs")[-seq_len(served)])

  # A refused refresh forgets the tokens: signed in again with the page, by
  # the client registered before.
  forge("not-a-token-this-server-takes", "not-a-refresh-token-it-gave")
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  expect_identical(mcp_call(conn, "whoami")$structured_content$client_id, registered)
  mcp_close(conn)
  expect_length(o$agent$urls, 2L)
  op <- o$log("op")
  expect_true("refused refresh_token invalid_grant" %in% op)
  expect_length(grep("^registered ", op), 1L)
  expect_identical(sum(startsWith(op, "authorized ")), 2L)
})

test_that("K10.5: the connect timeout does not run while the user is at the sign-in page; the sign-in has its own", {
  o <- oidc_peers(ttl = 60)
  withr::local_options(mcplite.oauth_user_agent = o$agent$fun)
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  # A user who takes 4 s to sign in, with a connect timeout of 2 s: the
  # time at the page is the sign-in's, not the request's.
  o$agent$delay <- 4
  started <- Sys.time()
  conn <- mcp_connect(url = o$url, name = "slow", timeout = 2,
                      oauth = list(cache_dir = file.path(withr::local_tempdir(), "oauth")))
  expect_gt(as.numeric(difftime(Sys.time(), started, units = "secs")), 4)
  expect_identical(mcp_call(conn, "whoami")$structured_content$sub, "r-user")
  mcp_close(conn)
  expect_length(o$agent$urls, 1L)

  # The sign-in's own limit (`oauth$timeout`): a clear error when it ran out
  # (the user agent, too late, finds no one listening: expected here).
  o$agent$quiet <- TRUE
  err <- tryCatch(
    mcp_connect(url = o$url, name = "slow", timeout = 30,
                oauth = list(cache_dir = file.path(withr::local_tempdir(), "oauth"), timeout = 1)),
    error = function(e) e
  )
  expect_s3_class(err, "mcplite_error_connection")
  expect_identical(err$reason, "auth")
  expect_match(conditionMessage(err), "sign-in was not completed within 1 seconds [(]`oauth[$]timeout`[)]")
  expect_length(o$agent$urls, 2L)
})

test_that("K4.6: the sign-in's own requests (metadata, registration, token) go through the proxy too", {
  o <- oidc_peers(ttl = 60)
  proxy <- start_tinyproxy()
  local_no_proxy_env()
  withr::local_envvar(HTTP_PROXY = proxy$url)
  withr::local_options(mcplite.oauth_user_agent = o$agent$fun)
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  conn <- mcp_connect(url = o$url, name = "proxied", oauth = list(cache_dir = file.path(withr::local_tempdir(), "oauth")))
  expect_identical(mcp_call(conn, "whoami")$structured_content$sub, "r-user")
  mcp_close(conn)
  op <- sub("^http://", "", o$issuer)
  mcp <- sub("^http://([^/]+)/.*$", "\\1", o$url)
  seen <- proxy$requests()
  expect_true(any(grepl(op, seen, fixed = TRUE)), info = paste(seen, collapse = "\n"))
  expect_true(any(grepl(mcp, seen, fixed = TRUE)), info = paste(seen, collapse = "\n"))
})

test_that("K10.4: step-up end to end: a tool that needs another scope is refused with 403, signed in for, and called", {
  o <- oidc_peers(ttl = 60)
  withr::local_options(mcplite.oauth_user_agent = o$agent$fun)
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  cache <- file.path(withr::local_tempdir(), "oauth")
  oauth <- list(cache_dir = cache)
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = oauth)
  expect_setequal(strsplit(query_of(o$agent$urls[[1]])$scope, " ")[[1]], c("mcp:tools", "offline_access"))
  expect_false("mcp:admin" %in% unlist(mcp_call(conn, "whoami")$structured_content$scopes))
  # the call is refused for want of scope (403 insufficient_scope); the
  # client asks for the challenged scopes with those it had, and calls again.
  # Its registration was for the first scopes only, which oidc-provider
  # holds it to: it registers anew for the wider ones (RULES K10.5).
  who <- mcp_call(conn, "admin")$structured_content
  expect_true(all(c("mcp:tools", "mcp:admin") %in% unlist(who$scopes)))
  expect_length(o$agent$urls, 2L)
  expect_setequal(strsplit(query_of(o$agent$urls[[2]])$scope, " ")[[1]], c("mcp:tools", "mcp:admin", "offline_access"))
  expect_true("mcp 403" %in% o$log("rs"))
  registered <- grep("^registered ", o$log("op"), value = TRUE)
  expect_length(registered, 2L)
  expect_identical(who$client_id, strsplit(registered[[2]], " ")[[1]][[2]])
  expect_false(any(grepl("^refused ", o$log("op"))))
  mcp_close(conn)
  # the wider token is kept: the next connection calls `admin` with no page
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = oauth)
  expect_true("mcp:admin" %in% unlist(mcp_call(conn, "admin")$structured_content$scopes))
  mcp_close(conn)
  expect_length(o$agent$urls, 2L)
})

test_that("K10.6: a call abandoned on the connection (its streams shut) does not break later refreshes", {
  o <- oidc_peers(ttl = 2)
  withr::local_options(mcplite.oauth_user_agent = o$agent$fun)
  withr::local_envvar(MCPLITE_OAUTH_USER_AGENT = "")
  cache <- file.path(withr::local_tempdir(), "oauth")
  conn <- mcp_connect(url = o$url, name = "oidc", oauth = list(cache_dir = cache))
  on.exit(mcp_close(conn), add = TRUE)
  # a call that times out at once: cancelled, the link's connections shut down
  expect_error(mcp_call(conn, "whoami", timeout = 1e-4), class = "mcplite_error_timeout")
  # once the access token expired, the next call refreshes it, no page
  refreshes <- sum(startsWith(o$log("op"), "token refresh_token "))
  expires <- cached_sign_in(cache)$saved$tokens$expires_at
  wait_until(function() as.numeric(Sys.time()) > expires + 0.5, "the access token to expire", 10)
  expect_identical(mcp_call(conn, "whoami")$structured_content$sub, "r-user")
  expect_gt(sum(startsWith(o$log("op"), "token refresh_token ")), refreshes)
  expect_length(o$agent$urls, 1L)
})
