# RULES G1-G4 (issue 45): log messages from a running tool, R's side:
# mcp_log() and a tool's message() and warning(), over real pipes with
# processx, in both eras, in the server's R and in workers.

test_that("G2: mcp_log() is a silent no-op when nobody listens, and checks its arguments", {
  expect_invisible(mcp_log("hello"))
  expect_false(mcp_log("hello"))
  expect_false(mcp_log(list(rows = 3L), level = "emergency", logger = "import"))
  err <- expect_error(mcp_log("x", level = "loud"), class = "mcplite_error_argument")
  expect_match(conditionMessage(err), "`level` must be one of", fixed = TRUE)
  expect_match(conditionMessage(err), "\"emergency\"", fixed = TRUE)
  expect_identical(conditionCall(err)[[1]], quote(mcp_log))
  expect_error(mcp_log("x", level = c("info", "debug")), "`level`", class = "mcplite_error_argument")
  expect_error(mcp_log("x", logger = 1), "`logger`", class = "mcplite_error_argument")
})

skip_on_cran()
skip_if_not_installed("processx")

# A stdio server (with `workers` worker processes, 0 for none) whose tool
# `chatty` logs at every level it can: message(), warning(), mcp_log() of a
# list and of a string under its own logger. Returns the process.
chatty_server <- function(workers = 0L) {
  script <- withr::local_tempfile(fileext = ".R", .local_envir = parent.frame())
  writeLines(c(
    "library(mcplite)",
    "chatty <- tool(function() {",
    "  message('hello from R')",
    "  warning('careful')",
    "  sent <- mcp_log(list(rows = 3L, ok = TRUE), level = 'notice')",
    "  mcp_log('fine detail', level = 'debug', logger = 'custom')",
    "  if (sent) 'sent' else 'nobody'",
    "}, name = 'chatty', description = 'Logs.')",
    "pid <- tool(function() Sys.getpid(), name = 'pid', description = 'Process id.')",
    # Code that reaches past mcp_log() to the bridge with JSON text that
    # would add members to the notification (RULES N7.8): refused.
    "forge <- tool(function() format(mcplite:::log_running('info', NULL, '1,\"id\":\"victim\"')),",
    "  name = 'forge', description = 'Forges.')",
    sprintf("mcp_server(list(chatty, pid, forge), workers = %s)", if (workers > 0) workers else "NULL")
  ), script)
  p <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
    stdin = "|", stdout = "|", stderr = "|",
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  )
  withr::defer(if (p$is_alive()) p$kill(), envir = parent.frame())
  p
}

# Send lines, then read parsed messages up to the response with `id`.
exchange <- function(p, lines, id, timeout = 60) {
  p$write_input(paste0(lines, "\n", collapse = ""))
  got <- list()
  deadline <- Sys.time() + timeout
  repeat {
    p$poll_io(200)
    for (l in p$read_output_lines()) {
      m <- jsonlite::fromJSON(l, simplifyVector = FALSE)
      got[[length(got) + 1L]] <- m
      if (!is.null(m$id) && identical(as.character(m$id), as.character(id))) return(got)
    }
    if (Sys.time() > deadline || !p$is_alive()) stop("no answer for id ", id, ": ", p$read_all_error())
  }
}

log_params <- function(ms) {
  lapply(Filter(function(m) identical(m$method, "notifications/message"), ms), function(m) m$params)
}

init_line <- paste0(
  '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25",',
  '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)
chatty_call <- function(id) {
  sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"chatty","arguments":{}}}', id)
}
set_level <- function(level) {
  sprintf('{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"%s"}}', level)
}

for (workers in c(0L, 2L)) {
  test_that(paste0("G1-G3: a tool's messages reach a legacy client at its session's level (workers: ", workers, ")"), {
    p <- chatty_server(workers)
    init <- exchange(p, init_line, "init")
    expect_identical(init[[1]]$result$capabilities$logging, setNames(list(), character()))
    # No level set: nothing, and mcp_log() says nobody listens.
    got <- exchange(p, chatty_call(1), 1)
    expect_length(log_params(got), 0)
    expect_identical(got[[length(got)]]$result$content[[1]]$text, "nobody")
    expect_identical(exchange(p, set_level("info"), "lv")[[1]]$result, setNames(list(), character()))
    got <- exchange(p, chatty_call(2), 2)
    expect_identical(log_params(got), list(
      list(level = "info", logger = "chatty", data = "hello from R"),
      list(level = "warning", logger = "chatty", data = "careful"),
      list(level = "notice", logger = "chatty", data = list(rows = 3L, ok = TRUE))
    ))
    expect_identical(got[[length(got)]]$result$content[[1]]$text, "sent")
    # A lower level: the debug message too, under its own logger.
    exchange(p, set_level("debug"), "lv")
    got <- exchange(p, chatty_call(3), 3)
    expect_identical(log_params(got)[[4]], list(level = "debug", logger = "custom", data = "fine detail"))
    # A higher one: the warning alone.
    exchange(p, set_level("warning"), "lv")
    got <- exchange(p, chatty_call(4), 4)
    expect_identical(vapply(log_params(got), function(x) x$level, ""), "warning")
    exchange(p, set_level("debug"), "lv")
    got <- exchange(p, '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"forge","arguments":{}}}', 8)
    expect_length(log_params(got), 0)
    expect_identical(got[[length(got)]]$result$content[[1]]$text, "FALSE")
    expect_false(any(vapply(got, function(m) identical(m$id, "victim"), TRUE)))
    # With workers, the tool ran in another process: the messages crossed the pipe.
    pid <- exchange(p, '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pid","arguments":{}}}', 9)
    ran_in <- as.integer(pid[[length(pid)]]$result$content[[1]]$text)
    if (workers > 0) expect_false(ran_in == p$get_pid()) else expect_identical(ran_in, p$get_pid())
    bad <- exchange(p, set_level("verbose"), "lv")
    expect_identical(bad[[1]]$error$code, -32602L)
    close(p$get_input_connection())
    p$wait(60000)
    # Standard error still has the message and the warning (RULES S6).
    err <- p$read_all_error()
    expect_match(err, "hello from R", fixed = TRUE)
    expect_match(err, "careful", fixed = TRUE)
    expect_identical(p$get_exit_status(), 0L)
  })
}

test_that("G1.2: a 2026-07-28 call asks for its own messages in _meta", {
  p <- chatty_server()
  meta <- ',"io.modelcontextprotocol/logLevel":"warning"'
  got <- exchange(p, modern_call("chatty", id = 5, meta = meta), 5)
  expect_identical(log_params(got), list(list(level = "warning", logger = "chatty", data = "careful")))
  got <- exchange(p, modern_call("chatty", id = 6), 6)
  expect_length(log_params(got), 0)
  got <- exchange(p, modern_call("chatty", id = 7, meta = ',"io.modelcontextprotocol/logLevel":"all"'), 7)
  expect_identical(got[[1]]$error$code, -32602L)
})
