# End-to-end tests of mcp_server() over real pipes (RULES sections 3, 4, 7):
# `Rscript --vanilla server.R` spawned with processx, as an MCP client would.
# The server script is shared with the Python and Node client tests.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")

e2e_server <- function(name = "everything.R") {
  path <- test_path("..", "clients", "servers", name)
  skip_if_not(file.exists(path), paste("test server script not found:", path))
  normalizePath(path)
}

rscript_bin <- function() file.path(R.home("bin"), "Rscript")

# The spawned R must find the same mcplite build as this session.
e2e_env <- function() {
  c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
}

lines_to_bytes <- function(lines) {
  if (is.raw(lines)) return(lines)
  charToRaw(paste0(paste(lines, collapse = "\n"), "\n"))
}

# Write `input` to the server's stdin in one go (then EOF) and collect everything.
run_server <- function(input, script = e2e_server(), timeout = 90) {
  f <- tempfile(fileext = ".jsonl")
  on.exit(unlink(f))
  writeBin(if (is.raw(input)) input else lines_to_bytes(input), f)
  res <- processx::run(
    rscript_bin(), c("--vanilla", script),
    stdin = f, error_on_status = FALSE, timeout = timeout, env = e2e_env()
  )
  out <- res$stdout
  list(
    status = res$status,
    stdout = out,
    lines = if (nzchar(out)) strsplit(sub("\n$", "", out), "\n", fixed = TRUE)[[1]] else character(),
    stderr = res$stderr
  )
}

parse_line <- function(line) jsonlite::fromJSON(line, simplifyVector = FALSE)

# Every stdout line must be one JSON-RPC response object, members in order.
expect_all_responses <- function(lines) {
  for (line in lines) {
    expect_true(jsonlite::validate(line), info = line)
    msg <- parse_line(line)
    expect_identical(names(msg)[1:2], c("jsonrpc", "id"), info = line)
    expect_true(names(msg)[3] %in% c("result", "error") && length(msg) == 3L, info = line)
    expect_identical(msg$jsonrpc, "2.0")
  }
}

init_line <- function(id, version) {
  sprintf(
    '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"e2e","version":"1.0"}}}',
    id, version
  )
}

pkg_version <- function() as.character(utils::packageVersion("mcplite"))

test_that("the full legacy lifecycle works on every legacy version, exit status 0 at EOF", {
  script <- e2e_server()
  for (v in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    res <- run_server(c(
      '{"jsonrpc":"2.0","id":0,"method":"tools/list"}',
      init_line(1, v),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":2,"method":"ping"}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
      call_line(4, "add", '{"x":1.5,"y":2.25}'),
      call_line(5, "fail", '{"message":"no luck"}'),
      call_line(6, "nope"),
      '{"jsonrpc":"2.0","id":7,"method":"resources/list"}',
      call_line(8, "stats", '{"values":[1,2,4]}')
    ), script)
    expect_identical(res$status, 0L, info = v)
    expect_length(res$lines, 9L)
    expect_all_responses(res$lines)
    expect_identical(
      res$lines[1],
      '{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"Invalid Request: server not initialized"}}'
    )
    expect_identical(res$lines[2], paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"', v,
      '","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcplite","version":"',
      pkg_version(), '"},"instructions":"Test server for mcplite client tests."}}'
    ))
    expect_identical(res$lines[3], '{"jsonrpc":"2.0","id":2,"result":{}}')
    tools <- parse_line(res$lines[4])$result$tools
    expect_identical(vapply(tools, `[[`, "", "name")[1:3], c("echo", "add", "fail"))
    if (v == "2024-11-05") {
      expect_identical(names(tools[[1]]), c("name", "description", "inputSchema"))
    } else {
      expect_identical(tools[[1]]$annotations$title, "Echo")
    }
    expect_identical(
      res$lines[5],
      '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"3.75"}],"isError":false}}'
    )
    expect_identical(
      res$lines[6],
      '{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"no luck"}],"isError":true}}'
    )
    expect_identical(
      res$lines[7],
      '{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}'
    )
    expect_identical(res$lines[8], '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}')
    stats <- parse_line(res$lines[9])$result
    expect_identical(stats$content[[1]]$text, '{"mean":2.3333,"sd":1.5275,"n":3}')
    expect_identical(is.null(stats$structuredContent), v == "2024-11-05")
  }
})

test_that("the modern protocol and legacy messages share one stream", {
  meta <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
  res <- run_server(c(
    sprintf('{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{%s}}', meta),
    sprintf('{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":3},%s}}', meta),
    '{"jsonrpc":"2.0","id":"c","method":"tools/list"}',
    init_line('"d"', "2025-06-18"),
    sprintf('{"jsonrpc":"2.0","id":"e","method":"ping","params":{%s}}', meta),
    '{"jsonrpc":"2.0","id":"f","method":"ping"}'
  ))
  expect_identical(res$status, 0L)
  expect_all_responses(res$lines)
  # RULES C5: the legacy ping may overtake the tool call queued ahead of it; the rest keep their
  # order.
  expect_true('{"jsonrpc":"2.0","id":"f","result":{}}' %in% res$lines)
  res$lines <- c(setdiff(res$lines, '{"jsonrpc":"2.0","id":"f","result":{}}'), '{"jsonrpc":"2.0","id":"f","result":{}}')
  server_meta <- paste0(
    '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"', pkg_version(), '"}}'
  )
  expect_identical(res$lines[1], paste0(
    '{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","supportedVersions":',
    '["2026-07-28","2025-11-25","2025-06-18","2024-11-05"],"capabilities":{"tools":{"listChanged":false},"logging":{}},',
    '"instructions":"Test server for mcplite client tests.","ttlMs":300000,"cacheScope":"public",',
    server_meta, "}}"
  ))
  expect_identical(res$lines[2], paste0(
    '{"jsonrpc":"2.0","id":"b","result":{"resultType":"complete","content":[{"type":"text","text":"5"}],',
    '"isError":false,', server_meta, "}}"
  ))
  expect_identical(
    res$lines[3],
    '{"jsonrpc":"2.0","id":"c","error":{"code":-32600,"message":"Invalid Request: server not initialized"}}'
  )
  expect_match(res$lines[4], '"protocolVersion":"2025-06-18"', fixed = TRUE)
  expect_identical(res$lines[5], '{"jsonrpc":"2.0","id":"e","error":{"code":-32601,"message":"Method not found"}}')
  expect_identical(res$lines[6], '{"jsonrpc":"2.0","id":"f","result":{}}')
})

test_that("an empty argument name is refused by the input schema, and serving continues", {
  res <- run_server(c(
    init_line(1, "2025-11-25"),
    call_line(2, "add", '{"":1,"y":2}'),
    call_line(3, "add", '{"x":1,"y":2}')
  ))
  expect_identical(res$status, 0L)
  expect_length(res$lines, 3L)
  expect_all_responses(res$lines)
  expect_identical(res$lines[2], paste0(
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":',
    '"Invalid arguments for tool `add`: missing required argument `x`; unexpected argument with an empty name ',
    '(the tool takes `x`, `y`). The tool was not run."}],',
    '"isError":true}}'
  ))
  expect_identical(
    res$lines[3],
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3"}],"isError":false}}'
  )
  expect_false(grepl("mcplite", res$stderr, fixed = TRUE))
})

test_that("stray tool output never reaches stdout", {
  res <- run_server(c(
    init_line(1, "2025-11-25"),
    call_line(2, "noisy"),
    call_line(3, "noisy"),
    call_line(4, "echo", '{"text":"after"}')
  ))
  expect_identical(res$status, 0L)
  expect_length(res$lines, 4L)
  expect_all_responses(res$lines)
  expect_identical(
    res$lines[2],
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"quiet"}],"isError":false}}'
  )
  expect_identical(parse_line(res$lines[4])$result$content[[1]]$text, "after")
  expect_false(grepl("stray", res$stdout, fixed = TRUE))
  for (marker in c(
    "stray-cat", "stray-print", "stray-message", "stray-writeLines",
    "stray-stdout-connection", "stray-system", "stray-printf", "stray-warning"
  )) {
    expect_match(res$stderr, marker, fixed = TRUE)
  }
})

test_that("a tool reading stdin (readline(), readLines()) cannot eat requests", {
  res <- run_server(c(
    init_line(1, "2025-11-25"),
    call_line(2, "reader"),
    call_line(3, "echo", '{"text":"three"}'),
    '{"jsonrpc":"2.0","id":4,"method":"ping"}',
    call_line(5, "reader"),
    call_line(6, "echo", '{"text":"six"}')
  ))
  expect_identical(res$status, 0L)
  expect_all_responses(res$lines)
  ids <- vapply(res$lines, function(l) parse_line(l)$id, numeric(1), USE.NAMES = FALSE)
  # RULES C5: the ping may overtake the calls queued ahead of it; the rest keep their order.
  expect_identical(ids[ids != 4], c(1, 2, 3, 5, 6))
  expect_identical(sort(ids), c(1, 2, 3, 4, 5, 6))
  lines <- res$lines[ids != 4]
  expect_identical(parse_line(lines[2])$result$content[[1]]$text, "readline=[] stdin=0 file=0")
  expect_identical(parse_line(lines[3])$result$content[[1]]$text, "three")
  expect_identical(parse_line(lines[5])$result$content[[1]]$text, "six")
})

test_that("malformed lines get JSON-RPC errors and serving continues", {
  input <- c(
    charToRaw("this is not json\n"),
    charToRaw('{"jsonrpc":"2.0","id":1,"method":"ping"\n'),
    as.raw(c(0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d, 0x0a)), # invalid UTF-8
    charToRaw('{"jsonrpc":"2.0","id":2,"method":"ping"} x\n'),
    charToRaw('[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n'),
    charToRaw('"just a string"\n'),
    charToRaw('{"jsonrpc":"2.0","id":73}\n'),
    charToRaw("\n   \n"),
    charToRaw('{"jsonrpc":"2.0","id":4,"method":"ping"}\r\n'),
    charToRaw('{"jsonrpc":"2.0","id":5,"method":"ping"}') # final line without LF
  )
  res <- run_server(input)
  expect_identical(res$status, 0L)
  expect_all_responses(res$lines)
  parse_error <- '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
  expect_identical(res$lines, c(
    rep(parse_error, 4),
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}',
    '{"jsonrpc":"2.0","id":73,"error":{"code":-32600,"message":"Invalid Request"}}',
    '{"jsonrpc":"2.0","id":4,"result":{}}',
    '{"jsonrpc":"2.0","id":5,"result":{}}'
  ))
})

test_that("1,000 pipelined requests followed by immediate EOF are all answered in order (pings may overtake)", {
  n <- 1000L
  calls <- vapply(seq_len(n), function(i) {
    if (i %% 10L == 0L) {
      sprintf('{"jsonrpc":"2.0","id":%d,"method":"ping"}', i + 1L)
    } else {
      call_line(i + 1L, "add", sprintf('{"x":%d,"y":0.5}', i))
    }
  }, "")
  res <- run_server(c(init_line(1, "2025-06-18"), calls, call_line(n + 2L, "sleepy", '{"seconds":0.3}')))
  expect_identical(res$status, 0L)
  expect_length(res$lines, n + 2L)
  msgs <- lapply(res$lines, parse_line)
  ids <- vapply(msgs, function(m) as.integer(m$id), 1L)
  # RULES C5: a ping read with calls queued ahead of it may be answered before them; every other
  # answer comes in request order.
  is_ping <- ids %% 10L == 1L & ids > 1L & ids <= n + 1L
  expect_identical(ids[!is_ping], setdiff(seq_len(n + 2L), ids[is_ping]))
  expect_identical(sort(ids), seq_len(n + 2L))
  msgs <- msgs[order(ids)]
  texts <- vapply(msgs[2:(n + 1L)], function(m) {
    if (length(m$result$content)) m$result$content[[1]]$text else "pong"
  }, "")
  expected <- ifelse(seq_len(n) %% 10L == 0L, "pong", format(seq_len(n) + 0.5, trim = TRUE))
  expect_identical(texts, expected)
  # the call still running at EOF is answered before exit
  expect_identical(msgs[[n + 2L]]$result$content[[1]]$text, "woke up")
})

test_that("empty input: nothing on stdout, exit status 0", {
  res <- run_server(raw(0))
  expect_identical(res$status, 0L)
  expect_identical(res$stdout, "")
})

test_that("a client closing stdout (broken pipe) leaves no hung process and exits cleanly", {
  p <- processx::process$new(
    rscript_bin(), c("--vanilla", e2e_server()),
    stdin = "|", stdout = "|", stderr = "|", env = e2e_env()
  )
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  close(p$get_output_connection())
  input <- paste0(
    init_line(1, "2025-11-25"), "\n",
    strrep(paste0(call_line(2, "echo", sprintf('{"text":"%s"}', strrep("x", 1000))), "\n"), 200)
  )
  try(p$write_input(input), silent = TRUE)
  p$wait(30000)
  expect_false(p$is_alive())
  expect_identical(p$get_exit_status(), 0L)
  err <- p$read_all_error()
  expect_match(err, "broken pipe", ignore.case = TRUE)
})

read_lines_until <- function(p, n, timeout = 30) {
  out <- character()
  deadline <- Sys.time() + timeout
  while (length(out) < n && Sys.time() < deadline) {
    p$poll_io(200)
    out <- c(out, p$read_output_lines())
  }
  out
}

test_that("a client that closes stderr does not break serving when tools write to it", {
  p <- processx::process$new(
    rscript_bin(), c("--vanilla", e2e_server()),
    stdin = "|", stdout = "|", stderr = "|", env = e2e_env()
  )
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  close(p$get_error_connection())
  p$write_input(paste0(
    init_line(1, "2025-11-25"), "\n",
    call_line(2, "noisy"), "\n",
    call_line(3, "fail", '{"message":"still here"}'), "\n",
    '{"jsonrpc":"2.0","id":4,"method":"ping"}', "\n"
  ))
  out <- read_lines_until(p, 4L)
  expect_length(out, 4L)
  expect_all_responses(out)
  # RULES C5: the ping may overtake the calls; the calls keep their order.
  out <- out[!grepl('"id":4,', out, fixed = TRUE)]
  expect_identical(
    out[2],
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"quiet"}],"isError":false}}'
  )
  expect_identical(
    out[3],
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"still here"}],"isError":true}}'
  )
  close(p$get_input_connection())
  p$wait(30000)
  expect_false(p$is_alive())
  expect_identical(p$get_exit_status(), 0L)
})


test_that("SIGINT during a long tool call gives the interrupted tool error and the server continues", {
  skip_on_os("windows")
  p <- processx::process$new(
    rscript_bin(), c("--vanilla", e2e_server()),
    stdin = "|", stdout = "|", stderr = "|", env = e2e_env()
  )
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  p$write_input(paste0(init_line(1, "2025-11-25"), "\n", call_line(2, "sleepy", '{"seconds":60}'), "\n"))
  err <- ""
  deadline <- Sys.time() + 30
  while (!grepl("sleepy: started", err, fixed = TRUE) && Sys.time() < deadline) {
    p$poll_io(200)
    err <- paste0(err, p$read_error())
  }
  expect_match(err, "sleepy: started", fixed = TRUE)
  started <- Sys.time()
  p$interrupt()
  out <- read_lines_until(p, 2L)
  expect_length(out, 2L)
  expect_lt(as.numeric(difftime(Sys.time(), started, units = "secs")), 30)
  res <- parse_line(out[2])
  expect_identical(res$id, 2L)
  expect_true(res$result$isError)
  expect_match(res$result$content[[1]]$text, "interrupted")

  # an interrupt while idle is ignored too
  p$interrupt()
  Sys.sleep(0.3)
  p$write_input(paste0(call_line(3, "add", '{"x":1,"y":1}'), "\n"))
  out <- c(out, read_lines_until(p, 1L))
  expect_identical(
    out[3],
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}'
  )
  close(p$get_input_connection())
  p$wait(30000)
  expect_false(p$is_alive())
  expect_identical(p$get_exit_status(), 0L)
  expect_all_responses(out)
})

test_that("argument errors in the script exit non-zero with nothing on stdout", {
  scripts <- list(
    path = 'mcplite::mcp_server("no-such-tools.R")',
    nothing = "mcplite::mcp_server(session_tools = FALSE)",
    instructions = paste0(
      'add <- mcplite::tool(function(x) x, "Identity.", name = "id", ',
      'arguments = list(x = mcplite::type_number()))\n',
      "mcplite::mcp_server(add, instructions = 1)"
    ),
    duplicates = paste0(
      'add <- mcplite::tool(function(x) x, "Identity.", name = "id", ',
      'arguments = list(x = mcplite::type_number()))\n',
      "mcplite::mcp_server(list(add, add))"
    )
  )
  for (nm in names(scripts)) {
    f <- tempfile(fileext = ".R")
    writeLines(scripts[[nm]], f)
    res <- run_server(c(init_line(1, "2025-11-25"), '{"jsonrpc":"2.0","id":2,"method":"ping"}'), script = f)
    unlink(f)
    expect_false(identical(res$status, 0L), info = nm)
    expect_identical(res$stdout, "", info = nm)
    expect_match(res$stderr, "`(tools|instructions)`", info = nm)
  }
})

test_that("C1, C4, C5: heartbeats, a ping answered and a cancellation interrupting R while a tool runs", {
  marker <- tempfile("cancel-")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(c(script, paste0(marker, c(".exit-30", ".after-30", ".exit-0", ".after-0")))), add = TRUE)
  writeLines(c(
    sprintf("marker <- %s", deparse(marker)),
    "slow <- mcplite::tool(function(seconds) {",
    "  on.exit(writeLines('on.exit ran', paste0(marker, '.exit-', seconds)))",
    "  Sys.sleep(seconds)",
    "  writeLines('finished', paste0(marker, '.after-', seconds))",
    "  'slept'",
    "}, name = 'slow', description = 'Sleeps.', arguments = list(seconds = mcplite::type_number('Seconds.')))",
    "mcplite::mcp_server(slow, progress_interval = 0.2)"
  ), script)
  p <- processx::process$new(
    rscript_bin(), c("--vanilla", script),
    stdin = "|", stdout = "|", stderr = "|", env = e2e_env()
  )
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  seen <- list()
  # Lines up to the answer with `id` (or what arrived within the timeout).
  read_until_id <- function(id, timeout = 30) {
    deadline <- Sys.time() + timeout
    repeat {
      p$poll_io(200)
      for (l in p$read_output_lines()) seen[[length(seen) + 1L]] <<- parse_line(l)
      if (any(vapply(seen, function(m) identical(m$id, id), TRUE)) || Sys.time() > deadline) break
    }
  }
  p$write_input(paste0(init_line(1, "2025-11-25"), "\n"))
  read_until_id(1L)
  p$write_input(paste0(
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":30},',
    '"_meta":{"progressToken":"t"}}}\n'
  ))
  # Heartbeats while R sleeps (the first after 0.2 s).
  deadline <- Sys.time() + 30
  while (!any(vapply(seen, function(m) identical(m$method, "notifications/progress"), TRUE)) &&
         Sys.time() < deadline) {
    p$poll_io(200)
    for (l in p$read_output_lines()) seen[[length(seen) + 1L]] <- parse_line(l)
  }
  beats <- Filter(function(m) identical(m$method, "notifications/progress"), seen)
  expect_gte(length(beats), 1L)
  expect_identical(beats[[1]]$params$progressToken, "t")
  # RULES C5: a legacy ping is answered while the tool still sleeps.
  p$write_input('{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
  read_until_id(3L)
  pong <- Filter(function(m) identical(m$id, 3L), seen)
  expect_length(pong, 1L)
  expect_length(pong[[1]]$result, 0L)
  expect_false(file.exists(paste0(marker, ".after-30")))
  # RULES C4.1: the cancellation interrupts R (on.exit runs, the rest of the tool does not), the
  # call is never answered, and the next call is.
  p$write_input(paste0(
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0}}}\n'
  ))
  read_until_id(4L)
  answer <- Filter(function(m) identical(m$id, 4L), seen)
  expect_length(answer, 1L)
  expect_identical(answer[[1]]$result$content[[1]]$text, "slept")
  expect_true(file.exists(paste0(marker, ".exit-30")))
  expect_false(file.exists(paste0(marker, ".after-30")))
  close(p$get_input_connection())
  p$wait(30000)
  for (l in p$read_all_output_lines()) seen[[length(seen) + 1L]] <- parse_line(l)
  expect_identical(p$get_exit_status(), 0L)
  expect_false(any(vapply(seen, function(m) identical(m$id, 2L), TRUE)))
  # Every notification came before the call's end (none after the answer to 4).
  last_beat <- max(which(vapply(seen, function(m) identical(m$method, "notifications/progress"), TRUE)))
  expect_lt(last_beat, which(vapply(seen, function(m) identical(m$id, 4L), TRUE)))
})
