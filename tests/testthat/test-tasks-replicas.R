# Tasks behind nginx (RULES V4.4, issue 46): three replicas of the tasks
# server (tests/clients/servers/tasks.R) with one shared task directory,
# behind the shipped inst/deploy/nginx.conf (start_nginx_replicas(),
# helper-http.R). Requests are sent with the curl command line, each on a new
# connection.

skip_on_cran()

# The `_meta` of a 2026-07-28 request whose client declares the tasks
# extension.
tasks_meta <- function() {
  list(
    "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" =
      list(extensions = list("io.modelcontextprotocol/tasks" = structure(list(), names = character())))
  )
}

# A 2026-07-28 request with its routing headers: Mcp-Name is the tool's name
# for tools/call, the task's id for tasks/*.
tasks_modern <- function(url, method, name, params = list()) {
  params[["_meta"]] <- tasks_meta()
  body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 1L, method = method, params = params), auto_unbox = TRUE)
  curl_http(url, body, c("MCP-Protocol-Version: 2026-07-28", paste0("Mcp-Method: ", method),
                         paste0("Mcp-Name: ", name), "Accept: application/json, text/event-stream"))
}

# The JSON-RPC answer in a response, whether JSON or an event stream (its
# last message).
rpc_answer <- function(r) {
  body <- r$body
  if (!startsWith(trimws(body), "{")) {
    data <- sub("^data: ?", "", grep("^data:", strsplit(body, "\r?\n")[[1]], value = TRUE))
    body <- data[length(data)]
  }
  jsonlite::fromJSON(body, simplifyVector = FALSE)
}

# A 2025-11-25 session: initialize (nginx picks the replica), then
# notifications/initialized; its id.
tasks_session <- function(url) {
  init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  r <- curl_http(url, init)
  expect_identical(r$status, 200L)
  sid <- sub("^[^:]*: *([^\r]*)\r?$", "\\1", grep("^mcp-session-id:", r$headers, ignore.case = TRUE, value = TRUE))
  tasks_legacy(url, sid, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  sid
}

tasks_legacy <- function(url, sid, body) {
  curl_http(url, body, c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25"))
}

tasks_legacy_rpc <- function(url, sid, method, params) {
  body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 2L, method = method, params = params), auto_unbox = TRUE)
  r <- tasks_legacy(url, sid, body)
  expect_identical(r$status, 200L)
  rpc_answer(r)
}

# `f()` until it gives something other than NULL or FALSE (at most `timeout`
# seconds, then the test fails saying `what`).
await_value <- function(f, what, timeout = 60) {
  deadline <- Sys.time() + timeout
  repeat {
    v <- f()
    if (!is.null(v) && !isFALSE(v)) return(v)
    if (Sys.time() > deadline) stop("timed out waiting for ", what)
    Sys.sleep(0.05)
  }
}

test_that("V4.4: behind nginx with three replicas and one task directory, a task is found from any connection", {
  skip_if_not_installed("jsonlite")
  dir <- file.path(withr::local_tempdir(), "tasks")
  code <- readLines(client_server_script("tasks.R"))
  env <- c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = "0", MCPLITE_TASK_DIR = dir, MCPLITE_TEST_WORKERS = "1")
  nx <- start_nginx_replicas(code, env = env)
  url <- nx$url
  names(nx$replicas) <- paste0("r808", 1:3)
  direct <- vapply(nx$replicas, function(r) r$url, "")

  # (a) 2026-07-28: a task created through nginx (any replica) carries its
  # replica's name; every tasks/get, each on a new connection, reaches that
  # replica (Mcp-Name): it sees the tool's progress messages while it runs
  # (a task file holds none), then the completed task with its result.
  r <- tasks_modern(url, "tools/call", "fit", list(name = "fit", arguments = list(steps = 30L, ms = 100)))
  expect_identical(r$status, 200L)
  created <- rpc_answer(r)$result
  expect_identical(created$resultType, "task")
  task <- created$taskId
  expect_match(task, "^r808[1-3]\\.[0-9a-f]{32}$")
  owner <- sub("\\..*$", "", task)
  expect_true(file.exists(file.path(dir, paste0(task, ".json"))))
  get <- function(at = url) {
    r <- tasks_modern(at, "tasks/get", task, list(taskId = task))
    expect_identical(r$status, 200L)
    a <- rpc_answer(r)
    expect_null(a$error)
    expect_identical(a$result$taskId, task)
    a$result
  }
  seen <- list()
  last <- await_value(function() {
    g <- get()
    seen[[length(seen) + 1L]] <<- g
    if (identical(g$status, "completed")) g
  }, "the task to complete")
  expect_identical(last$result$content[[1]]$text, "fitted in 30 steps")
  working <- Filter(function(g) identical(g$status, "working"), seen)
  expect_gt(length(working), 3L)
  # Once the tool has reported progress, every answer shows it: none came
  # from a replica reading the task's file.
  first <- Position(function(g) !is.null(g$statusMessage), working)
  expect_false(is.na(first))
  later <- working[seq(first, length(working))]
  expect_true(all(vapply(later, function(g) grepl("^step [0-9]+ of 30$", g$statusMessage %||% ""), TRUE)))
  for (i in 1:10) {
    g <- get()
    expect_identical(g$status, "completed")
    expect_identical(g$result$content[[1]]$text, "fitted in 30 steps")
  }
  # Every replica finds it when asked directly: the others read its file.
  for (at in direct) {
    g <- get(at)
    expect_identical(g$status, "completed")
    expect_identical(g$result$content[[1]]$text, "fitted in 30 steps")
  }

  # (b) 2025-11-25: a task made in one session, asked about in new
  # sessions, which land on every replica: all find it (another replica's
  # task through the shared directory), tasks/result included, and
  # tasks/result on another replica waits for the end.
  sid <- tasks_session(url)
  made <- tasks_legacy_rpc(url, sid, "tools/call",
                           list(name = "fit", arguments = list(steps = 20L, ms = 100), task = list(ttl = 60000)))
  legacy_task <- made$result$task$taskId
  expect_match(legacy_task, paste0("^", sub("\\..*$", "", sid), "\\.[0-9a-f]{32}$"))
  sids <- vapply(1:9, function(i) tasks_session(url), "")
  expect_setequal(unique(sub("\\..*$", "", sids)), names(direct))
  foreign <- sids[sub("\\..*$", "", sids) != sub("\\..*$", "", sid)][[1]]
  # Cancelling it from another replica is refused, naming its replica.
  refused <- tasks_legacy_rpc(url, foreign, "tasks/cancel", list(taskId = legacy_task))
  expect_identical(refused$error$code, -32602L)
  expect_match(refused$error$message, "runs on replica r808[1-3]")
  waited <- processx::process$new("curl", c("-s", "--max-time", "60", "-H", "Content-Type: application/json",
    "-H", paste0("Mcp-Session-Id: ", foreign), "-H", "MCP-Protocol-Version: 2025-11-25", "--data-binary",
    sprintf('{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"%s"}}', legacy_task), url),
    stdout = "|", stderr = "|")
  withr::defer(if (waited$is_alive()) waited$kill())
  for (s in sids) {
    g <- tasks_legacy_rpc(url, s, "tasks/get", list(taskId = legacy_task))
    expect_null(g$error)
    expect_identical(g$result$taskId, legacy_task)
    expect_true(g$result$status %in% c("working", "completed"))
  }
  for (s in sids) {
    done <- await_value(function() {
      g <- tasks_legacy_rpc(url, s, "tasks/get", list(taskId = legacy_task))$result
      if (identical(g$status, "completed")) g
    }, "the legacy task to complete")
    res <- tasks_legacy_rpc(url, s, "tasks/result", list(taskId = legacy_task))
    expect_identical(res$result$content[[1]]$text, "fitted in 20 steps")
    expect_identical(res$result[["_meta"]][["io.modelcontextprotocol/related-task"]]$taskId, legacy_task)
  }
  waited$wait(60000)
  w <- jsonlite::fromJSON(waited$read_all_output(), simplifyVector = FALSE)
  expect_identical(w$id, 5L)
  expect_identical(w$result$content[[1]]$text, "fitted in 20 steps")

  # A replica started again on the directory reads back its own tasks only:
  # nothing about the others' files on its standard error, and the others'
  # tasks are still found through it.
  again <- setdiff(names(direct), owner)[[1]]
  port <- sub("^http://127.0.0.1:([0-9]+)/mcp$", "\\1", direct[[again]])
  nx$replicas[[again]]$process$kill()
  await_value(function() !port_listening(as.integer(port)), "the replica to stop", 10)
  restarted <- start_http_server(code, env = c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = port,
    MCPLITE_TASK_DIR = dir, MCPLITE_TEST_WORKERS = "1", MCPLITE_REPLICA = again))
  expect_identical(restarted$url, direct[[again]])
  g <- get(direct[[again]])
  expect_identical(g$status, "completed")
  s <- tasks_session(direct[[again]])
  g <- tasks_legacy_rpc(direct[[again]], s, "tasks/get", list(taskId = legacy_task))
  expect_identical(g$result$status, "completed")
  # RULES V3.6: asked about in the other era, it is refused.
  g <- tasks_modern(direct[[again]], "tasks/get", legacy_task, list(taskId = legacy_task))
  expect_match(rpc_answer(g)$error$message, "ask about it in that protocol version")
  err <- paste(restarted$stderr, restarted$process$read_error())
  expect_false(grepl("not a task", err), info = err)

  # The task's replica is down: nginx sends its requests to another, which
  # reads the task from the directory.
  nx$replicas[[owner]]$process$kill()
  for (i in 1:6) {
    g <- get()
    expect_identical(g$status, "completed")
    expect_identical(g$result$content[[1]]$text, "fitted in 30 steps")
  }
  restarted$process$kill()
})
