# _server.yml and launch_server() (RULES R5.8): a project launched exactly
# as a host of the standard does it (read `engine`, call that package's
# launch_server(settings, host, port) in a process of its own).

test_that("R5.8: launch_server() checks the settings file", {
  skip_if_not_installed("yaml")
  dir <- withr::local_tempdir()
  yml <- file.path(dir, "_server.yml")
  expect_error(launch_server(file.path(dir, "none.yml")), "`settings`", class = "mcplite_error_argument")
  writeLines(c("engine: plumber2", "tools: tools.R"), yml)
  expect_error(launch_server(yml), "engine: mcplite", class = "mcplite_error_argument")
  writeLines(c("engine: mcplite", "tools: tools.R", "colour: blue"), yml)
  expect_error(launch_server(yml), "`colour`", class = "mcplite_error_argument")
  writeLines("engine: mcplite", yml)
  expect_error(launch_server(yml), "name the tools file", class = "mcplite_error_argument")
})

test_that("R5.8: a project with _server.yml serves over HTTP when a host launches it", {
  skip_on_cran()
  skip_if_not_installed("yaml")
  skip_if_not_installed("processx")
  dir <- withr::local_tempdir()
  writeLines(c("engine: mcplite", "tools: tools.R", "path: /mcp"), file.path(dir, "_server.yml"))
  writeLines(c(
    "list(mcplite::tool(function(x) x * 2, 'Double a number.', name = 'double',",
    "  arguments = list(x = mcplite::type_number())))"
  ), file.path(dir, "tools.R"))
  port <- free_port()
  host_code <- paste0(
    "settings <- '_server.yml'; engine <- yaml::read_yaml(settings)$engine; ",
    "launch <- getExportedValue(engine, 'launch_server'); ",
    "launch(settings, host = '127.0.0.1', port = ", port, ")"
  )
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", host_code),
    wd = dir, stdout = "|", stderr = "|", cleanup_tree = TRUE,
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  )
  withr::defer(p$kill_tree())
  url <- sprintf("http://127.0.0.1:%d/mcp", port)
  wait_until(function() {
    !p$is_alive() || !inherits(try(mcp_close(mcp_connect(url = url, timeout = 2)), silent = TRUE), "try-error")
  }, "the launched server")
  expect_true(p$is_alive(), info = p$read_all_error())
  srv <- local_mcp_connect(url = url)
  expect_identical(mcp_call(srv, "double", list(x = 21))$content[[1]]$text, "42")
})
