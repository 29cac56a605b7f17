# The in-memory client (RULES K9): mcp_connect(tools = ) runs the engine's
# client against an engine server in this process. Where it matters, the
# same tools are also served by a real server process over stdio
# (mcp_connect_script()) and both answers are compared.

memory_tools <- function() {
  list(
    tool(function(x, y) x + y, "Add two numbers.", name = "add",
         arguments = list(x = type_number(), y = type_number())),
    tool(function(values) list(mean = mean(unlist(values)), n = length(values)), "Summarise numbers.",
         name = "stats", arguments = list(values = type_array(type_number())),
         output_schema = type_object(mean = type_number(), n = type_integer())),
    tool(function() stop("failed on purpose"), "Fail.", name = "fails"),
    tool(function() {
      warning("careful")
      "warned"
    }, "Warn.", name = "warns")
  )
}

test_that("K9.1: a connection in memory lists and calls tools, with no process", {
  mem <- mcp_connect(tools = memory_tools())
  expect_s3_class(mem, "mcplite_connection")
  info <- mcp_server_info(mem)
  expect_identical(info$era, "modern")
  expect_identical(info$protocol_version, "2026-07-28")
  expect_identical(info$server$name, "mcplite")
  expect_null(info$pid)
  expect_true(info$open)
  expect_identical(names(mcp_list_tools(mem)), c("add", "stats", "fails", "warns"))
  expect_identical(mcp_call(mem, "add", list(x = 1, y = 2))$content[[1]]$text, "3")
  res <- mcp_call(mem, "stats", list(values = c(1, 2, 6)))
  expect_identical(jsonlite::fromJSON(res$content[[1]]$text), list(mean = 3L, n = 3L))
  expect_output(print(mem), "memory: 4 tools in this R session", fixed = TRUE)
  expect_identical(mcp_close(mem), "closed (in memory)")
  expect_false(mcp_server_info(mem)$open)
  expect_error(mcp_call(mem, "add", list(x = 1, y = 2)), "is closed", class = "mcplite_error_connection")
})

test_that("K9.1: answers and errors in memory are those of a server over stdio", {
  skip_on_cran()
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    paste0("tools <- ", paste(deparse(body(memory_tools)), collapse = "\n")),
    "mcp_server(tools)"
  ), script)
  stdio <- mcp_connect_script(script, name = "same")
  on.exit(mcp_close(stdio), add = TRUE)
  mem <- mcp_connect(tools = memory_tools(), name = "same")
  on.exit(mcp_close(mem), add = TRUE)
  expect_identical(mcp_list_tools(mem), mcp_list_tools(stdio))
  outcome <- function(conn, tool, args) {
    tryCatch(mcp_call(conn, tool, args), error = function(e) {
      list(class = class(e), message = conditionMessage(e), code = e$code)
    })
  }
  cases <- list(
    list("add", list(x = 1, y = 2)),
    list("add", list(x = "one", y = 2)), # invalid arguments
    list("add", list(x = 1)), # a required argument missing
    list("stats", list(values = list(1, "two"))),
    list("fails", list()),
    list("no_such_tool", list())
  )
  for (case in cases) {
    expect_identical(outcome(mem, case[[1]], case[[2]]), outcome(stdio, case[[1]], case[[2]]),
                     info = case[[1]])
  }
  expect_s3_class(tryCatch(mcp_call(mem, "fails"), error = identity), "mcplite_error_tool")
  expect_s3_class(tryCatch(mcp_call(mem, "no_such_tool"), error = identity), "mcplite_error_rpc")
})

test_that("K9.1: a legacy protocol, a handler's instructions, and mcp_tools() in memory", {
  mem <- mcp_connect(tools = memory_tools(), protocol = "2025-06-18")
  expect_identical(mcp_server_info(mem)$era, "legacy")
  expect_identical(mcp_server_info(mem)$protocol_version, "2025-06-18")
  expect_identical(mcp_call(mem, "add", list(x = 2, y = 2))$content[[1]]$text, "4")
  mcp_close(mem)

  h <- mcp_handler(memory_tools(), instructions = "Add with care.")
  mem <- mcp_connect(tools = h)
  expect_identical(mcp_server_info(mem)$instructions, "Add with care.")
  # The connection's tools, re-served: a proxy of a proxy of `add`.
  proxied <- mcp_tools(mem)
  mem2 <- mcp_connect(tools = proxied)
  expect_identical(mcp_call(mem2, "add", list(x = 5, y = 6))$content[[1]]$text, "11")
  mcp_close(list(mem, mem2))
})

test_that("K9.1: a tool's warnings reach the console as from a server, not as conditions", {
  mem <- mcp_connect(tools = memory_tools())
  on.exit(mcp_close(mem))
  expect_warning(res <- mcp_call(mem, "warns"), NA)
  expect_identical(res$content[[1]]$text, "warned")
})

test_that("K9.2: progress callbacks get the server's notifications, heartbeats included", {
  slow <- tool(function(n) {
    for (i in seq_len(n)) mcp_progress(i, total = n, message = paste("step", i))
    Sys.sleep(0.6)
    "done"
  }, "Report progress.", name = "slow", arguments = list(n = type_integer()))
  withr::local_envvar(MCPLITE_PROGRESS_INTERVAL = "0.2")
  mem <- mcp_connect(tools = slow)
  on.exit(mcp_close(mem))
  seen <- list()
  res <- mcp_call(mem, "slow", list(n = 3L), progress = function(progress, total, message) {
    seen[[length(seen) + 1L]] <<- list(progress = progress, total = total, message = message)
  })
  expect_identical(res$content[[1]]$text, "done")
  values <- vapply(seen, function(p) p$progress, numeric(1))
  expect_true(all(diff(values) > 0))
  messages <- vapply(seen, function(p) p$message, "")
  # The tool's own reports (coalesced when they come faster than the
  # ticker takes them, RULES C2), the last one always ...
  expect_true(all(vapply(seen, function(p) p$total, numeric(1)) == 3))
  expect_true("step 3" %in% messages)
  expect_true(all(grepl("^step [123]", messages)))
  # ... then heartbeats while it sleeps.
  expect_true(any(grepl("step 3 (still running after", messages, fixed = TRUE)))
  # Without a callback, no progress is asked for.
  expect_identical(mcp_call(mem, "slow", list(n = 1L))$content[[1]]$text, "done")
})

test_that("K9.3: mcp_connect(tools = ) checks its arguments", {
  add <- memory_tools()[[1]]
  expect_error(mcp_connect("sh", tools = add), "exactly one of", class = "mcplite_error")
  expect_error(mcp_connect(tools = add, env = c(A = "1")), "do not apply to `tools`", class = "mcplite_error")
  expect_error(mcp_connect(tools = 42), "`tools`", class = "mcplite_error")
  expect_error(mcp_connect(tools = add, protocol = "1999-01-01"), "`protocol`", class = "mcplite_error")
})

test_that("K9.2: an in-memory call inside a served tool gives the server's progress back", {
  skip_on_cran()
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "inner <- tool(function() { mcp_progress(1, message = 'inner report'); 'inner' }, 'Inner.', name = 'inner')",
    "outer <- tool(function() {",
    "  mem <- mcp_connect(tools = inner)",
    "  on.exit(mcp_close(mem))",
    "  text <- mcp_call(mem, 'inner')$content[[1]]$text",
    "  sent <- mcp_progress(1, total = 1, message = 'after the in-memory call')",
    "  paste(text, sent)",
    "}, 'Outer.', name = 'outer')",
    "mcp_server(list(outer))"
  ), script)
  srv <- mcp_connect_script(script)
  on.exit(mcp_close(srv))
  messages <- character()
  res <- mcp_call(srv, "outer", progress = function(progress, total, message) {
    messages <<- c(messages, message)
  })
  # The tool's report after the in-memory call still reached this client;
  # the inner call's report went to its own (in-memory) client only.
  expect_identical(res$content[[1]]$text, "inner TRUE")
  # (A heartbeat may come first on a slow machine.)
  expect_true("after the in-memory call" %in% messages)
  expect_false(any(grepl("inner report", messages, fixed = TRUE)))
})
