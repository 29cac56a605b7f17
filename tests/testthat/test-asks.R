# RULES section 18 (issue 45 item 2): questions from a running tool. The
# questions themselves are answered by real clients in
# tests/clients/python/test_asks.py and tests/clients/node/test/asks.test.mjs
# (stdio and HTTP) and by the conformance suite; here: what R checks, and
# the answer when there is nobody to ask.

test_that("A1.4: outside a served call there is nobody to ask", {
  err <- expect_error(mcp_elicit("Proceed?"), class = "mcplite_error_ask")
  expect_match(conditionMessage(err), "no tool call of a server is running here")
  expect_identical(conditionCall(err)[[1]], quote(mcp_elicit))
  expect_error(mcp_sample("Hello"), "Cannot ask the client", class = "mcplite_error_ask")
})

test_that("A1.4: a tool run through an in-process handler fails with a tool error that says why", {
  asker <- tool(function() mcp_elicit("Proceed?")$action, name = "asker", description = "Asks.")
  h <- mcp_handler(list(asker))
  init <- list(jsonrpc = "2.0", id = 0, method = "initialize", params = list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = setNames(list(), character())),
    clientInfo = list(name = "t", version = "1")))
  mcp_handle(h, init)
  r <- jsonlite::fromJSON(mcp_handle(h, list(jsonrpc = "2.0", id = 1, method = "tools/call",
                                             params = list(name = "asker"))), simplifyVector = FALSE)
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "Cannot ask the client")
})

test_that("A1.1: the form is flat and the arguments are checked", {
  expect_error(mcp_elicit(""), class = "mcplite_error_argument")
  expect_error(mcp_elicit("x", type_string()), "`schema` must be a `type_object()`", fixed = TRUE,
               class = "mcplite_error_argument")
  expect_error(mcp_elicit("x", type_object(inner = type_object(a = type_string()))), "forms are flat",
               class = "mcplite_error_argument")
  expect_error(mcp_elicit("x", type_object(a = type_array(type_string()))), "forms are flat",
               class = "mcplite_error_argument")
  expect_error(mcp_elicit("x", timeout = 0), class = "mcplite_error_argument")
  expect_error(mcp_sample(), "`messages` is required", class = "mcplite_error_argument")
  expect_error(mcp_sample("x", max_tokens = 0), class = "mcplite_error_argument")
  expect_error(mcp_sample("x", temperature = 3), class = "mcplite_error_argument")
  expect_error(mcp_sample(content_resource("x://a", text = "t")), "text, image and audio blocks",
               class = "mcplite_error_argument")
  # What is sent: the schema without additionalProperties, enums and
  # multiple choices kept, fields not required stay optional.
  s <- elicit_schema(type_object(
    n = type_integer("How many."),
    pick = type_array(type_enum(c("a", "b"))),
    why = type_string(required = FALSE)
  ))
  expect_identical(jsonlite::fromJSON(fixed_json(s), simplifyVector = FALSE), list(
    type = "object",
    properties = list(n = list(type = "integer", description = "How many."),
                      pick = list(type = "array", items = list(type = "string", enum = list("a", "b"))),
                      why = list(type = "string")),
    required = list("n", "pick")
  ))
  expect_identical(fixed_json(elicit_schema(NULL)), '{"type":"object","properties":{}}')
})
