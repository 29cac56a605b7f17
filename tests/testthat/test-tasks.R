# Tasks on the server side (RULES section 19): task_options(), tool(task = )
# and mcp_server(tasks = ) in R. The protocol is tested in the engine
# (rust/engine/src/tasks.rs, tests/workers/stdio.rs), with the official
# ext-tasks client (tests/clients/node/test/tasks.test.mjs), with raw
# clients (tests/clients/python/test_tasks.py) and by the R client
# (test-client-tasks.R).

test_that("task_options() checks its arguments and keeps seconds", {
  o <- task_options(ttl = 60, max_ttl = 30, poll_interval = 0.5, max_tasks = 10)
  expect_s3_class(o, "mcplite_task_options")
  expect_identical(o[c("ttl", "max_ttl", "poll_interval", "max_tasks")],
                   list(ttl = 60, max_ttl = 60, poll_interval = 0.5, max_tasks = 10))
  expect_null(o$dir)
  expect_output(print(o), "ttl 60 s .* at most 10 tasks and 256 MiB of results, kept in memory")
  expect_identical(task_options(max_mb = 32)$max_mb, 32)
  expect_error(task_options(max_mb = 1), "`max_mb` must be", class = "mcplite_error_argument")
  expect_error(task_options(ttl = 0), class = "mcplite_error_argument")
  expect_error(task_options(poll_interval = "1"), "`poll_interval` must be", class = "mcplite_error_argument")
  expect_error(task_options(max_tasks = 1.5), "`max_tasks` must be", class = "mcplite_error_argument")
  file <- withr::local_tempfile(lines = "x")
  expect_error(task_options(dir = file), "must name a directory", class = "mcplite_error_argument")
  d <- task_options(dir = file.path(tempdir(), "tasks-here"))$dir
  expect_true(grepl("tasks-here$", d))
  # RULES V2.5: optional tools' calls made tasks after a time, or at once.
  expect_null(o$after)
  expect_identical(task_options(after = 2.5)$after, 2.5)
  expect_output(print(task_options(after = 2)), "made tasks after 2 s")
  expect_error(task_options(after = -1), "`after` must be", class = "mcplite_error_argument")
  expect_error(task_options(after = NA), "`after` must be", class = "mcplite_error_argument")
})

test_that("tool(task = ) is one of three choices, forbidden by default", {
  f <- function(x) x
  expect_identical(attr(tool(f, "F.", arguments = list(x = type_number())), "mcplite")$task, "forbidden")
  t <- tool(f, "F.", arguments = list(x = type_number()), task = "required")
  expect_identical(attr(t, "mcplite")$task, "required")
  expect_identical(mcplite:::server_spec(list(t))$task_support, "required")
  expect_error(tool(f, "F.", arguments = list(x = type_number()), task = "sometimes"),
               "`task` must be one of \"forbidden\", \"optional\" or \"required\"", class = "mcplite_error_argument")
})

test_that("mcp_server(tasks = ) takes NULL, TRUE, FALSE or task_options()", {
  expect_null(mcplite:::tasks_option(NULL))
  expect_null(mcplite:::tasks_option(FALSE))
  expect_s3_class(mcplite:::tasks_option(TRUE), "mcplite_task_options")
  expect_error(mcplite:::tasks_option(list(ttl = 1)), "`tasks` must be NULL, TRUE, FALSE or task_options()",
               class = "mcplite_error_argument")
  spec <- list(names = c("a", "b"), task_support = c("optional", "required"), host_tools = "b")
  expect_identical(mcplite:::task_spec(task_options(), spec)$support, c("optional", "forbidden"))
})

test_that("V1.1: a handler (in process, no workers) declares no tasks and runs every call", {
  t <- tool(function(x) x * 2, "Double.", name = "double", arguments = list(x = type_number()), task = "required")
  h <- mcp_handler(t)
  init <- jsonlite::fromJSON(mcp_handle(h, list(jsonrpc = "2.0", id = 1, method = "initialize",
    params = list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
                  clientInfo = list(name = "t", version = "1")))), simplifyVector = FALSE)
  expect_null(init$result$capabilities$tasks)
  listed <- jsonlite::fromJSON(mcp_handle(h, list(jsonrpc = "2.0", id = 2, method = "tools/list")),
                               simplifyVector = FALSE)
  expect_null(listed$result$tools[[1]]$execution)
  got <- jsonlite::fromJSON(mcp_handle(h, list(jsonrpc = "2.0", id = 3, method = "tasks/get",
                                              params = list(taskId = "x"))), simplifyVector = FALSE)
  expect_identical(got$error$code, -32601L)
})

test_that("V2.1: a server with tasks and session tools only is refused before it starts", {
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  script <- file.path(dir, "server.R")
  writeLines("mcplite::mcp_server(tasks = TRUE)", script)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)),
                                  stdout = TRUE, stderr = TRUE, stdin = "",
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  expect_match(paste(out, collapse = "\n"), "cannot be combined with `tasks`")
})
