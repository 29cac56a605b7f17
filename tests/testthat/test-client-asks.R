# RULES K12 (issue 45 item 6): mcp_connect()'s `elicitation` and `sampling`
# functions answer a server's questions during mcp_call(), in both eras, over
# stdio and HTTP. The servers are mcplite's own (tests/clients/servers/asks.R,
# whose tools ask with mcp_elicit() and mcp_sample()) and small sh servers
# that show what goes over the wire; the official conformance suite's client
# scenario `elicitation-sep1034-client-defaults` (tests/suites/21-conformance.sh)
# asks on a legacy HTTP session's GET stream.

asks_connect <- function(protocol, ..., envir = parent.frame()) {
  conn <- mcp_connect(http_rscript(), c("--vanilla", client_server_script("asks.R")), protocol = protocol,
                      timeout = 30, ...)
  withr::defer(mcp_close(conn), envir = envir)
  conn
}

first_text <- function(res) res$content[[1]]$text

test_that("K12.1: the capabilities follow the functions given", {
  expect_identical(client_capabilities_json(NULL, NULL), "{}")
  expect_identical(client_capabilities_json(identity, NULL), "{\"elicitation\":{\"form\":{}}}")
  expect_identical(client_capabilities_json(identity, identity), "{\"elicitation\":{\"form\":{}},\"sampling\":{}}")
  expect_error(mcp_connect("true", elicitation = "yes"), "`elicitation` must be NULL or a function",
               class = "mcplite_error_argument")
  expect_error(mcp_connect("true", sampling = function() 1), "`sampling` must be NULL or a function",
               class = "mcplite_error_argument")
  add <- tool(function(x) x, name = "echo", description = "Echo.", arguments = list(x = type_number()))
  expect_error(mcp_connect(tools = add, elicitation = identity), "do not apply|apply to `command` and `url`",
               class = "mcplite_error_argument")
})

test_that("K12.4: a form's defaults fill what the answer leaves out", {
  schema <- list(type = "object", properties = list(
    name = list(type = "string", default = "Ann"),
    age = list(type = "integer", default = 30L),
    note = list(type = "string")
  ))
  expect_identical(elicitation_defaults(schema), list(name = "Ann", age = 30L))
  expect_identical(elicitation_defaults(list(type = "object")), structure(list(), names = character()))
  expect_identical(elicitation_defaults(NULL), structure(list(), names = character()))
})

for (protocol in c("2025-11-25", "2026-07-28")) {
  test_that(paste0("K12.2-K12.5 over stdio (", protocol, "): answers, declines, replies"), {
    asked <- list()
    conn <- asks_connect(
      protocol,
      elicitation = function(q) {
        asked[[length(asked) + 1L]] <<- q
        switch(q$message, "First?" = "decline", "Second?" = "cancel", list(why = "old", keep = 2L))
      },
      sampling = function(q) list(text = paste0("short (", q$system_prompt, ", ", q$max_tokens, ")"), model = "m1")
    )
    expect_identical(first_text(mcp_call(conn, "confirm", list(n = 5))), "Deleting 3 files (old)")
    expect_identical(asked[[1]]$message, "Delete 5 files?")
    expect_identical(asked[[1]]$server, "Rscript")
    expect_identical(names(asked[[1]]$schema$properties), c("keep", "why"))
    expect_identical(first_text(mcp_call(conn, "summarise", list(text = "hello"))),
                     "Summary (m1, endTurn): short (Be brief., 50)")
    # two questions in a row: each answered, each as the function says
    expect_identical(first_text(mcp_call(conn, "twice")), "decline cancel")
    # the connection goes on as before
    expect_identical(first_text(mcp_call(conn, "quick")), "quick")
  })

  test_that(paste0("K12.6 (", protocol, "): a function that fails or answers nonsense ends the call, not the connection"), {
    mode <- "error"
    conn <- asks_connect(protocol, elicitation = function(q) {
      if (mode == "error") stop("no user here")
      42
    })
    expect_error(mcp_call(conn, "confirm", list(n = 1)), "no user here")
    mode <- "nonsense"
    err <- expect_error(mcp_call(conn, "confirm", list(n = 1)), class = "mcplite_error_ask_answer")
    expect_match(conditionMessage(err), "must return a named list")
    expect_s3_class(err, "mcplite_error_client")
    expect_identical(first_text(mcp_call(conn, "quick")), "quick")
  })

  test_that(paste0("K12.1 (", protocol, "): without a function the server is told it cannot ask"), {
    conn <- asks_connect(protocol, sampling = function(q) "yes")
    expect_error(mcp_call(conn, "confirm", list(n = 1)), "did not declare the `elicitation` capability",
                 class = "mcplite_error_tool")
    expect_match(first_text(mcp_call(conn, "summarise", list(text = "x"))), "yes")
  })
}

test_that("K12.2, K12.3 over HTTP: legacy sessions and 2026-07-28 retries", {
  srv <- start_http_server(readLines(client_server_script("asks.R")), env = c(MCPLITE_TRANSPORT = "http"))
  for (protocol in c("2025-11-25", "2026-07-28")) {
    conn <- mcp_connect(url = srv$url, protocol = protocol, timeout = 30,
                        elicitation = function(q) list(why = "large"),
                        sampling = function(q) "fine")
    expect_identical(first_text(mcp_call(conn, "confirm", list(n = 4))), "Deleting 4 files (large)")
    expect_match(first_text(mcp_call(conn, "summarise", list(text = "x"))), "fine$")
    expect_identical(mcp_server_info(conn)$protocol_version, protocol)
    mcp_close(conn)
  }
})

test_that("K12, G3 behind nginx: three replicas with two workers each, questions and log messages, both eras", {
  # A legacy session's questions and answers stay on the replica that owns
  # it; a 2026-07-28 call runs again with its answers on whichever replica
  # nginx picks, which accepts the requestState another one made because
  # they share MCPLITE_STATE_KEY.
  nx <- start_nginx_replicas(readLines(client_server_script("asks.R")), env = c(
    MCPLITE_TRANSPORT = "http", MCPLITE_PORT = "0", MCPLITE_WORKERS = "2",
    MCPLITE_STATE_KEY = "shared-by-the-three-replicas-0123456789"
  ))
  for (protocol in c("2025-11-25", "2026-07-28")) {
    conn <- mcp_connect(url = nx$url, protocol = protocol, timeout = 30, log_level = "info",
                        elicitation = function(q) list(why = "large"), sampling = function(q) "fine")
    for (n in 1:6) {
      expect_identical(first_text(mcp_call(conn, "confirm", list(n = n))), sprintf("Deleting %d files (large)", n))
    }
    expect_match(first_text(mcp_call(conn, "summarise", list(text = "x"))), "fine$")
    logs <- character()
    res <- withCallingHandlers(mcp_call(conn, "twice"), mcplite_server_log = function(m) {
      logs <<- c(logs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
    expect_identical(first_text(res), "accept accept")
    expect_true(any(grepl("before the questions", logs)), info = paste(protocol, logs))
    mcp_close(conn)
  }
})

test_that("K12.2, K12.4: what goes back over the wire (legacy stdio)", {
  out <- tempfile()
  body <- paste(
    "read call",
    paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"elicitation/create\",\"params\":{",
           "\"message\":\"Who?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{",
           "\"name\":{\"type\":\"string\",\"default\":\"Ann\"},\"age\":{\"type\":\"integer\",\"default\":30},",
           "\"score\":{\"type\":\"number\",\"default\":9.5},\"ok\":{\"type\":\"boolean\",\"default\":true},",
           "\"tag\":{\"type\":\"string\"}}}}}'"),
    paste0("read answer; printf '%s\\n' \"$answer\" > '", out, "'"),
    paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":\"q2\",\"method\":\"sampling/createMessage\",\"params\":{",
           "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Hi\"}}],\"maxTokens\":5}}'"),
    paste0("read reply; printf '%s\\n' \"$reply\" >> '", out, "'"),
    "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}'",
    "read rest",
    sep = "\n"
  )
  conn <- sh_connect(body,
                     elicitation = function(q) list(name = "Bo", tag = "x"),
                     sampling = function(q) q$messages[[1]]$content$text)
  expect_identical(first_text(mcp_call(conn, "t")), "done")
  mcp_close(conn)
  lines <- lapply(readLines(out), jsonlite::fromJSON, simplifyVector = FALSE)
  expect_identical(lines[[1]], list(jsonrpc = "2.0", id = "q1", result = list(
    action = "accept", content = list(name = "Bo", age = 30L, score = 9.5, ok = TRUE, tag = "x")
  )))
  expect_identical(lines[[2]], list(jsonrpc = "2.0", id = "q2", result = list(
    role = "assistant", content = list(type = "text", text = "Hi"), model = "r-function", stopReason = "endTurn"
  )))
})

test_that("K12.3: a 2026-07-28 call is sent again with the answers and the server's state", {
  out <- tempfile()
  # The probe (1) is answered as a modern server; the call (2) comes back
  # input_required; the retry (3) is recorded and answered.
  body <- paste(
    "read probe",
    paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",",
           "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}}}}'"),
    "read call",
    paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"input_required\",",
           "\"inputRequests\":{\"who\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Who?\",",
           "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",",
           "\"default\":\"Ann\"}}}}}},\"requestState\":\"opaque-1\"}}'"),
    paste0("read retry; printf '%s\\n' \"$retry\" > '", out, "'"),
    "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}'",
    "read rest",
    sep = "\n"
  )
  conn <- mcp_connect("/bin/sh", c("-c", body), protocol = "2026-07-28", name = "sh",
                      elicitation = function(q) list())
  expect_identical(first_text(mcp_call(conn, "t")), "done")
  mcp_close(conn)
  retry <- jsonlite::fromJSON(readLines(out), simplifyVector = FALSE)
  expect_identical(retry$id, 3L)
  expect_identical(retry$params$name, "t")
  expect_identical(retry$params$requestState, "opaque-1")
  expect_identical(retry$params$inputResponses, list(who = list(action = "accept", content = list(name = "Ann"))))
  expect_identical(retry$params[["_meta"]][["io.modelcontextprotocol/clientCapabilities"]],
                   list(elicitation = list(form = setNames(list(), character()))))
})

test_that("K12.3: a server that never stops asking is stopped", {
  line <- paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"resultType\":\"input_required\",",
                 "\"requestState\":\"again\"}}'")
  rounds <- vapply(2:40, function(i) paste("read call", sprintf(line, i), sep = "\n"), character(1))
  body <- paste(c(
    "read probe",
    paste0("echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",",
           "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}}}}'"),
    rounds, "read rest"), collapse = "\n")
  conn <- mcp_connect("/bin/sh", c("-c", body), protocol = "2026-07-28", name = "sh",
                      elicitation = function(q) list())
  err <- expect_error(mcp_call(conn, "t"), class = "mcplite_error_client")
  expect_match(conditionMessage(err), "asked for more input 16 times")
  mcp_close(conn)
})
