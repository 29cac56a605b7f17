# The MCP client's exported functions (R/client.R) over real stdio: against
# mcplite's own server scripts (tests/clients/servers/), against small
# shell-script servers that misbehave on purpose (helpers in
# helper-client.R), and through a proxy that re-serves a server's tools.
# Peers written by others (Python and TypeScript SDKs, server-everything) are
# in test-client-peers.R; the other files of the client have their own
# test-client-*.R.

skip_on_cran()
skip_if_not_installed("withr")

test_that("the three-line server test: start a script, call a tool, stop it", {
  server <- mcp_connect_script(client_server_script())
  expect_identical(mcp_call(server, "add", list(x = 1, y = 2.5))$content[[1]], content_text("3.5"))
  expect_identical(mcp_close(server), "exited with status 0")
})

test_that("connections negotiate modern first and expose the version", {
  server <- mcp_connect_script(client_server_script())
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
    legacy <- mcp_connect_script(client_server_script(), protocol = v)
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

test_that("bad arguments to the client are mcplite_error naming the argument", {
  server <- mcp_connect_script(client_server_script())
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
  on.exit(mcp_close(conn), add = TRUE)
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
  on.exit(mcp_close(conn), add = TRUE)
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

test_that("an interrupt ends the wait also once tcltk is loaded, whose event loop loses it in R's own check (RULES S7)", {
  skip_if_not_installed("processx")
  skip_without_tcltk()
  running <- tempfile()
  server <- paste(legacy_sh, paste0("read call; touch ", running,
    "; sleep 60; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}'; cat >/dev/null"), sep = "\n")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "invisible(suppressWarnings(loadNamespace('tcltk')))",
    sprintf("conn <- mcp_connect('/bin/sh', c('-c', %s), name = 'sh')", deparse1(server)),
    "got <- tryCatch(mcp_call(conn, 'slow', timeout = 120), interrupt = function(e) 'interrupted')",
    "cat('got:', if (is.character(got)) got else 'the result', '\\n')",
    "mcp_close(conn)"
  ), script)
  p <- processx::process$new(http_rscript(), c("--vanilla", script), stdout = "|", stderr = "|",
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)))
  withr::defer(if (p$is_alive()) p$kill())
  wait_until(function() file.exists(running), "the call to reach the server")
  p$interrupt()
  # Without the engine's watch the call would run on until the server answers (60 s).
  p$wait(30000)
  expect_false(p$is_alive())
  expect_match(p$read_all_output(), "got: interrupted", fixed = TRUE)
})

test_that("mcp_tools() makes callable, servable mcplite tools", {
  server <- mcp_connect_script(client_server_script())
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
  proxy <- mcp_connect_script(client_server_script("client-proxy.R"), client_server_script())
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

test_that("mcp_close() closes the connections of tools made by mcp_tools() (RULES K8.3)", {
  config <- withr::local_tempfile(fileext = ".json")
  writeLines(jsonlite::toJSON(auto_unbox = TRUE, list(mcpServers = list(
    a = list(command = file.path(R.home("bin"), "Rscript"), args = list("--vanilla", client_server_script()),
             env = list(R_LIBS = paste(.libPaths(), collapse = ":"))),
    b = list(command = file.path(R.home("bin"), "Rscript"), args = list("--vanilla", client_server_script()),
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
  proxy <- mcp_connect_script(client_server_script("client-proxy.R"), client_server_script("slow.R"))
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

test_that("K8.6: mcp_tools() of several connections warns about one whose tools cannot be listed and goes on", {
  skip_on_cran()
  # each server answers every request after the handshake with `answer`
  # (its id put in)
  loop <- function(answer) {
    paste0("while read l; do id=$(echo \"$l\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); ",
           "echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',", answer, "}'; done")
  }
  good <- sh_connect(loop("\"result\":{\"tools\":[{\"name\":\"ok\",\"inputSchema\":{\"type\":\"object\"}}]}"),
                     name = "good")
  failing <- sh_connect(loop("\"error\":{\"code\":-32603,\"message\":\"listing broke\"}"), name = "failing")
  on.exit(mcp_close(list(good, failing)))
  expect_warning(
    tools <- mcp_tools(list(failing = failing, good = good)),
    class = "mcplite_warning_server"
  )
  expect_identical(names(tools), "ok")
  w <- tryCatch(mcp_tools(list(failing = failing)), warning = function(w) w)
  expect_identical(w$server, "failing")
  expect_s3_class(w$error, "mcplite_error_rpc")
  expect_match(conditionMessage(w), "Skipped MCP server `failing`:.*listing broke")
  # the connections stay open (they were given, not opened here)
  expect_true(mcp_server_info(good)$open)
  expect_true(mcp_server_info(failing)$open)
  expect_error(mcp_tools(list(failing = failing, good = good), on_error = "stop"), class = "mcplite_error_rpc")
})
