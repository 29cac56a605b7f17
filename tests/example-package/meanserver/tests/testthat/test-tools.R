# The ways the mcplite guides test a package's tools, run by R CMD check
# (RULES K9; issue 44, items 5-7).

test_that("in memory: results, warnings and messages, errors and timeouts", {
  server <- mcplite::local_mcp_connect(tools = mean_tools(), instructions = "Averages and squares.")
  expect_identical(mcplite::mcp_server_info(server)$instructions, "Averages and squares.")
  expect_message(
    expect_warning(res <- mcplite::mcp_call(server, "mean_of", list(values = c(1, NA, 5))), "dropping 1"),
    "averaging 2 values"
  )
  expect_identical(res$content[[1]]$text, "3")
  # A result's meta does not carry mcplite's version: snapshots stay put.
  expect_false("io.modelcontextprotocol/serverInfo" %in% names(res$meta))
  # A data frame is sent as an array of rows (JSON text).
  rows <- mcplite::mcp_call(server, "squares", list(rows = 2L))$content[[1]]$text
  expect_identical(rows, '[{"row":1,"square":1},{"row":2,"square":4}]')
  expect_error(mcplite::mcp_call(server, "squares", list(rows = "three")), class = "mcplite_error_tool")
  expect_error(mcplite::mcp_call(server, "wait", list(seconds = 30), timeout = 0.5),
               class = "mcplite_error_timeout")
})

test_that("the installed script over stdio", {
  script <- system.file("server.R", package = "meanserver")
  expect_true(file.exists(script))
  server <- mcplite::local_mcp_connect_script(script)
  expect_identical(mcplite::mcp_server_info(server)$instructions, "Averages and squares.")
  res <- mcplite::mcp_call(server, "mean_of", list(values = c(2, 4)))
  expect_identical(res$content[[1]]$text, "3")
})

test_that("the installed script's tools, loaded without serving", {
  tools <- mcplite::mcp_load_tools(system.file("server.R", package = "meanserver"))
  expect_named(tools, c("mean_of", "squares", "wait"))
  expect_identical(attr(tools, "instructions"), "Averages and squares.")
  expect_warning(expect_message(value <- tools$mean_of(list(1, NULL, 3))), "dropping")
  expect_identical(value, 2)
})
