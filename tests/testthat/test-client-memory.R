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

test_that("K9.4: a tool's warnings and messages are signalled again by mcp_call(), and not written out", {
  tools <- c(memory_tools(), list(tool(function() {
    message("said once")
    warning("warned once")
    message("said twice")
    stop("and failed")
  }, "Talk, then fail.", name = "talks")))
  mem <- local_mcp_connect(tools = tools)
  expect_warning(res <- mcp_call(mem, "warns"), "careful")
  expect_identical(res$content[[1]]$text, "warned")
  # In order, then the tool's error; nothing on standard error.
  seen <- character()
  err <- NULL
  out <- capture.output(type = "message", withCallingHandlers(
    err <- tryCatch(mcp_call(mem, "talks"), mcplite_error_tool = identity),
    warning = function(w) {
      seen <<- c(seen, paste("warning:", conditionMessage(w)))
      invokeRestart("muffleWarning")
    },
    message = function(m) {
      seen <<- c(seen, paste("message:", sub("\n$", "", conditionMessage(m))))
      invokeRestart("muffleMessage")
    }
  ))
  expect_identical(seen, c("message: said once", "warning: warned once", "message: said twice"))
  expect_identical(err$text, "and failed")
  expect_identical(out, character())
  # The caller's `warn` option holds: warn = 2 makes the warning an error.
  withr::local_options(warn = 2)
  expect_error(mcp_call(mem, "warns"), "careful")
})

test_that("K9.1: timeout interrupts an in-memory call, unless it reports progress; nothing is left over", {
  marks <- new.env()
  tools <- list(
    tool(function() {
      on.exit(marks$cleaned <- TRUE)
      repeat Sys.sleep(0.02)
    }, "Never return.", name = "spin"),
    tool(function(n) {
      for (i in seq_len(n)) {
        Sys.sleep(0.15)
        mcp_progress(i, total = n)
      }
      "reported"
    }, "Report often.", name = "reports", arguments = list(n = type_integer()))
  )
  mem <- local_mcp_connect(tools = tools)
  expect_error(mcp_call(mem, "spin", timeout = 0.5), class = "mcplite_error_timeout")
  expect_true(isTRUE(marks$cleaned))
  # No interrupt is left for the caller's own code.
  expect_identical({
    Sys.sleep(0.3)
    "not interrupted"
  }, "not interrupted")
  # Each report restarts the clock (1.2 s in all, 0.15 s apart) when the
  # client listens to them, as over stdio; without, the time is the call's.
  res <- mcp_call(mem, "reports", list(n = 8L), timeout = 0.5, progress = function(...) NULL)
  expect_identical(res$content[[1]]$text, "reported")
  expect_error(mcp_call(mem, "reports", list(n = 8L), timeout = 0.5), class = "mcplite_error_timeout")
  expect_identical(mcp_call(mem, "reports", list(n = 1L))$content[[1]]$text, "reported")
})

test_that("K9.1, K9.3: instructions with tools in memory; a result's meta leaves out the server's version", {
  mem <- local_mcp_connect(tools = memory_tools(), instructions = "Add with care.")
  expect_identical(mcp_server_info(mem)$instructions, "Add with care.")
  expect_true(nzchar(mcp_server_info(mem)$server$version))
  res <- mcp_call(mem, "add", list(x = 1, y = 2))
  expect_false("io.modelcontextprotocol/serverInfo" %in% names(res$meta))
  expect_error(mcp_connect(tools = mcp_handler(memory_tools()), instructions = "No."), "`instructions`",
               class = "mcplite_error")
  expect_error(mcp_connect("sh", instructions = "No."), "`instructions` applies to `tools`",
               class = "mcplite_error")
})

test_that("K9.2: in memory, progress callbacks get the tool's reports and no heartbeats", {
  slow <- tool(function() {
    mcp_progress(1, total = 2, message = "half")
    Sys.sleep(1.5)
    "done"
  }, "Report once, then wait.", name = "slow")
  withr::local_envvar(MCPLITE_PROGRESS_INTERVAL = NA)
  mem <- local_mcp_connect(tools = slow)
  seen <- character()
  res <- mcp_call(mem, "slow", progress = function(progress, total, message) seen <<- c(seen, message))
  expect_identical(res$content[[1]]$text, "done")
  expect_identical(seen, "half")
})

test_that("K9.2: with MCPLITE_PROGRESS_INTERVAL, progress callbacks get heartbeats too", {
  slow <- tool(function(n) {
    for (i in seq_len(n)) mcp_progress(i, total = n, message = paste("step", i))
    Sys.sleep(0.6)
    "done"
  }, "Report progress.", name = "slow", arguments = list(n = type_integer()))
  withr::local_envvar(MCPLITE_PROGRESS_INTERVAL = "0.2")
  mem <- mcp_connect(tools = slow)
  on.exit(mcp_close(mem), add = TRUE)
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
  on.exit(mcp_close(srv), add = TRUE)
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
