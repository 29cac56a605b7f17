# RULES K13: mcp_connect(log_level =) relays a server's log messages during
# mcp_call() as R messages of class `mcplite_server_log`, in both eras, over
# stdio and HTTP; the server is mcplite's own, whose tools' message(),
# warning() and mcp_log() become notifications/message (RULES section 15).

log_server_code <- c(
  "library(mcplite)",
  "chatty <- tool(function() {",
  "  mcp_log('fine detail', level = 'debug')",
  "  message('reading the data')",
  "  mcp_log(list(rows = 3L), level = 'notice', logger = 'import')",
  "  warning('a column was empty')",
  "  'done'",
  "}, name = 'chatty', description = 'Logs as it works.')",
  "mcp_server(chatty)"
)

log_script <- function() {
  path <- tempfile(fileext = ".R")
  writeLines(log_server_code, path)
  path
}

collect_logs <- function(expr) {
  got <- list()
  value <- withCallingHandlers(expr, mcplite_server_log = function(m) {
    got[[length(got) + 1L]] <<- m
    invokeRestart("muffleMessage")
  })
  list(value = value, logs = got)
}

test_that("K13: the level is checked and applies to servers, not to tools in memory", {
  expect_error(mcp_connect("true", log_level = "loud"), "`log_level` must be one of",
               class = "mcplite_error_argument")
  t <- tool(function() 1, name = "one", description = "One.")
  expect_error(mcp_connect(tools = t, log_level = "info"), "apply to `command` and `url`",
               class = "mcplite_error_argument")
})

for (protocol in c("2025-11-25", "2026-07-28")) {
  test_that(paste0("K13.1, K13.2 over stdio (", protocol, "): messages at the level or above, in order"), {
    conn <- mcp_connect_script(log_script(), protocol = protocol, log_level = "info", name = "log-server")
    withr::defer(mcp_close(conn))
    r <- collect_logs(mcp_call(conn, "chatty"))
    expect_identical(r$value$content[[1]]$text, "done")
    expect_identical(vapply(r$logs, `[[`, "", "level"), c("info", "notice", "warning"))
    expect_identical(r$logs[[1]]$data, "reading the data")
    expect_identical(r$logs[[1]]$logger, "chatty")
    expect_identical(r$logs[[2]]$data, list(rows = 3L))
    expect_identical(r$logs[[2]]$logger, "import")
    expect_identical(conditionMessage(r$logs[[1]]), "[log-server chatty] info: reading the data\n")
    expect_identical(conditionMessage(r$logs[[2]]), "[log-server import] notice: {\"rows\":3}\n")
    expect_identical(r$logs[[3]]$server, "log-server")
  })
}

test_that("K13: without a level nothing is relayed; debug shows everything", {
  quiet <- mcp_connect_script(log_script(), name = "log-server")
  withr::defer(mcp_close(quiet))
  expect_silent(mcp_call(quiet, "chatty"))
  loud <- mcp_connect_script(log_script(), name = "log-server", log_level = "debug")
  withr::defer(mcp_close(loud))
  r <- collect_logs(mcp_call(loud, "chatty"))
  expect_identical(vapply(r$logs, `[[`, "", "level"), c("debug", "info", "notice", "warning"))
  suppressMessages(expect_message(mcp_call(loud, "chatty"), "fine detail", class = "mcplite_server_log"))
})

test_that("K13.1, K13.2 over HTTP in both eras", {
  srv <- start_http_server(log_server_code, env = c(MCPLITE_TRANSPORT = "http"))
  for (protocol in c("2025-11-25", "2026-07-28")) {
    conn <- mcp_connect(url = srv$url, protocol = protocol, log_level = "warning", name = "log-server")
    r <- collect_logs(mcp_call(conn, "chatty"))
    expect_identical(vapply(r$logs, `[[`, "", "level"), "warning")
    expect_identical(r$logs[[1]]$data, "a column was empty")
    mcp_close(conn)
  }
})
