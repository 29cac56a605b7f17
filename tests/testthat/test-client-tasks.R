# The R client and tasks (RULES K14): mcp_call() follows a task to its
# result, or returns its handle; mcp_task_status(), mcp_task_result() and
# mcp_task_cancel() ask about it later, also from another connection. The
# server is tests/clients/servers/tasks.R (tools fit, must, plain, boom).

tasks_script <- function() client_server_script("tasks.R")

for (protocol in c("2025-11-25", "2026-07-28")) {
  test_that(paste0("K14.2: mcp_call() follows a task to its result (", protocol, ")"), {
    skip_on_os("windows")
    conn <- local_mcp_connect_script(tasks_script(), protocol = protocol)
    said <- character()
    res <- mcp_call(conn, "fit", list(steps = 3L, ms = 30), progress = function(p, t, m) said <<- c(said, m))
    expect_identical(res$content[[1]]$text, "fitted in 3 steps")
    # 2025-11-25: fit is optional, so "auto" calls it directly; 2026-07-28:
    # the server makes it a task, whose status messages are the progress.
    if (protocol == "2026-07-28") {
      expect_true(length(said) >= 1L)
      expect_true(all(grepl("^step [1-3] of 3$", said)))
    }
    expect_identical(mcp_call(conn, "must", list(x = 21))$content[[1]]$text, "42")
    expect_identical(mcp_call(conn, "plain", list(x = 1))$content[[1]]$text, "2")
    err <- expect_client_error(mcp_call(conn, "boom"), "mcplite_error_tool")
    expect_match(conditionMessage(err), "the model did not converge")
  })

  test_that(paste0("K14.4: a task's question is answered with the connection's function (", protocol, ")"), {
    skip_on_os("windows")
    asked <- character()
    conn <- local_mcp_connect_script(tasks_script(), protocol = protocol, elicitation = function(q) {
      asked <<- c(asked, q$message)
      list(name = "Ada")
    })
    if (protocol == "2026-07-28") {
      # RULES V2.3: the task is input_required until tasks/update answers.
      expect_identical(mcp_call(conn, "greet")$content[[1]]$text, "Hello, Ada!")
      expect_identical(asked, "Your name?")
    } else {
      # A 2025-11-25 task asks nothing; called directly, the tool asks as
      # any call does (section 18).
      expect_identical(mcp_call(conn, "greet")$content[[1]]$text, "Hello, Ada!")
      err <- expect_client_error(mcp_task_result(conn, mcp_call(conn, "greet", task = "handle")),
                                 "mcplite_error_tool")
      expect_match(conditionMessage(err), "cannot be asked|elicitation")
    }
  })

  test_that(paste0("K14.3: a task's handle, fetched and cancelled from another connection (", protocol, ")"), {
    skip_on_os("windows")
    # Two connections to one server: an HTTP server (tasks outlive a
    # connection there). Over stdio a connection is its server.
    srv <- start_http_server(readLines(tasks_script()),
                             env = c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = "0", MCPLITE_TEST_WORKERS = "2"))
    one <- mcp_connect(url = srv$url, protocol = protocol)
    job <- mcp_call(one, "fit", list(steps = 4L, ms = 100), task = "handle")
    expect_s3_class(job, "mcplite_task")
    expect_match(job$id, "^[0-9a-f]{32}$")
    expect_identical(job$status, "working")
    long <- mcp_call(one, "fit", list(steps = 200L, ms = 100), task = "handle")
    mcp_close(one)
    two <- mcp_connect(url = srv$url, protocol = protocol)
    on.exit(mcp_close(two), add = TRUE)
    said <- character()
    res <- mcp_task_result(two, job$id, progress = function(p, t, m) said <<- c(said, m))
    expect_identical(res$content[[1]]$text, "fitted in 4 steps")
    expect_identical(mcp_task_status(two, job)$status, "completed")
    cancelled <- mcp_task_cancel(two, long)
    expect_identical(cancelled$status, "cancelled")
    err <- expect_client_error(mcp_task_result(two, long), "mcplite_error_tool")
    expect_match(conditionMessage(err), "was cancelled")
    expect_client_error(mcp_task_status(two, strrep("0", 32)), "mcplite_error_rpc")
    expect_error(mcp_task_status(two, 1), "`task` must be a task handle", class = "mcplite_error_argument")
  })
}

test_that("V2.5: with after, a quick call answers as usual and a long one becomes a task", {
  skip_on_os("windows")
  asked <- character()
  conn <- local_mcp_connect_script(tasks_script(), protocol = "2026-07-28", env = c(MCPLITE_TASK_AFTER = "0.5"),
                                   elicitation = function(q) {
                                     asked <<- c(asked, q$message)
                                     list(name = "Ada")
                                   })
  # Quick: the result, even when a handle is asked for.
  quick <- mcp_call(conn, "fit", list(steps = 1L, ms = 10), task = "handle")
  expect_s3_class(quick, "mcplite_tool_result")
  expect_identical(quick$content[[1]]$text, "fitted in 1 steps")
  # Long: a task's handle, its result fetched later.
  job <- mcp_call(conn, "fit", list(steps = 8L, ms = 150), task = "handle")
  expect_s3_class(job, "mcplite_task")
  expect_identical(mcp_task_result(conn, job)$content[[1]]$text, "fitted in 8 steps")
  # Followed (task = "auto"): the status messages after the handle come as
  # progress, as the heartbeats before it did not carry any.
  said <- character()
  res <- mcp_call(conn, "fit", list(steps = 8L, ms = 150), progress = function(p, t, m) said <<- c(said, m))
  expect_identical(res$content[[1]]$text, "fitted in 8 steps")
  expect_true(any(grepl("^step [1-8] of 8$", said)))
  # A question asked at once is the request's (answered in rounds); one
  # asked after the promotion is the task's (tasks/update).
  expect_identical(mcp_call(conn, "greet")$content[[1]]$text, "Hello, Ada!")
  job <- mcp_call(conn, "greet", list(wait = 1.5), task = "handle")
  expect_s3_class(job, "mcplite_task")
  expect_identical(mcp_task_result(conn, job)$content[[1]]$text, "Hello, Ada!")
  expect_identical(asked, c("Your name?", "Your name?"))
  # Answered input_required at once, called again with the answer, and
  # promoted before it asks again: the answer it brought is used, the user
  # is not asked twice.
  asked <- character()
  res <- mcp_call(conn, "greet", list(wait = 1.5, file = tempfile("greeted-")))
  expect_identical(res$content[[1]]$text, "Hello, Ada!")
  expect_identical(asked, "Your name?")
})

test_that("V4.2: the results kept fit in task_options(max_mb); the oldest finished task goes first", {
  skip_on_os("windows")
  conn <- local_mcp_connect_script(tasks_script(), protocol = "2026-07-28", env = c(MCPLITE_TASK_MAX_MB = "16"))
  big <- function() mcp_call(conn, "fit", list(steps = 1L, ms = 1, pad = 9e6), task = "handle")
  one <- big()
  expect_equal(nchar(mcp_task_result(conn, one)$content[[1]]$text), 9e6 + 17)
  expect_identical(mcp_task_status(conn, one)$status, "completed")
  # Nine more MiB do not fit beside the first nine: the first result goes.
  two <- big()
  expect_equal(nchar(mcp_task_result(conn, two)$content[[1]]$text), 9e6 + 17)
  expect_client_error(mcp_task_status(conn, one), "mcplite_error_rpc")
  expect_identical(mcp_task_status(conn, two)$status, "completed")
})
