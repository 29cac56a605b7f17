# Connections closed when their caller ends (RULES K9.5): local_mcp_connect()
# and local_mcp_connect_script().

memory_tools <- function() {
  list(tool(function(x, y) x + y, "Add two numbers.", name = "add",
            arguments = list(x = type_number(), y = type_number())))
}

test_that("K9.5: local_mcp_connect() closes the connection when its caller ends", {
  kept <- NULL
  f <- function() {
    kept <<- local_mcp_connect(tools = memory_tools())
    expect_true(mcp_server_info(kept)$open)
    mcp_call(kept, "add", list(x = 2, y = 3))$content[[1]]$text
  }
  expect_identical(f(), "5")
  expect_false(mcp_server_info(kept)$open)
  g <- function() {
    local_mcp_connect(tools = memory_tools(), .local_envir = "here")
  }
  expect_error(g(), "`.local_envir`", class = "mcplite_error")
})

test_that("K9.5: local_mcp_connect_script() closes the server process when the test ends", {
  skip_on_cran()
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c("library(mcplite)",
               "mcp_server(tool(function() Sys.getpid(), 'Its pid.', name = 'pid'))"), script)
  kept <- NULL
  f <- function() {
    kept <<- local_mcp_connect_script(script)
    as.integer(mcp_call(kept, "pid")$content[[1]]$text)
  }
  pid <- f()
  expect_false(mcp_server_info(kept)$open)
  wait_until(function() !file.exists(file.path("/proc", pid)) || .Platform$OS.type != "unix", "the server to end")
})
