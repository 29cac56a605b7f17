# The MCP client against servers no one here wrote, over stdio: the official
# Python SDK (mcp 2.3.0, low-level Server and MCPServer), the TypeScript SDK
# (1.x McpServer, 2.x McpServer) and the reference server
# @modelcontextprotocol/server-everything. The peer scripts are in
# tests/clients/python/peers and tests/clients/node/peers; their dependencies
# come from scripts/deps/20-clients.sh (skipped when absent).

skip_on_cran()
# The peer servers live in the repository's tests/clients, which the built
# package (R CMD check) does not carry.
skip_if_not(dir.exists(test_path("..", "clients")), "tests/clients is not here (R CMD check of the tarball)")

# The SDK peers serve the same tools (echo, add, fail, slow, crash), so one set
# of expectations covers them. `eras`: the protocol versions each one offers;
# `unknown`: the condition an unknown tool gives (the SDKs differ).
sdk_peers <- function() {
  out <- list()
  py <- venv_python("mcp")
  if (!is.null(py)) {
    dir <- normalizePath(test_path("..", "clients", "python", "peers"))
    out$py_lowlevel <- list(command = py, args = file.path(dir, "lowlevel_server.py"),
                            eras = c("auto", "2025-11-25", "2024-11-05"), auto = "2026-07-28",
                            unknown = "mcplite_error_rpc", cancel_log = TRUE, crash = TRUE, tools = 5L)
    out$py_mcpserver <- list(command = py, args = file.path(dir, "mcpserver_server.py"),
                             eras = c("auto", "2025-06-18"), auto = "2026-07-28",
                             unknown = "mcplite_error_tool", cancel_log = FALSE, crash = FALSE, tools = 4L)
  }
  node <- peer_node()
  if (!is.null(node)) {
    out$ts_sdk1 <- list(command = node$node, args = file.path(node$dir, "peers", "sdk1_server.mjs"),
                        eras = c("auto", "2024-11-05"), auto = "2025-11-25",
                        unknown = "mcplite_error_tool", cancel_log = TRUE, crash = TRUE, tools = 5L)
    out$ts_server2 <- list(command = node$node, args = file.path(node$dir, "peers", "server2_server.mjs"),
                           eras = c("auto", "2025-06-18"), auto = "2026-07-28",
                           unknown = "mcplite_error_rpc", cancel_log = TRUE, crash = TRUE, tools = 5L)
  }
  out
}

connect_peer <- function(name, p, protocol = "auto") {
  mcp_connect(p$command, p$args, name = name, protocol = protocol)
}

test_that("SDK servers work in every era they offer", {
  peers <- sdk_peers()
  skip_if(length(peers) == 0L, "no Python or Node peer servers installed (scripts/deps/20-clients.sh)")
  for (name in names(peers)) {
    p <- peers[[name]]
    for (era in p$eras) {
      conn <- connect_peer(name, p, era)
      info <- mcp_server_info(conn)
      expect_identical(info$protocol_version, if (era == "auto") p$auto else era, info = name)
      tools <- mcp_list_tools(conn)
      expect_length(tools, p$tools)
      expect_true(all(c("echo", "add", "fail", "slow") %in% names(tools)), info = name)
      expect_identical(tools$add$input_schema$type, "object", info = name)
      expect_identical(mcp_call(conn, "echo", list(text = "h\u00e9 \"q\"\n"))$content[[1]]$text, "h\u00e9 \"q\"\n",
                       info = name)
      res <- mcp_call(conn, "add", list(x = 1, y = 2.5))
      expect_equal(res$structured_content$sum, 3.5, info = name)
      expect_identical(res$content[[1]]$type, "text", info = name)
      expect_error(mcp_call(conn, "fail", list(message = "bad")), class = "mcplite_error_tool", info = name)
      expect_error(mcp_call(conn, "no_such_tool"), class = p$unknown, info = paste(name, era))
      seen <- list()
      res <- mcp_call(conn, "slow", list(steps = 3L, delay = 0.05),
                      progress = function(progress, total, message) {
                        seen[[length(seen) + 1L]] <<- c(progress, total)
                      })
      expect_identical(res$content[[1]]$text, "done", info = name)
      expect_equal(seen, list(c(1, 3), c(2, 3), c(3, 3)), info = paste(name, era))
      pid <- mcp_server_info(conn)$pid
      expect_match(mcp_close(conn), "^(exited with status 0|was killed by signal SIGTERM)", info = name)
      expect_false(file.exists(sprintf("/proc/%d/cmdline", pid)) &&
                     length(readLines(sprintf("/proc/%d/cmdline", pid), warn = FALSE)) > 0L, info = name)
    }
  }
})

test_that("the low-level Python server's paginated listing is followed", {
  py <- venv_python("mcp")
  skip_if(is.null(py), "no Python venv with the mcp SDK")
  p <- sdk_peers()$py_lowlevel
  conn <- connect_peer("py", p)
  on.exit(mcp_close(conn))
  expect_identical(names(mcp_list_tools(conn)), c("echo", "add", "fail", "slow", "crash"))
  expect_mapequal(mcp_list_tools(conn)$echo$annotations, list(title = "Echo", read_only_hint = TRUE))
})

test_that("interrupts cancel the call on SDK servers, which see notifications/cancelled", {
  peers <- Filter(function(p) p$cancel_log, sdk_peers())
  skip_if(length(peers) == 0L, "no peer servers installed")
  for (name in names(peers)) {
    conn <- connect_peer(name, peers[[name]])
    # interrupted once the call runs (its first progress report)
    running <- tempfile()
    interrupt_when(running)
    t0 <- Sys.time()
    got <- tryCatch(mcp_call(conn, "slow", list(steps = 100L, delay = 0.1), progress = function(...) file.create(running)),
                    interrupt = function(e) "interrupted")
    expect_identical(got, "interrupted", info = name)
    expect_lt(as.double(difftime(Sys.time(), t0, units = "secs")), 8)
    # the server stops the work and says so on stderr; the connection stays usable
    wait_until(function() any(grepl("slow was cancelled", mcp_stderr(conn))), "the cancellation on stderr", 5)
    expect_true(any(grepl("peer: slow was cancelled", mcp_stderr(conn), fixed = TRUE)), info = name)
    expect_identical(mcp_call(conn, "echo", list(text = "after"))$content[[1]]$text, "after", info = name)
    mcp_close(conn)
  }
})

test_that("an SDK server exiting mid-call gives a clear error with its stderr", {
  peers <- Filter(function(p) p$crash, sdk_peers())
  skip_if(length(peers) == 0L, "no peer servers installed")
  for (name in names(peers)) {
    conn <- connect_peer(name, peers[[name]])
    err <- tryCatch(mcp_call(conn, "crash"), error = function(e) e)
    expect_s3_class(err, "mcplite_error_connection")
    expect_identical(err$reason, "closed")
    expect_match(conditionMessage(err), paste0("MCP server `", name, "` closed the connection during the call to `crash`: the server exited with status 3"), fixed = TRUE)
    expect_match(conditionMessage(err), "peer: crashing on purpose", fixed = TRUE)
    expect_identical(mcp_close(conn), "exited with status 3")
  }
})

test_that("SDK servers' tools become mcplite tools that can be served again", {
  peers <- sdk_peers()
  skip_if(length(peers) == 0L, "no peer servers installed")
  conns <- lapply(names(peers), function(n) connect_peer(n, peers[[n]]))
  names(conns) <- names(peers)
  on.exit(mcp_close(conns))
  tools <- mcp_tools(conns, prefix = TRUE)
  for (name in names(peers)) {
    add <- tools[[paste0(name, "_add")]]
    expect_s3_class(add, "mcplite_tool")
    expect_equal(add(x = 20, y = 22)$structured_content$sum, 42, info = name)
  }
  # one aggregating server in process: every peer's tools side by side
  session <- mcp_handler(tools)
  init <- mcp_handle(session, list(jsonrpc = "2.0", id = 1L, method = "initialize", params = list(
    protocolVersion = "2025-06-18", capabilities = structure(list(), names = character()),
    clientInfo = list(name = "test", version = "1")
  )))
  expect_match(init, "\"protocolVersion\":\"2025-06-18\"", fixed = TRUE)
  out <- jsonlite::fromJSON(mcp_handle(session, list(
    jsonrpc = "2.0", id = 2L, method = "tools/call",
    params = list(name = paste0(names(peers)[[1]], "_echo"), arguments = list(text = "via proxy"))
  )), simplifyVector = FALSE)
  expect_identical(out$result$content[[1]]$text, "via proxy")
  expect_false(out$result$isError)
})

test_that("server-everything: its many tool shapes, progress and errors", {
  ev <- local_everything()
  info <- mcp_server_info(ev)
  expect_identical(info$server$name, "mcp-servers/everything")
  tools <- mcp_list_tools(ev)
  expect_true(all(c("echo", "get-sum", "get-tiny-image", "get-structured-content", "get-resource-links",
                    "get-annotated-message", "trigger-long-running-operation") %in% names(tools)))
  expect_identical(tools$`trigger-long-running-operation`$annotations$read_only_hint, TRUE)

  expect_identical(mcp_call(ev, "echo", list(message = "hi"))$content[[1]]$text, "Echo: hi")
  expect_match(mcp_call(ev, "get-sum", list(a = 2, b = 40))$content[[1]]$text, "42")
  img <- mcp_call(ev, "get-tiny-image")
  expect_identical(vapply(img$content, function(b) b$type, character(1)), c("text", "image", "text"))
  expect_identical(img$content[[2]]$mime_type, "image/png")
  expect_true(nchar(img$content[[2]]$data) > 100L)
  sc <- mcp_call(ev, "get-structured-content", list(location = "New York"))$structured_content
  expect_true(all(c("temperature", "conditions", "humidity") %in% names(sc)))
  expect_true(is.numeric(sc$temperature))
  links <- mcp_call(ev, "get-resource-links", list(count = 2))$content
  expect_identical(vapply(links, function(b) b$type, character(1)), c("text", "resource_link", "resource_link"))
  expect_match(links[[2]]$uri, "^demo://resource/")
  expect_identical(links[[2]]$mime_type, "text/plain")
  ann <- mcp_call(ev, "get-annotated-message", list(messageType = "error", includeImage = TRUE))$content
  expect_identical(ann[[1]]$annotations$priority, 1L)
  expect_identical(ann[[1]]$annotations$audience, I(c("user", "assistant")))
  expect_identical(ann[[2]]$type, "image")

  seen <- c()
  res <- mcp_call(ev, "trigger-long-running-operation", list(duration = 0.4, steps = 4L),
                  progress = function(progress, total, message) seen <<- c(seen, progress / total))
  expect_equal(seen, c(0.25, 0.5, 0.75, 1))
  expect_match(res$content[[1]]$text, "Long running operation completed")

  expect_error(mcp_call(ev, "echo", list(wrong = 1)), class = "mcplite_error_tool")
  expect_error(mcp_call(ev, "no-such-tool"), class = "mcplite_error")

  proxies <- mcp_tools(ev)
  expect_identical(proxies$echo(message = "again")$content[[1]]$text, "Echo: again")
  expect_identical(attr(proxies$`get-sum`, "mcplite")$name, "get-sum")
})

test_that("server-everything: its resources, templates and prompts, read from R (K11)", {
  ev <- local_everything()
  # Its static documents: every file of its docs directory, read whole.
  index <- attr(ev, "index")
  docs <- dir(file.path(dirname(index), "docs"))
  listed <- mcp_list_resources(ev)
  uris <- paste0("demo://resource/static/document/", docs)
  expect_true(all(uris %in% names(listed)))
  features <- "demo://resource/static/document/features.md"
  expect_identical(listed[[features]]$mime_type, "text/markdown")
  page <- mcp_read_resource(ev, features)
  expect_length(page, 1L)
  path <- file.path(dirname(index), "docs", "features.md")
  expect_identical(page[[1]]$text, readChar(path, file.size(path), useBytes = TRUE))
  # Its templates, filled by the server: text, and a blob as a raw vector.
  templates <- mcp_list_resource_templates(ev)
  expect_true(all(c("demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}") %in%
                    names(templates)))
  expect_match(mcp_read_resource(ev, "demo://resource/dynamic/text/3")[[1]]$text, "^Resource 3:")
  blob <- mcp_read_resource(ev, "demo://resource/dynamic/blob/2")[[1]]
  expect_type(blob$blob, "raw")
  expect_match(rawToChar(blob$blob), "^Resource 2: This is a base64 blob")
  expect_error(mcp_read_resource(ev, "demo://resource/dynamic/text/0"), class = "mcplite_error")
  # Its prompts, with and without arguments.
  prompts <- mcp_list_prompts(ev)
  expect_true(all(c("simple-prompt", "args-prompt") %in% names(prompts)))
  expect_identical(prompts$`args-prompt`$title, "Arguments Prompt")
  expect_identical(mcp_get_prompt(ev, "simple-prompt")$messages[[1]]$content$text,
                   "This is a simple prompt without arguments.")
  expect_identical(mcp_get_prompt(ev, "args-prompt", list(city = "Oslo", state = "Oslo"))$messages[[1]]$content$text,
                   "What's weather in Oslo, Oslo?")
})

test_that("K12.3: prompts/get and resources/read that ask first (Python MCPServer, 2026-07-28)", {
  py <- venv_python("mcp")
  skip_if(is.null(py), "the Python SDK is not installed")
  peer <- file.path(normalizePath(test_path("..", "clients", "python", "peers")), "mcpserver_server.py")
  asked <- character()
  answer <- function(q) {
    asked <<- c(asked, q$message)
    list(choice = "coffee")
  }
  conn <- mcp_connect(py, peer, elicitation = answer)
  withr::defer(mcp_close(conn))
  expect_identical(mcp_server_info(conn)$protocol_version, "2026-07-28")
  p <- mcp_get_prompt(conn, "drink", list(meal = "cake"))
  expect_identical(p$messages[[1]]$content$text, "Serve coffee with cake (state asked-once).")
  r <- mcp_read_resource(conn, "menu://toast")
  expect_identical(r[[1]]$text, "toast and coffee")
  expect_identical(asked, c("Which drink with cake?", "Which drink with toast?"))
  # The form's default fills an answer that leaves the field out.
  conn2 <- mcp_connect(py, peer, elicitation = function(q) list())
  withr::defer(mcp_close(conn2))
  expect_identical(mcp_read_resource(conn2, "menu://soup")[[1]]$text, "soup and tea")
  # A connection that answers nothing says so.
  conn3 <- mcp_connect(py, peer)
  withr::defer(mcp_close(conn3))
  expect_error(mcp_get_prompt(conn3, "drink", list(meal = "cake")), "answers no questions",
               class = "mcplite_error_client")
})
