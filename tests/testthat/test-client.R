# The MCP client (R/client.R) over real stdio: against mcplite's own server
# scripts (tests/clients/servers/), against small shell-script servers that
# misbehave on purpose, and through a proxy that re-serves a server's tools.
# Peers written by others (Python and TypeScript SDKs, server-everything) are
# in test-client-peers.R.

skip_on_cran()
skip_if_not_installed("withr")

server_script <- function(name = "everything.R") {
  path <- test_path("..", "clients", "servers", name)
  skip_if_not(file.exists(path), paste("test server script not found:", path))
  normalizePath(path)
}

# A server written in sh. The client numbers its requests 1, 2, 3, ... (the
# `server/discover` probe is 1, `initialize` 2, the first call 3), so a script
# can answer without parsing JSON.
legacy_sh <- paste(
  "read probe; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}'",
  "read init; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}'",
  "read initialized",
  sep = "\n"
)

sh_connect <- function(body, ..., name = "sh") {
  mcp_connect("/bin/sh", c("-c", paste(legacy_sh, body, sep = "\n")), ..., name = name)
}

# The first mcp_call() with arguments lists the tools (request 3, for their
# input schemas, RULES K5.2): a server for such calls answers that listing
# (no tools here) and numbers its calls from 4.
list_sh <- "read list; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}'"

process_alive <- function(pid) {
  stat <- suppressWarnings(tryCatch(readLines(sprintf("/proc/%d/stat", pid), warn = FALSE),
                                    error = function(e) character()))
  length(stat) > 0L && !grepl("^\\S+ \\(.*\\) Z", stat[[1L]])
}

expect_client_error <- function(expr, class) {
  err <- tryCatch({
    force(expr)
    NULL
  }, error = function(e) e)
  expect_s3_class(err, class)
  expect_s3_class(err, "mcplite_error_client")
  expect_s3_class(err, "mcplite_error")
  invisible(err)
}

test_that("the three-line server test: start a script, call a tool, stop it", {
  server <- mcp_connect_script(server_script())
  expect_identical(mcp_call(server, "add", list(x = 1, y = 2.5))$content[[1]], content_text("3.5"))
  expect_identical(mcp_close(server), "exited with status 0")
})

test_that("connections negotiate modern first and expose the version", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  info <- mcp_server_info(server)
  expect_identical(info$protocol_version, "2026-07-28")
  expect_identical(info$era, "modern")
  expect_identical(info$server$name, "mcplite")
  expect_identical(info$instructions, "Test server for mcplite client tests.")
  expect_true("2024-11-05" %in% unlist(info$supported_versions))
  expect_true(info$open)
  expect_true(process_alive(info$pid))
  out <- capture.output(print(server))
  expect_match(out[[1]], "<mcplite connection> everything.R (stdio: ", fixed = TRUE)
  expect_true(any(grepl("Protocol: 2026-07-28 (modern)", out, fixed = TRUE)))

  for (v in c("2025-11-25", "2025-06-18", "2024-11-05")) {
    legacy <- mcp_connect_script(server_script(), protocol = v)
    expect_identical(mcp_server_info(legacy)$protocol_version, v)
    expect_identical(mcp_server_info(legacy)$era, "legacy")
    expect_identical(mcp_call(legacy, "echo", list(text = "hi"))$content[[1]]$text, "hi")
    mcp_close(legacy)
  }
})

test_that("legacy-only servers are reached through the initialize fallback", {
  conn <- sh_connect(paste(
    list_sh,
    "read call; echo \"$call\" >&2; echo '{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"legacy ok\"}]}}'; cat >/dev/null",
    sep = "\n"
  ))
  on.exit(mcp_close(conn))
  expect_identical(mcp_server_info(conn)$protocol_version, "2025-06-18")
  expect_identical(mcp_server_info(conn)$server$name, "sh")
  expect_identical(mcp_call(conn, "x", list(a = 1L))$content[[1]]$text, "legacy ok")
  # legacy requests carry no modern _meta
  sent <- jsonlite::fromJSON(mcp_stderr(conn)[[1]], simplifyVector = FALSE)
  expect_identical(sent$method, "tools/call")
  expect_identical(sent$params, list(name = "x", arguments = list(a = 1L)))
  # insisting on the modern version fails instead of falling back
  err <- expect_client_error(
    sh_connect("cat >/dev/null", protocol = "2026-07-28"),
    "mcplite_error_connection"
  )
  expect_match(conditionMessage(err), "does not speak protocol 2026-07-28")
})

test_that("tools are listed with R spellings and called with the package's encoder", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  tools <- mcp_list_tools(server)
  expect_true(all(c("echo", "add", "stats", "search") %in% names(tools)))
  echo <- tools$echo
  expect_identical(echo$description, "Return the text unchanged.")
  expect_identical(echo$annotations, list(title = "Echo", read_only_hint = TRUE, idempotent_hint = TRUE))
  expect_identical(echo$input_schema$required, list("text"))
  expect_identical(tools$stats$output_schema$properties$n, list(type = "integer", description = "Count."))
  expect_identical(tools$search$input_schema$`$defs`$options$type, "object")

  # structured content by the JSON -> R rules of tool arguments
  res <- mcp_call(server, "stats", list(values = c(1, 2, 4)))
  expect_s3_class(res, "mcplite_tool_result")
  expect_false(res$is_error)
  expect_identical(res$structured_content$n, 3L)
  expect_equal(res$structured_content$mean, 2.3333)
  expect_identical(res$meta[["io.modelcontextprotocol/serverInfo"]]$name, "mcplite")
  expect_identical(mcp_call(server, "series", list(n = 3L))$structured_content, list(1L, 2L, 3L))
  expect_identical(mcp_call(server, "greeting")$structured_content, "hello")
  # payload options: I() keeps a one-element array, auto_unbox makes scalars
  one <- mcp_call(server, "stats", list(values = I(5)))$structured_content
  expect_identical(one$n, 1L)
  # sd is nullable in the server's output schema: null for one value
  expect_true("sd" %in% names(one) && is.null(one$sd))
  expect_identical(
    mcp_call(server, "search", list(query = "q", limit = 3L))$content[[1]]$text,
    "q-1\nq-2\nq-3"
  )
  expect_identical(
    mcp_call(server, "search", list(query = "q", options = list(upper = TRUE)))$content[[1]]$text,
    "Q-1\nQ-2"
  )
  expect_identical(mcp_call(server, "echo", list(text = "caf\u00e9 \u2603"))$content[[1]]$text, "caf\u00e9 \u2603")
})

test_that("every content type becomes the package's content objects", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  res <- mcp_call(server, "all_content")
  types <- vapply(res$content, function(b) b$type, character(1))
  expect_identical(types, c("text", "image", "audio", "resource_link", "resource", "resource"))
  expect_identical(class(res$content[[1]]), c("mcplite_content_text", "mcplite_content"))
  expect_identical(res$content[[1]]$annotations,
                   list(audience = I("user"), priority = 0.5, last_modified = "2025-01-01T00:00:00Z"))
  expect_identical(res$content[[1]]$meta, list(source = "test"))
  expect_identical(res$content[[2]]$mime_type, "image/png")
  expect_identical(res$content[[4]]$size, 42L)
  expect_identical(res$content[[4]]$title, "Report")
  expect_identical(res$content[[5]]$text, "Some notes.")
  expect_identical(res$content[[6]]$blob, "AAEC")
  expect_identical(res$content[[6]]$meta, list(origin = "memory"))
  expect_identical(res$structured_content, list(count = 6L))
  expect_identical(res$meta$request_kind, "demo")
  # the result is a valid tool result: it can be returned by a tool as is
  expect_s3_class(mcplite:::revalidate_tool_result(res), "mcplite_tool_result")
})

test_that("tool errors and JSON-RPC errors are distinct classed conditions", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  err <- expect_client_error(mcp_call(server, "fail", list(message = "{\"a\": 1}")), "mcplite_error_tool")
  expect_identical(conditionMessage(err), "{\"a\": 1}")
  expect_identical(err$text, "{\"a\": 1}")
  expect_true(err$result$is_error)
  expect_identical(err$tool, "fail")
  err <- expect_client_error(mcp_call(server, "flagged_error"), "mcplite_error_tool")
  expect_identical(err$text, "The file does not exist.")

  err <- expect_client_error(mcp_call(server, "no_such_tool"), "mcplite_error_rpc")
  expect_identical(err$code, -32602L)
  expect_identical(err$error_message, "Invalid params: unknown tool")
  expect_match(conditionMessage(err), "everything.R", fixed = TRUE)
  expect_false(inherits(err, "mcplite_error_tool"))
  # on 2024-11-05 audio and resource links are a tool error
  old <- mcp_connect_script(server_script(), protocol = "2024-11-05")
  on.exit(mcp_close(old), add = TRUE)
  err <- expect_client_error(mcp_call(old, "all_content"), "mcplite_error_tool")
  expect_match(err$text, "2024-11-05")
  # the connection is still usable after errors
  expect_identical(mcp_call(server, "echo", list(text = "ok"))$content[[1]]$text, "ok")
})

test_that("bad arguments to the client are mcplite_error naming the argument", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  expect_field_error(mcp_call(server, "echo", list("unnamed")), "arguments")
  expect_field_error(mcp_call(server, "echo", "text"), "arguments")
  expect_field_error(mcp_call(server, "echo", list(text = new.env())), "arguments")
  expect_field_error(mcp_call(server, c("a", "b")), "tool")
  expect_field_error(mcp_call(server, "echo", list(text = "x"), timeout = -1), "timeout")
  expect_field_error(mcp_call(server, "echo", list(text = "x"), progress = "yes"), "progress")
  expect_field_error(mcp_call("server", "echo"), "x")
  expect_field_error(mcp_connect(), "command")
  expect_field_error(mcp_connect("x", url = "http://localhost:1/mcp"), "command")
  expect_field_error(mcp_connect("x", protocol = "2025-03-26"), "protocol")
  expect_field_error(mcp_connect("x", env = c("no name")), "env")
  expect_field_error(mcp_connect("x", cwd = "/nonexistent/dir"), "cwd")
  expect_field_error(mcp_connect("x", "y", "z"), "...")
  expect_field_error(mcp_connect_script("/nonexistent/server.R"), "script")
})

test_that("a server that is not there, or exits, fails clearly with its stderr", {
  err <- expect_client_error(mcp_connect("/nonexistent/mcp-server"), "mcplite_error_connection")
  expect_identical(err$reason, "spawn")
  expect_match(conditionMessage(err), "Cannot start MCP server `mcp-server`", fixed = TRUE)

  err <- expect_client_error(
    mcp_connect("/bin/sh", c("-c", "echo 'missing token: set GITHUB_TOKEN' >&2; exit 2"), name = "gh"),
    "mcplite_error_connection"
  )
  expect_identical(err$reason, "closed")
  expect_match(conditionMessage(err), "exited with status 2")
  expect_match(conditionMessage(err), "missing token: set GITHUB_TOKEN", fixed = TRUE)
  expect_identical(err$stderr, "missing token: set GITHUB_TOKEN")

  # exit in the middle of a call: no hang, the status and stderr are named
  crash <- test_path("..", "clients", "servers", "client-crash.R")
  skip_if_not(file.exists(crash), "tests/clients is not here (R CMD check of the tarball)")
  server <- mcp_connect_script(crash)
  err <- expect_client_error(mcp_call(server, "crash"), "mcplite_error_connection")
  expect_identical(err$reason, "closed")
  msg <- conditionMessage(err)
  expect_match(msg, "MCP server `client-crash.R` closed the connection during the call to `crash`", fixed = TRUE)
  expect_match(msg, "exited with status 3")
  expect_match(msg, "crash: giving up", fixed = TRUE)
  expect_false(mcp_server_info(server)$open)
  err <- expect_client_error(mcp_call(server, "crash"), "mcplite_error_connection")
  expect_match(conditionMessage(err), "closed")
  expect_identical(mcp_close(server), "exited with status 3")
})

test_that("a server that never answers times out, and the request is cancelled", {
  withr::local_options(mcplite.client_probe_timeout = 0.2)
  err <- expect_client_error(
    mcp_connect("/bin/sh", c("-c", "cat >/dev/null"), timeout = 0.5, name = "silent"),
    "mcplite_error_timeout"
  )
  expect_match(conditionMessage(err), "MCP server `silent` did not complete the handshake within 500 ms", fixed = TRUE)

  conn <- sh_connect("read call; read cancel; echo \"$cancel\" >&2; read call2; echo '{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}'; cat >/dev/null")
  on.exit(mcp_close(conn))
  err <- expect_client_error(mcp_call(conn, "slow", timeout = 0.3), "mcplite_error_timeout")
  expect_identical(err$seconds, 0.3)
  expect_match(conditionMessage(err), "did not answer the call to `slow` within 300 ms; the request was cancelled")
  # the next call goes through, and the server saw notifications/cancelled for id 3
  expect_identical(mcp_call(conn, "next")$content, list())
  cancel <- jsonlite::fromJSON(mcp_stderr(conn)[[1]], simplifyVector = FALSE)
  expect_identical(cancel$method, "notifications/cancelled")
  expect_identical(cancel$params$requestId, 3L)
})

test_that("garbage and huge lines on stdout are reported, not fatal", {
  conn <- sh_connect(paste(
    "read call; echo 'Loading model... done'; echo '[not json'",
    "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"fine\"}]}}'",
    "read call; echo 'fatal: lost the plot'; exit 1",
    sep = "\n"
  ))
  expect_identical(mcp_call(conn, "a")$content[[1]]$text, "fine")
  err <- expect_client_error(mcp_call(conn, "b"), "mcplite_error_connection")
  expect_match(conditionMessage(err), "3 lines that are not JSON-RPC, the last: fatal: lost the plot", fixed = TRUE)
  mcp_close(conn)

  withr::local_options(mcplite.client_max_message = 100000)
  conn <- sh_connect(paste(
    "read call; head -c 300000 /dev/zero | tr '\\0' x; echo",
    "read cancel; read call2; echo '{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}'; cat >/dev/null",
    sep = "\n"
  ))
  on.exit(mcp_close(conn))
  err <- expect_client_error(mcp_call(conn, "big"), "mcplite_error_connection")
  expect_identical(err$reason, "protocol")
  expect_match(conditionMessage(err), "longer than 100000 bytes")
  expect_identical(mcp_call(conn, "small")$content, list())
})

test_that("progress reaches the callback and keeps a long call alive", {
  conn <- sh_connect(paste(
    "read call",
    "for i in 1 2 3 4; do sleep 0.2; echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":'$i',\"total\":4,\"message\":\"step '$i'\"}}'; done",
    "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}'",
    "echo \"$call\" >&2; cat >/dev/null",
    sep = "\n"
  ))
  on.exit(mcp_close(conn))
  seen <- list()
  res <- mcp_call(conn, "slow", timeout = 0.5, progress = function(progress, total, message) {
    seen[[length(seen) + 1L]] <<- list(progress, total, message)
  })
  expect_identical(res$content[[1]]$text, "done")
  expect_identical(seen, lapply(1:4, function(i) list(i, 4L, paste("step", i))))
  sent <- jsonlite::fromJSON(mcp_stderr(conn)[[1]], simplifyVector = FALSE)
  expect_identical(sent$params$`_meta`$progressToken, 3L)
})

test_that("progress never extends a call beyond max_time", {
  conn <- sh_connect(paste(
    "read call",
    "i=0; while :; do i=$((i+1)); sleep 0.1; echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":'$i'}}'; done",
    sep = "\n"
  ))
  on.exit(mcp_close(conn))
  n <- 0L
  err <- expect_client_error(
    mcp_call(conn, "forever", timeout = 0.5, max_time = 1, progress = function(...) n <<- n + 1L),
    "mcplite_error_timeout"
  )
  expect_identical(err$seconds, 1)
  expect_gt(n, 2L)
})

test_that("an interrupt cancels the call on the server and returns at once", {
  # the server marks that the call arrived; the interrupt follows
  running <- tempfile()
  conn <- sh_connect(paste0("read call; touch ", running, "; read cancel; echo \"$cancel\" >&2; read call2; echo '{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}'; cat >/dev/null"))
  on.exit(mcp_close(conn))
  interrupt_when(running)
  t0 <- Sys.time()
  got <- tryCatch(mcp_call(conn, "slow", timeout = 60), interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_lt(as.double(difftime(Sys.time(), t0, units = "secs")), 30)
  # the server was told, and the connection still works
  expect_identical(mcp_call(conn, "next")$content, list())
  cancel <- jsonlite::fromJSON(mcp_stderr(conn)[[1]], simplifyVector = FALSE)
  expect_identical(cancel$method, "notifications/cancelled")
  expect_identical(cancel$params$requestId, 3L)
})

test_that("closing, garbage collection and R exiting end the server process", {
  server <- mcp_connect_script(server_script())
  pid <- mcp_server_info(server)$pid
  expect_true(process_alive(pid))
  expect_identical(mcp_close(server), "exited with status 0")
  expect_false(process_alive(pid))
  expect_identical(mcp_close(server), "exited with status 0")
  err <- expect_client_error(mcp_call(server, "echo", list(text = "x")), "mcplite_error_connection")
  expect_match(conditionMessage(err), "is closed")

  server <- mcp_connect_script(server_script())
  pid <- mcp_server_info(server)$pid
  rm(server)
  gc()
  expect_false(process_alive(pid))

  # a server that ignores EOF and SIGTERM, with a child of its own
  conn <- sh_connect("trap '' TERM; sleep 300 & echo $! >&2; while :; do sleep 1; done")
  wait_until(function() length(mcp_stderr(conn)) > 0L, "the server to report its child")
  grandchild <- as.integer(mcp_stderr(conn)[[1]])
  expect_true(process_alive(grandchild))
  expect_match(mcp_close(conn), "SIGKILL")
  wait_until(function() !process_alive(grandchild), "the server's child to end", 10)

  # R exits without closing: the server goes with it
  out <- system2(
    file.path(R.home("bin"), "Rscript"),
    c("--vanilla", "-e", shQuote(sprintf(
      "s <- mcplite::mcp_connect_script('%s'); cat(mcplite::mcp_server_info(s)$pid)", server_script()
    ))),
    stdout = TRUE, stderr = FALSE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))
  )
  pid <- as.integer(out[[length(out)]])
  expect_false(is.na(pid))
  wait_until(function() !process_alive(pid), "the server to end with R", 10)
})

test_that("servers get an allowlisted environment plus their env, and a working directory", {
  withr::local_envvar(MCPLITE_TEST_SECRET = "s3cret", LC_MEASUREMENT = "C")
  script <- paste(
    "read call",
    "printf '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"structuredContent\":{\"secret\":\"%s\",\"given\":\"%s\",\"home\":\"%s\",\"lc\":\"%s\",\"dir\":\"%s\"},\"content\":[]}}\\n' \"$MCPLITE_TEST_SECRET\" \"$GIVEN\" \"$HOME\" \"$LC_MEASUREMENT\" \"$(pwd)\"",
    "cat >/dev/null",
    sep = "\n"
  )
  dir <- withr::local_tempdir()
  conn <- sh_connect(script, env = c(GIVEN = "yes"), cwd = dir)
  on.exit(mcp_close(conn))
  sc <- mcp_call(conn, "env")$structured_content
  expect_identical(sc$secret, "")
  expect_identical(sc$given, "yes")
  expect_identical(sc$home, Sys.getenv("HOME"))
  expect_identical(sc$lc, "C")
  expect_identical(normalizePath(sc$dir), normalizePath(dir))
})

test_that("mcp_tools() makes callable, servable mcplite tools", {
  server <- mcp_connect_script(server_script())
  on.exit(mcp_close(server))
  tools <- mcp_tools(server)
  expect_true(all(vapply(tools, inherits, logical(1), "mcplite_tool")))
  expect_identical(names(tools), names(mcp_list_tools(server)))
  # callable directly
  expect_identical(tools$add(x = 2, y = 3)$content[[1]]$text, "5")
  expect_error(tools$add(2, 3), class = "mcplite_error")
  expect_error(tools$fail(message = "no"), class = "mcplite_error_tool")
  # the same listing as the original server, through the engine
  session <- mcp_handler(tools)
  listed <- jsonlite::fromJSON(mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/list",
    params = list(`_meta` = list(`io.modelcontextprotocol/protocolVersion` = "2026-07-28",
                                 `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())))
  )), simplifyVector = FALSE)$result$tools
  original <- mcp_list_tools(server)
  for (t in listed) {
    o <- original[[t$name]]
    expect_identical(t$description, o$description)
    expect_identical(t$inputSchema, o$input_schema)
    expect_identical(t$outputSchema, o$output_schema)
  }
  expect_identical(listed[[1]]$annotations, list(title = "Echo", readOnlyHint = TRUE, idempotentHint = TRUE))
  prefixed <- mcp_tools(list(a = server), prefix = TRUE)
  expect_true("a_echo" %in% names(prefixed))
  expect_true("x.echo" %in% names(mcp_tools(server, prefix = "x.")))
})

test_that("a proxy server re-serves another server's tools over stdio", {
  proxy <- mcp_connect_script(server_script("client-proxy.R"), server_script())
  on.exit(mcp_close(proxy))
  tools <- mcp_list_tools(proxy)
  expect_identical(names(tools)[1:3], c("hello", "up_echo", "up_add"))
  expect_identical(mcp_call(proxy, "hello", list(who = "R"))$content[[1]]$text, "Hello, R!")
  expect_identical(mcp_call(proxy, "up_add", list(x = 40, y = 2))$content[[1]]$text, "42")
  res <- mcp_call(proxy, "up_stats", list(values = list(1, 2, 3)))
  expect_identical(res$structured_content$n, 3L)
  err <- expect_client_error(mcp_call(proxy, "up_fail", list(message = "deep")), "mcplite_error_tool")
  expect_identical(err$text, "deep")
  types <- vapply(mcp_call(proxy, "up_all_content")$content, function(b) b$type, character(1))
  expect_identical(types, c("text", "image", "audio", "resource_link", "resource", "resource"))
})

test_that("configuration files connect to each server", {
  withr::local_envvar(MCPLITE_TEST_SECRET = "s3cret")
  dir <- withr::local_tempdir()
  config <- file.path(dir, "config.json")
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = ":")
  echo_env <- paste(legacy_sh, "read call; printf '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s|%s\"}]}}\\n' \"$MCPLITE_TEST_SECRET\" \"$TOKEN\"; cat >/dev/null", sep = "\n")
  writeLines(jsonlite::toJSON(auto_unbox = TRUE, pretty = TRUE, list(mcpServers = list(
    everything = list(command = rscript, args = list("--vanilla", server_script()), env = list(R_LIBS = libs)),
    shell = list(command = "/bin/sh", args = list("-c", echo_env), env = list(TOKEN = "t0k"), timeout = 10),
    off = list(command = "/nonexistent", disabled = TRUE)
  ))), config)
  servers <- mcp_connect_config(config)
  on.exit(mcp_close(servers))
  expect_identical(names(servers), c("everything", "shell"))
  expect_identical(servers$everything$name, "everything")
  expect_identical(mcp_call(servers$shell, "env")$content[[1]]$text, "|t0k")
  tools <- mcp_tools(servers["everything"], prefix = TRUE)
  expect_true("everything_echo" %in% names(tools))
  only <- mcp_connect_config(config, servers = "shell")
  expect_identical(names(only), "shell")
  mcp_close(only)

  # failures: stop (closing what was opened) or warn and skip
  bad <- file.path(dir, "bad.json")
  writeLines('{"mcpServers": {"ok": {"command": "/bin/sh", "args": ["-c", "cat"]}, "missing": {"command": "/nonexistent/srv"}}}', bad)
  withr::local_options(mcplite.client_probe_timeout = 0.2)
  expect_error(mcp_connect_config(bad, servers = "missing"), class = "mcplite_error_connection")
  expect_warning(none <- mcp_connect_config(bad, servers = "missing", on_error = "warn"), "Cannot start")
  expect_identical(none, list())

  # malformed files name the problem
  expect_field_error(mcp_connect_config(file.path(dir, "nope.json")), "path")
  writeLines("{", bad)
  expect_field_error(mcp_connect_config(bad), "path")
  writeLines('{"servers": {}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers")
  writeLines('{"mcpServers": {"x": {"args": []}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x")
  writeLines('{"mcpServers": {"x": {"command": "a", "env": {"A": 1}}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x$env")
  writeLines('{"mcpServers": {"x": {"type": "sse", "url": "http://localhost/sse"}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x$type")
  expect_field_error(mcp_connect_config(config, servers = "nope"), "servers")
})

test_that("a server's stderr is kept for the connection, never written to R's stdout or stderr", {
  # Run the client in a child R, so that R's own stdout and stderr can be
  # read: the server writes a marker to its stderr before and after answering.
  script <- paste(legacy_sh,
    "echo 'SERVER-STDERR-1' >&2",
    "read call; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}'",
    "echo 'SERVER-STDERR-2' >&2; cat >/dev/null", sep = "\n")
  code <- c(
    sprintf("conn <- mcplite::mcp_connect('/bin/sh', c('-c', %s))", deparse(script)),
    "cat('answer:', mcplite::mcp_call(conn, 'x')$content[[1]]$text, '\\n')",
    "Sys.sleep(0.3)",
    "cat('kept:', paste(mcplite::mcp_stderr(conn), collapse = ','), '\\n')",
    "invisible(mcplite::mcp_close(conn))"
  )
  file <- withr::local_tempfile(fileext = ".R")
  writeLines(code, file)
  res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", file),
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)), error_on_status = FALSE)
  expect_identical(res$status, 0L)
  expect_match(res$stdout, "answer: ok", fixed = TRUE)
  expect_match(res$stdout, "kept: SERVER-STDERR-1,SERVER-STDERR-2", fixed = TRUE)
  lines <- strsplit(paste(res$stdout, res$stderr), "\n")[[1]]
  expect_false(any(grepl("^SERVER-STDERR", lines)))
})

test_that("arguments are shaped by the tool's input schema from tools/list (RULES K5.2)", {
  schema <- paste0(
    '{"type":"object","properties":{',
    '"values":{"type":"array","items":{"type":["number","null"]}},',
    '"opts":{"type":"object"},',
    '"note":{"type":["string","null"]},',
    '"n":{"type":"number"},',
    '"rows":{"type":"array","items":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}},',
    '"either":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}}'
  )
  listing <- sprintf(
    "read list; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":%s}]}}'",
    schema
  )
  reply <- function(id) sprintf("read call; echo \"$call\" >&2; echo '{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[]}}'", id)
  conn <- sh_connect(paste(listing, reply(4), reply(5), reply(6), "cat >/dev/null", sep = "\n"))
  on.exit(mcp_close(conn))
  # the `arguments` text of the i-th call the server received (it writes
  # each call to its stderr before answering)
  arguments_sent <- function(i) {
    deadline <- Sys.time() + 10
    while (length(mcp_stderr(conn)) < i && Sys.time() < deadline) Sys.sleep(0.02)
    sub('^.*"arguments":(.*)}}$', "\\1", mcp_stderr(conn)[[i]])
  }
  mcp_call(conn, "t", list(values = 5, opts = list(), note = NA, n = 1, rows = list(list(tags = "a")), either = "x"))
  expect_identical(
    (arguments_sent(1)),
    '{"values":[5],"opts":{},"note":null,"n":1,"rows":[{"tags":["a"]}],"either":"x"}'
  )
  mcp_call(conn, "t", list(values = c(1, NA), note = "fine", n = NA_real_))
  # NA elements become null where the items allow it; `n` does not allow null
  expect_identical((arguments_sent(2)), '{"values":[1,null],"note":"fine","n":"NA"}')
  # a tool the server did not list: the encoder's own rules
  mcp_call(conn, "unlisted", list(values = 5, opts = list()))
  expect_identical((arguments_sent(3)), '{"values":5,"opts":[]}')
})

test_that("a connect timeout is honoured within half a second (RULES K2.7)", {
  t0 <- Sys.time()
  err <- expect_client_error(
    mcp_connect("/bin/sh", c("-c", "echo 'starting up'; cat >/dev/null"), timeout = 1, name = "hung"),
    "mcplite_error_timeout"
  )
  expect_lt(as.double(difftime(Sys.time(), t0, units = "secs")), 1.5)
  expect_identical(err$seconds, 1)
  # the line that was not JSON-RPC is named, once
  expect_identical(
    conditionMessage(err),
    "MCP server `hung` did not complete the handshake within 1 s (the server also wrote 1 line that is not JSON-RPC, the last: starting up)."
  )
})

test_that("connect errors: junk noted once, the exit status kept, paths that do not exist (RULES K7.2)", {
  for (script in c("echo 'not json'; exit 3", "echo 'not json'; sleep 0.3; exit 3")) {
    err <- expect_client_error(mcp_connect("bash", c("-c", script), name = "b"), "mcplite_error_connection")
    expect_identical(lengths(regmatches(conditionMessage(err), gregexpr("not JSON-RPC", conditionMessage(err)))), 1L)
    expect_match(conditionMessage(err), "the last: not json", fixed = TRUE)
    expect_identical(err$reason, "closed")
    expect_identical(err$status, 3L)
    expect_identical(err$server, "b")
  }
  err <- expect_client_error(mcp_connect("/no/such/dir/mcp-server"), "mcplite_error_connection")
  expect_identical(err$reason, "spawn")
  expect_identical(conditionMessage(err), "Cannot start MCP server `mcp-server`: cannot start `/no/such/dir/mcp-server`: no such file.")
  err <- expect_client_error(mcp_connect("no-such-mcp-server-anywhere"), "mcplite_error_connection")
  expect_match(conditionMessage(err), "no such program on the PATH.", fixed = TRUE)
  # a server that exits mid-call: its exit status
  conn <- sh_connect("read call; echo 'bye' >&2; exit 4")
  err <- expect_client_error(mcp_call(conn, "x"), "mcplite_error_connection")
  expect_identical(err$status, 4L)
  expect_identical(err$stderr, "bye")
  expect_match(conditionMessage(err), "exited with status 4.\nThe server's standard error ended with:\n  bye", fixed = TRUE)
})

test_that("the client reaches the engine only through the wrappers and bridge_value() (RULES K1.2)", {
  src <- test_path("..", "..", "R", "client.R")
  skip_if_not(file.exists(src), "needs the package sources")
  code <- readLines(src)
  expect_false(any(grepl(".Call(", code, fixed = TRUE)))
  expect_false(any(grepl("mcplite_client_failure", code, fixed = TRUE)))
})

test_that("mcp_close() closes the connections of tools made by mcp_tools() (RULES K8.3)", {
  config <- withr::local_tempfile(fileext = ".json")
  writeLines(jsonlite::toJSON(auto_unbox = TRUE, list(mcpServers = list(
    a = list(command = file.path(R.home("bin"), "Rscript"), args = list("--vanilla", server_script()),
             env = list(R_LIBS = paste(.libPaths(), collapse = ":"))),
    b = list(command = file.path(R.home("bin"), "Rscript"), args = list("--vanilla", server_script()),
             env = list(R_LIBS = paste(.libPaths(), collapse = ":")))
  ))), config)
  tools <- mcp_tools(config, prefix = TRUE)
  expect_identical(tools$a_add(x = 1, y = 2)$content[[1]]$text, "3")
  conns <- mcplite:::tools_connections(tools)
  expect_length(conns, 2L)
  pids <- vapply(conns, function(x) mcp_server_info(x)$pid, integer(1))
  expect_true(all(vapply(pids, process_alive, logical(1))))
  expect_identical(unname(mcp_close(tools)), c("exited with status 0", "exited with status 0"))
  expect_false(any(vapply(pids, process_alive, logical(1))))
  err <- expect_client_error(tools$b_add(x = 1, y = 2), "mcplite_error_connection")
  expect_match(conditionMessage(err), "is closed")
  expect_field_error(mcp_close(list(1, 2)), "x")
})

test_that("a proxy passes the remote server's progress on, and its cancellation back (RULES K8.2)", {
  proxy <- mcp_connect_script(server_script("client-proxy.R"), server_script("slow.R"))
  on.exit(mcp_close(proxy))
  seen <- list()
  res <- mcp_call(proxy, "up_count", list(n = 3L, pause = 0.3), progress = function(progress, total, message) {
    seen[[length(seen) + 1L]] <<- list(progress, total, message)
  })
  expect_identical(res$content[[1]]$text, "3")
  expect_identical(seen, lapply(1:3, function(i) list(i, 3L, paste("step", i, "of", 3))))

  dir <- withr::local_tempdir()
  system2("/bin/sh", c("-c", shQuote(sprintf(
    "while [ ! -e '%s' ]; do sleep 0.05; done; kill -INT %d", file.path(dir, "started"), Sys.getpid()
  ))), wait = FALSE)
  got <- tryCatch(mcp_call(proxy, "up_guarded", list(dir = dir, seconds = 30)), interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  deadline <- Sys.time() + 20
  while (!file.exists(file.path(dir, "on_exit")) && Sys.time() < deadline) Sys.sleep(0.05)
  expect_identical(sort(list.files(dir)), c("interrupted", "on_exit", "started"))
  expect_identical(mcp_call(proxy, "up_echo", list(text = "after"))$content[[1]]$text, "after")
})
