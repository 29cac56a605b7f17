# End-to-end tests of calls that take time (RULES section 11, issue 17) over
# real pipes: `Rscript --vanilla slow.R` spawned with processx and driven
# line by line, as an MCP client would. Heartbeats run every 0.2 s
# (MCPLITE_PROGRESS_INTERVAL) to keep the tests short.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

slow_script <- function() {
  path <- test_path("..", "clients", "servers", "slow.R")
  skip_if_not(file.exists(path), paste("test server script not found:", path))
  normalizePath(path)
}

# A running server and what it has written so far (parsed messages).
slow_server <- function(interval = 0.2, version = "2025-11-25") {
  p <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", slow_script()),
    stdin = "|", stdout = "|", stderr = "|",
    env = c(
      "current",
      R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
      MCPLITE_PROGRESS_INTERVAL = as.character(interval)
    )
  )
  s <- new.env()
  s$p <- p
  s$lines <- character()
  withr::defer(if (p$is_alive()) p$kill(), envir = parent.frame())
  if (!is.null(version)) {
    send(s, sprintf(
      '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}',
      version
    ), '{"jsonrpc":"2.0","method":"notifications/initialized"}')
    expect_true(read_until(s, function(m) answered(m, "init")))
  }
  s
}

send <- function(s, ...) s$p$write_input(paste0(c(...), "\n", collapse = ""))

msgs <- function(s) lapply(s$lines, jsonlite::fromJSON, simplifyVector = FALSE)

# Read until `done(messages)` holds; FALSE when the time runs out.
read_until <- function(s, done, timeout = 60) {
  deadline <- Sys.time() + timeout
  repeat {
    if (done(msgs(s))) return(TRUE)
    if (Sys.time() > deadline || !s$p$is_alive()) {
      s$lines <- c(s$lines, s$p$read_output_lines())
      return(done(msgs(s)))
    }
    s$p$poll_io(100)
    s$lines <- c(s$lines, s$p$read_output_lines())
  }
}

# Ids compare as JSON values (jsonlite reads 2 as an integer).
same_id <- function(a, b) identical(a, b) || (is.numeric(a) && is.numeric(b) && length(a) == 1L && a == b)
is_response <- function(m, id) !is.null(m$id) && same_id(m$id, id) && is.null(m$method)
answered <- function(ms, id) any(vapply(ms, is_response, TRUE, id = id))
response <- function(s, id) Filter(function(m) is_response(m, id), msgs(s))
progress_of <- function(ms, token) {
  Filter(function(m) identical(m$method, "notifications/progress") && identical(m$params$progressToken, token), ms)
}
position <- function(ms, id) which(vapply(ms, is_response, TRUE, id = id))

# Close stdin and wait for a clean exit (RULES S5: EOF ends serving, status 0).
finish <- function(s) {
  close(s$p$get_input_connection())
  s$p$wait(60000)
  s$lines <- c(s$lines, s$p$read_all_output_lines())
  expect_identical(s$p$get_exit_status(), 0L)
  invisible(msgs(s))
}

cancel_line <- function(id) {
  sprintf('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"test"}}', id)
}

text_of <- function(m) m$result$content[[1]]$text

marker_dir <- function() {
  d <- withr::local_tempdir(.local_envir = parent.frame())
  normalizePath(d)
}

markers <- function(dir) sort(list.files(dir))

dir_args <- function(dir, ...) {
  extra <- list(...)
  more <- if (length(extra)) paste0(",", paste0('"', names(extra), '":', unlist(extra), collapse = ",")) else ""
  sprintf('{"dir":%s%s}', jsonlite::toJSON(dir, auto_unbox = TRUE), more)
}

# Call tool `name` (one of slow.R's marker tools) as request 2 and wait until
# it has started running (its "started" marker file).
start_marked <- function(s, name, dir, seconds) {
  send(s, call_line(2, name, dir_args(dir, seconds = seconds)))
  expect_true(read_until(s, function(ms) file.exists(file.path(dir, "started")), timeout = 30))
}

test_that("C1.1-C1.3: heartbeats while a tool runs, only with a token, none after the response", {
  s <- slow_server()
  send(s, call_line(2, "wait", '{"seconds":1.5}', token = '"beat"'))
  expect_true(read_until(s, function(ms) answered(ms, 2)))
  ms <- msgs(s)
  beats <- progress_of(ms, "beat")
  expect_gte(length(beats), 2L)
  # a heartbeat sets no scale: 0, then each a hair above the last
  values <- vapply(beats, function(m) m$params$progress, 1)
  expect_identical(values[[1]], 0)
  expect_true(all(diff(values) > 0))
  expect_true(all(values < 1e-6))
  for (b in beats) {
    expect_identical(names(b), c("jsonrpc", "method", "params"))
    expect_null(b$params$total)
    expect_match(b$params$message, "^still running after [0-9]+ s$")
  }
  expect_identical(text_of(response(s, 2)[[1]]), "waited")
  # no notification follows the response
  expect_true(all(vapply(beats, function(b) max(which(vapply(ms, identical, TRUE, b))), 1) < position(ms, 2)))

  # the same call without a token (and one with an integer token) in one stream
  send(s, call_line(3, "wait", '{"seconds":1}'), call_line(4, "wait", '{"seconds":1}', token = "7"))
  expect_true(read_until(s, function(ms) answered(ms, 4)))
  Sys.sleep(0.6)
  ms <- finish(s)
  between <- ms[seq(position(ms, 2) + 1L, position(ms, 3))]
  expect_false(any(vapply(between, function(m) identical(m$method, "notifications/progress"), TRUE)))
  sevens <- progress_of(ms, 7L)
  expect_gte(length(sevens), 2L)
  expect_true(all(vapply(sevens, function(b) max(which(vapply(ms, identical, TRUE, b))), 1) < position(ms, 4)))
  expect_identical(length(ms), position(ms, 4)) # nothing after the last response, up to EOF
  expect_match(s$lines[vapply(ms, function(m) identical(m$params$progressToken, 7L), TRUE)][1],
    '"progressToken":7,', fixed = TRUE)
})

test_that("C3.1: protocol 2024-11-05 heartbeats carry no message; the modern protocol gets them too", {
  s <- slow_server(version = "2024-11-05")
  send(s, call_line(2, "wait", '{"seconds":1}', token = '"old"'))
  expect_true(read_until(s, function(ms) answered(ms, 2)))
  old <- progress_of(msgs(s), "old")
  expect_gte(length(old), 1L)
  expect_true(all(vapply(old, function(m) identical(names(m$params), c("progressToken", "progress")), TRUE)))
  finish(s)

  s <- slow_server(version = NULL)
  send(s, paste0(
    '{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"wait","arguments":{"seconds":1},',
    '"_meta":{"progressToken":"new","io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{}}}}'
  ))
  expect_true(read_until(s, function(ms) answered(ms, "m")))
  ms <- finish(s)
  new <- progress_of(ms, "new")
  expect_gte(length(new), 1L)
  expect_match(new[[1]]$params$message, "still running")
  expect_identical(text_of(response(s, "m")[[1]]), "waited")
})

test_that("C2.1/C2.3: mcp_progress() values arrive in order, increasing, with total and message", {
  s <- slow_server(interval = 5)
  send(s, call_line(2, "count", '{"n":4,"pause":0.5}', token = '"c"'))
  expect_true(read_until(s, function(ms) answered(ms, 2)))
  ms <- finish(s)
  got <- progress_of(ms, "c")
  values <- vapply(got, function(m) m$params$progress, 1)
  expect_identical(values, c(1, 2, 3, 4))
  expect_identical(vapply(got, function(m) m$params$total, 1), rep(4, 4))
  expect_identical(vapply(got, function(m) m$params$message, ""), paste("step", 1:4, "of 4"))
  expect_identical(as.integer(text_of(response(s, 2)[[1]])), 4L)

  # with heartbeats filling the pauses, all values still increase and the
  # tool's values are all there in order
  s <- slow_server(interval = 0.2)
  send(s, call_line(3, "count", '{"n":3,"pause":0.6}', token = '"d"'))
  expect_true(read_until(s, function(ms) answered(ms, 3)))
  ms <- finish(s)
  values <- vapply(progress_of(ms, "d"), function(m) m$params$progress, 1)
  expect_true(all(diff(values) > 0))
  expect_true(all(1:3 %in% values))
})

test_that("C2.2/C2.4: 100,000 mcp_progress() calls are coalesced into a few notifications, the last one sent", {
  s <- slow_server()
  send(s, call_line(2, "hammer", '{"n":100000}', token = '"h"'), call_line(3, "hammer", '{"n":1000}'))
  expect_true(read_until(s, function(ms) answered(ms, 3)))
  ms <- finish(s)
  expect_identical(text_of(response(s, 2)[[1]]), "100000 reports, listening: TRUE")
  expect_identical(text_of(response(s, 3)[[1]]), "1000 reports, listening: FALSE")
  got <- progress_of(ms, "h")
  expect_lt(length(got), 1000L)
  values <- vapply(got, function(m) m$params$progress, 1)
  expect_true(all(diff(values) > 0))
  expect_identical(values[[length(values)]], 100000)
})

test_that("C2.1: a value that does not increase is a tool error the client sees", {
  s <- slow_server()
  send(s, call_line(2, "backwards", token = '"b"'), call_line(3, "backwards", "{}"), call_line(4, "echo", '{"text":"ok"}'))
  expect_true(read_until(s, function(ms) answered(ms, 4)))
  finish(s)
  r <- response(s, 2)[[1]]$result
  expect_true(r$isError)
  expect_match(text_of(list(result = r)), "`progress` must increase: 1 is not above the previous value, 2.", fixed = TRUE)
  expect_identical(text_of(response(s, 3)[[1]]), "unreachable")
  expect_identical(text_of(response(s, 4)[[1]]), "ok")
})

test_that("C4.1: cancelling a running tool runs on.exit and tryCatch(interrupt=), sends no response", {
  for (catch in c("true", "false")) {
    dir <- marker_dir()
    s <- slow_server()
    send(s, call_line(2, "guarded", dir_args(dir, seconds = 2, catch = catch), token = '"g"'))
    # the tool's own report says it started
    expect_true(read_until(s, function(ms) length(progress_of(ms, "g")) > 0L))
    started <- Sys.time()
    send(s, cancel_line(2), call_line(3, "echo", '{"text":"next"}'))
    expect_true(read_until(s, function(ms) answered(ms, 3)))
    expect_identical(text_of(response(s, 3)[[1]]), "next")
    # wait past the time the tool would have finished: its side effect never appears
    Sys.sleep(max(0, 2.5 - as.numeric(Sys.time() - started, units = "secs")))
    send(s, call_line(4, "echo", '{"text":"later"}'))
    expect_true(read_until(s, function(ms) answered(ms, 4)))
    ms <- finish(s)
    expect_length(response(s, 2), 0L)
    expect_identical(markers(dir), if (catch == "true") c("interrupted", "on_exit", "started") else c("on_exit", "started"))
    # no progress after the cancellation was answered by silence
    expect_true(all(vapply(progress_of(ms, "g"), function(b) max(which(vapply(ms, identical, TRUE, b))), 1) < position(ms, 3)))
  }
})

test_that("C4.1: a legacy ping is answered while a tool runs; other requests keep their order", {
  dir <- marker_dir()
  s <- slow_server()
  start_marked(s, "guarded", dir, seconds = 3)
  send(s, '{"jsonrpc":"2.0","id":"p","method":"ping"}', call_line(3, "echo", '{"text":"after"}'))
  expect_true(read_until(s, function(ms) answered(ms, "p")))
  expect_false(answered(msgs(s), 2))
  expect_true(read_until(s, function(ms) answered(ms, 3)))
  ms <- finish(s)
  expect_true(position(ms, "p") < position(ms, 2))
  expect_true(position(ms, 2) < position(ms, 3))
  expect_identical(text_of(response(s, 2)[[1]]), "finished")
  expect_true(file.exists(file.path(dir, "side_effect")))
})

test_that("C4: a cancelled queued call is dropped unanswered; cancels after completion or for unknown ids are ignored", {
  dir <- marker_dir()
  s <- slow_server()
  start_marked(s, "guarded", dir, seconds = 1.5)
  send(s,
    call_line(3, "echo", '{"text":"queued"}'),
    cancel_line(3),
    cancel_line(99), cancel_line('"never-sent"'), cancel_line("null"), cancel_line("{}"),
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled"}',
    call_line(4, "echo", '{"text":"four"}')
  )
  expect_true(read_until(s, function(ms) answered(ms, 4)))
  expect_length(response(s, 3), 0L)
  expect_identical(text_of(response(s, 2)[[1]]), "finished")
  expect_identical(text_of(response(s, 4)[[1]]), "four")
  # cancel after completion: ignored, and no stale interrupt hits the next call
  send(s, cancel_line(4), cancel_line(2), call_line(5, "wait", '{"seconds":0.5}'))
  expect_true(read_until(s, function(ms) answered(ms, 5)))
  finish(s)
  expect_identical(text_of(response(s, 5)[[1]]), "waited")
  expect_identical(markers(dir), c("on_exit", "side_effect", "started"))
})

test_that("C4: 1,000 cancels in a burst: the running call ends unanswered, serving continues", {
  dir <- marker_dir()
  s <- slow_server()
  start_marked(s, "guarded", dir, seconds = 20)
  burst <- c(vapply(1000:1499, cancel_line, ""), cancel_line(2), vapply(rep(2, 499), cancel_line, ""))
  send(s, burst, call_line(3, "echo", '{"text":"survived"}'))
  expect_true(read_until(s, function(ms) answered(ms, 3)))
  send(s, call_line(4, "wait", '{"seconds":0.3}'))
  expect_true(read_until(s, function(ms) answered(ms, 4)))
  ms <- finish(s)
  expect_length(ms, 3L) # init, 3 and 4
  expect_identical(text_of(response(s, 3)[[1]]), "survived")
  expect_identical(text_of(response(s, 4)[[1]]), "waited")
  expect_identical(markers(dir), c("interrupted", "on_exit", "started"))
})

test_that("C4: a tool under suspendInterrupts() ends with at most one answer, then serving continues", {
  dir <- marker_dir()
  s <- slow_server()
  start_marked(s, "stubborn", dir, seconds = 1.5)
  send(s, cancel_line(2), call_line(3, "echo", '{"text":"three"}'), call_line(4, "wait", '{"seconds":0.5}'))
  expect_true(read_until(s, function(ms) answered(ms, 4)))
  ms <- finish(s)
  expect_lte(length(response(s, 2)), 1L)
  expect_identical(text_of(response(s, 3)[[1]]), "three")
  expect_identical(text_of(response(s, 4)[[1]]), "waited")
  expect_identical(sum(vapply(ms, function(m) is.null(m$method), TRUE)), length(ms))
})

test_that("C1.1: progress tokens of every JSON type: strings and integers are echoed, others ignored", {
  s <- slow_server()
  tokens <- c('"s"', '""', "42", "-3", "0", "null", "true", "false", "1.5", "1e3", "{}", "[]", '{"a":1}', "[1]")
  ids <- seq_along(tokens) + 10L
  for (i in seq_along(tokens)) send(s, call_line(ids[i], "wait", '{"seconds":0.7}', token = tokens[i]))
  expect_true(read_until(s, function(ms) answered(ms, max(ids))))
  finish(s)
  notes <- s$lines[grepl('"notifications/progress"', s$lines, fixed = TRUE)]
  seen <- unique(sub('^.*"progressToken":(.*?),"progress".*$', "\\1", notes, perl = TRUE))
  expect_setequal(seen, c('"s"', '""', "42", "-3", "0"))
  for (id in ids) expect_identical(text_of(response(s, id)[[1]]), "waited")
})
