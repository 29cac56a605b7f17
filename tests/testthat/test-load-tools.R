# mcp_load_tools() (R/load-tools.R).

write_script <- function(lines) {
  path <- tempfile(fileext = ".R")
  writeLines(lines, path)
  path
}

add_lines <- c(
  "library(mcplite)",
  "add <- function(x, y) x + y",
  "add <- tool(add, \"Add two numbers.\", arguments = list(x = type_number(), y = type_number()))",
  "double <- tool(function(x) 2 * x, \"Double a number.\", name = \"double\",",
  "  arguments = list(x = type_number()))"
)

test_that("the tools a script serves are returned without serving them", {
  script <- write_script(c(add_lines, "mcp_server(list(double, add), instructions = \"Arithmetic.\")"))
  tools <- mcp_load_tools(script)
  expect_identical(names(tools), c("double", "add"))
  expect_identical(attr(tools, "instructions"), "Arithmetic.")
  expect_identical(tools$add(2, 3), 5)
  session <- mcp_handler(tools, instructions = attr(tools, "instructions"))
  res <- mcp_handle(session, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = "double", arguments = list(x = 4), `_meta` = list(
      "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities" = list()
    )
  )))
  expect_identical(jsonlite::fromJSON(res)$result$content$text, "8")
  # the script's objects stay out of the calling environments
  expect_false(exists("double", envir = globalenv(), inherits = FALSE))
})

test_that("whatever the last expression is", {
  # qualified call followed by more code
  script <- write_script(c(add_lines, "mcplite::mcp_server(add)", "message('after the server')"))
  expect_message(tools <- mcp_load_tools(script), "after the server")
  expect_identical(names(tools), "add")
  expect_null(attr(tools, "instructions"))
  # inside a condition and a function
  script <- write_script(c(
    add_lines,
    "main <- function() mcplite::mcp_server(list(add))",
    "if (!interactive() || TRUE) main()"
  ))
  expect_identical(names(mcp_load_tools(script)), "add")
  # no server call at all: every tool the script defines, by variable name
  script <- write_script(c(add_lines, "x <- 1"))
  expect_identical(names(mcp_load_tools(script)), c("add", "double"))
  # the last of several calls
  script <- write_script(c(add_lines, "mcp_server(add)", "mcp_server(double)"))
  expect_identical(names(mcp_load_tools(script)), "double")
  # a default argument holding a call is kept working
  script <- write_script(c(add_lines, "run <- function(tools = list(add, double)) mcp_server(tools)", "run()"))
  expect_identical(names(mcp_load_tools(script)), c("add", "double"))
})

test_that("the script's options() are confined", {
  withr::local_options(mcplite.json.digits = NULL, warn = 0)
  script <- write_script(c(
    "options(mcplite.json.digits = I(6), warn = 1, mcplite.test.new.option = TRUE)",
    add_lines,
    "mcp_server(add)"
  ))
  tools <- mcp_load_tools(script)
  expect_null(getOption("mcplite.json.digits"))
  expect_equal(getOption("warn"), 0)
  expect_null(getOption("mcplite.test.new.option"))
  # also when the script fails
  script <- write_script(c("options(mcplite.test.new.option = TRUE)", "stop('broken script')"))
  expect_error(mcp_load_tools(script), "broken script")
  expect_null(getOption("mcplite.test.new.option"))
})

test_that("errors name the script", {
  dir <- tempfile("scripts")
  dir.create(dir)
  bad <- file.path(dir, "bad.R")
  writeLines("x <- (", bad)
  failing <- file.path(dir, "failing.R")
  writeLines(c("x <- 1", "stop('no data file')"), failing)
  empty <- file.path(dir, "empty.R")
  writeLines("x <- 1", empty)
  expect_snapshot(error = TRUE, transform = function(x) gsub(dir, "<dir>", x, fixed = TRUE), {
    mcp_load_tools(file.path(dir, "missing.R"))
    mcp_load_tools(dir)
    mcp_load_tools(bad)
    mcp_load_tools(failing)
    mcp_load_tools(empty)
    mcp_load_tools(NA_character_)
  })
})

test_that("mcp_load_tools() ignores the other arguments of mcp_server() (transport, session_tools)", {
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "one <- tool(function() 1, name = 'one', description = 'One.')",
    "mcp_server(list(one), transport = 'http', session_tools = TRUE, session_wait = 5)"
  ), script)
  tools <- mcp_load_tools(script)
  expect_named(tools, "one")
})

test_that("mcp_server() reached through a function the script does not define (a package's) is recorded too", {
  # As `yourpackage::serve()` would: a function from elsewhere whose body
  # calls mcplite::mcp_server(); the script only calls it.
  add <- tool(function(x, y) x + y, "Add.", name = "add", arguments = list(x = type_number(), y = type_number()))
  serve <- local(function() mcplite::mcp_server(list(add), instructions = "From elsewhere."), list(add = add))
  assign("mcplite_test_serve", serve, envir = globalenv())
  withr::defer(rm("mcplite_test_serve", envir = globalenv()))
  script <- withr::local_tempfile(fileext = ".R")
  writeLines("mcplite_test_serve()", script)
  tools <- mcp_load_tools(script)
  expect_named(tools, "add")
  expect_identical(attr(tools, "instructions"), "From elsewhere.")
  # Once loaded, mcp_server() serves again (here: refuses a call with
  # nothing to serve, as always).
  expect_error(mcp_server(session_tools = FALSE), "nothing to serve", class = "mcplite_error")
})
