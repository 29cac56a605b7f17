# RULES C6: progress and cancellation over Streamable HTTP with a real R
# server (`Rscript` started with processx, progress_interval 0.5 s) driven by
# the curl command line: SSE streams with heartbeats and mcp_progress()
# reports before the response, JSON without a token, a closed stream that
# interrupts the tool, and legacy notifications/cancelled scoped to the
# session.

skip_on_cran()

progress_server <- function(envir = parent.frame()) {
  markers <- withr::local_tempdir(.local_envir = envir)
  srv <- start_http_server(c(
    "library(mcplite)",
    sprintf("markers <- '%s'", markers),
    "slow <- tool(function(seconds, tag) {",
    "  writeLines('start', file.path(markers, paste0(tag, '.start')))",
    "  on.exit(writeLines('exit', file.path(markers, paste0(tag, '.exit'))))",
    "  Sys.sleep(seconds)",
    "  writeLines('done', file.path(markers, paste0(tag, '.done')))",
    "  'slept'",
    "}, 'Sleep.', name = 'slow', arguments = list(seconds = type_number(), tag = type_string()))",
    "folds <- tool(function() {",
    "  for (i in 1:3) { Sys.sleep(0.4); mcp_progress(i, total = 3, message = paste('fold', i)) }",
    "  Sys.sleep(0.4)",
    "  'folded'",
    "}, 'Folds.', name = 'folds')",
    "stubborn <- tool(function(tag) {",
    "  writeLines('start', file.path(markers, paste0(tag, '.start')))",
    "  suspendInterrupts(Sys.sleep(1.5))",
    "  writeLines('done', file.path(markers, paste0(tag, '.done')))",
    "  'ignored the interrupt'",
    "}, 'Ignores interrupts.', name = 'stubborn', arguments = list(tag = type_string()))",
    "mcp_server(list(slow, folds, stubborn), transport = 'http', port = 0L, progress_interval = 0.5)",
    "cat('after-server\\n', file = stderr())"
  ), envir = envir)
  srv$markers <- markers
  srv
}

call_body <- function(id, name, args, meta) {
  params <- list(name = name, arguments = args)
  if (!is.null(meta)) params[["_meta"]] <- meta
  jsonlite::toJSON(list(jsonrpc = "2.0", id = id, method = "tools/call", params = params),
    auto_unbox = TRUE, digits = NA)
}

# curl arguments for one POST; the response (headers and body) goes to `out`.
curl_args <- function(url, body, headers, out) {
  h <- c("Content-Type: application/json", "Accept: application/json, text/event-stream", headers)
  c("-s", "-N", "-i", "--max-time", "60", "-o", out, rbind("-H", h), "--data-binary", body, url)
}

modern_headers <- function(name) {
  c("MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", paste0("Mcp-Name: ", name))
}

post_wait <- function(url, body, headers) {
  out <- tempfile()
  processx::run("curl", curl_args(url, body, headers, out), error_on_status = FALSE)
  parse_http(readLines(out, warn = FALSE))
}

post_bg <- function(url, body, headers) {
  out <- tempfile()
  list(process = processx::process$new("curl", curl_args(url, body, headers, out)), out = out)
}

parse_http <- function(lines) {
  lines <- sub("\r$", "", lines)
  blank <- which(lines == "")[1]
  head <- lines[seq_len(blank - 1L)]
  body <- lines[-seq_len(blank)]
  header <- function(name) {
    hit <- grep(paste0("^", name, ":"), head, ignore.case = TRUE, value = TRUE)
    if (length(hit)) sub("^[^:]*: *", "", hit[1]) else NA_character_
  }
  list(status = as.integer(sub("^HTTP/[0-9.]+ ([0-9]+).*", "\\1", head[1])), header = header, body = body)
}

# The events of an SSE body: each `event: message` then one `data:` line.
sse_events <- function(body) {
  body <- body[nzchar(body)]
  expect_true(all(body[c(TRUE, FALSE)] == "event: message"))
  data <- body[c(FALSE, TRUE)]
  expect_true(all(startsWith(data, "data: ")))
  lapply(sub("^data: ", "", data), jsonlite::fromJSON, simplifyVector = FALSE)
}

legacy_session <- function(url) {
  init <- '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  r <- post_wait(url, init, character())
  expect_identical(r$status, 200L)
  r$header("mcp-session-id")
}

test_that("C6: a call with a progress token streams heartbeats and mcp_progress() reports, then the response", {
  srv <- progress_server()
  r <- post_wait(srv$url, call_body(1L, "folds", structure(list(), names = character()), modern_meta("tok")),
    modern_headers("folds"))
  expect_identical(r$status, 200L)
  expect_identical(r$header("content-type"), "text/event-stream")
  expect_identical(r$header("cache-control"), "no-cache")
  expect_identical(r$header("x-accel-buffering"), "no")
  events <- sse_events(r$body)
  last <- events[[length(events)]]
  expect_identical(last$id, 1L)
  expect_identical(last$result$content[[1]]$text, "folded")
  progress <- events[-length(events)]
  expect_true(all(vapply(progress, function(e) identical(e$method, "notifications/progress"), TRUE)))
  expect_true(all(vapply(progress, function(e) identical(e$params$progressToken, "tok"), TRUE)))
  values <- vapply(progress, function(e) e$params$progress, 1)
  expect_false(is.unsorted(values, strictly = TRUE))
  messages <- vapply(progress, function(e) e$params$message %||% "", "")
  expect_true(all(grepl("^(fold [0-9]|still running after [0-9]+ s)", messages)))
  expect_identical(grep("^fold [0-9]$", messages, value = TRUE), c("fold 1", "fold 2", "fold 3"))
  reports <- progress[grepl("^fold [0-9]$", messages)]
  expect_identical(vapply(reports, function(e) e$params$total, 1), c(3, 3, 3))

  # Legacy sessions stream too (integer token); no token means JSON.
  sid <- legacy_session(srv$url)
  h <- c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25")
  r <- post_wait(srv$url, call_body(2L, "folds", structure(list(), names = character()), list(progressToken = 9L)), h)
  expect_identical(r$header("content-type"), "text/event-stream")
  events <- sse_events(r$body)
  expect_identical(events[[1]]$params$progressToken, 9L)
  expect_identical(events[[length(events)]]$result$content[[1]]$text, "folded")
  r <- post_wait(srv$url, call_body(3L, "folds", structure(list(), names = character()), NULL), h)
  expect_identical(r$header("content-type"), "application/json")
  expect_identical(jsonlite::fromJSON(r$body)$result$content$text, "folded")
})

test_that("C6: closing the stream of a running call interrupts the tool; the server keeps serving", {
  srv <- progress_server()
  bg <- post_bg(srv$url, call_body(1L, "slow", list(seconds = 5, tag = "gone"), modern_meta(1L)), modern_headers("slow"))
  # The stream is open and the tool is running: a heartbeat arrived.
  wait_until(function() file.exists(bg$out) && any(grepl("notifications/progress", readLines(bg$out, warn = FALSE))),
    "a heartbeat")
  expect_match(paste(readLines(bg$out, warn = FALSE), collapse = "\n"), "still running after [0-9]+ s")
  bg$process$kill()
  wait_until(function() file.exists(file.path(srv$markers, "gone.exit")), "on.exit() of the interrupted tool")
  r <- post_wait(srv$url, call_body(2L, "slow", list(seconds = 0, tag = "next"), modern_meta()), modern_headers("slow"))
  expect_identical(jsonlite::fromJSON(r$body)$result$content$text, "slept")
  expect_false(file.exists(file.path(srv$markers, "gone.done")))
  # The interrupt of the cancellation did not stop the server: SIGTERM does.
  expect_true(srv$process$is_alive())
  srv$process$signal(tools::SIGTERM)
  srv$process$wait(20000)
  expect_identical(srv$process$get_exit_status(), 0L)
  expect_match(srv$process$read_all_error(), "after-server")
})

test_that("C6: a legacy notifications/cancelled cancels a call of its own session only", {
  srv <- progress_server()
  mine <- legacy_session(srv$url)
  other <- legacy_session(srv$url)
  h <- function(sid) c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25")
  cancel <- function(sid, id) {
    post_wait(srv$url, sprintf('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}', id), h(sid))
  }
  # Another session's cancel for the same id is ignored: the call completes.
  started <- function(tag) function() file.exists(file.path(srv$markers, paste0(tag, ".start")))
  bg <- post_bg(srv$url, call_body(5L, "slow", list(seconds = 1.5, tag = "kept"), NULL), h(mine))
  wait_until(started("kept"), "the tool to start")
  expect_identical(cancel(other, 5L)$status, 202L)
  bg$process$wait(30000)
  r <- parse_http(readLines(bg$out, warn = FALSE))
  expect_identical(jsonlite::fromJSON(r$body)$result$content$text, "slept")
  expect_true(file.exists(file.path(srv$markers, "kept.done")))

  # The session's own cancel interrupts the tool; the call gets no response.
  bg <- post_bg(srv$url, call_body(6L, "slow", list(seconds = 5, tag = "stopped"), NULL), h(mine))
  wait_until(started("stopped"), "the tool to start")
  expect_identical(cancel(mine, 6L)$status, 202L)
  bg$process$wait(30000)
  r <- parse_http(readLines(bg$out, warn = FALSE))
  expect_identical(r$status, 202L)
  expect_identical(paste(r$body, collapse = ""), "")
  expect_true(file.exists(file.path(srv$markers, "stopped.exit")))
  r <- post_wait(srv$url, call_body(7L, "slow", list(seconds = 0, tag = "after"), NULL), h(mine))
  expect_identical(jsonlite::fromJSON(r$body)$result$content$text, "slept")
  expect_false(file.exists(file.path(srv$markers, "stopped.done")))
})

test_that("C6: mcplite's own client gets the reports in order, and an interrupt cancels the call on the server", {
  srv <- progress_server()
  for (era in c("2026-07-28", "2025-11-25")) {
    conn <- mcp_connect(url = srv$url, protocol = era)
    seen <- character()
    res <- mcp_call(conn, "folds", progress = function(progress, total, message) seen <<- c(seen, message %||% ""))
    expect_identical(res$content[[1]]$text, "folded")
    expect_identical(grep("^fold", seen, value = TRUE), c("fold 1", "fold 2", "fold 3"), info = era)
    if (era == "2026-07-28") {
      # Interrupting the call closes its stream: the server interrupts the tool.
      interrupt_when(file.path(srv$markers, "r-client.start"))
      got <- tryCatch(mcp_call(conn, "slow", list(seconds = 5, tag = "r-client")), interrupt = function(e) "interrupted")
      expect_identical(got, "interrupted")
      wait_until(function() file.exists(file.path(srv$markers, "r-client.exit")), "on.exit() of the interrupted tool")
      expect_identical(mcp_call(conn, "slow", list(seconds = 0, tag = "r-next"))$content[[1]]$text, "slept")
      expect_false(file.exists(file.path(srv$markers, "r-client.done")))
    }
    mcp_close(conn)
  }
})

test_that("C6/C4: a cancelled tool that suspends interrupts gets no answer, and the server keeps serving", {
  srv <- progress_server()
  sid <- legacy_session(srv$url)
  h <- c(paste0("Mcp-Session-Id: ", sid), "MCP-Protocol-Version: 2025-11-25")
  bg <- post_bg(srv$url, call_body(8L, "stubborn", list(tag = "stubborn"), NULL), h)
  wait_until(function() file.exists(file.path(srv$markers, "stubborn.start")), "the tool to start")
  cancel <- '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}'
  expect_identical(post_wait(srv$url, cancel, h)$status, 202L)
  bg$process$wait(30000)
  r <- parse_http(readLines(bg$out, warn = FALSE))
  # Exactly no answer for the cancelled call, whatever the tool did.
  expect_identical(r$status, 202L)
  expect_identical(paste(r$body, collapse = ""), "")
  # The interrupt left over does not stop the server or break the next call.
  r <- post_wait(srv$url, call_body(9L, "slow", list(seconds = 0.2, tag = "after-stubborn"), NULL), h)
  expect_identical(jsonlite::fromJSON(r$body)$result$content$text, "slept")
  expect_true(file.exists(file.path(srv$markers, "after-stubborn.done")))
  expect_true(srv$process$is_alive())
})
