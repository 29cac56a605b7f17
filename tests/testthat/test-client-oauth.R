# Signing in (RULES K10): the settings of mcp_connect(oauth = ) and of a
# configuration entry, and the user agent that gets the sign-in page. The
# whole flow runs against the official conformance suite's authorization
# servers in tests/suites/21-conformance.sh (every auth/* client scenario).

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
  on.exit(proc$kill())
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
