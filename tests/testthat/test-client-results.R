# What the MCP client makes of a server's answers (R/client-results.R):
# listed tools in R spellings, results of every content type, tool errors
# and JSON-RPC errors as distinct classed conditions.

skip_on_cran()
skip_if_not_installed("withr")

test_that("tools are listed with R spellings and called with the package's encoder", {
  server <- mcp_connect_script(client_server_script())
  on.exit(mcp_close(server))
  tools <- mcp_list_tools(server)
  expect_true(all(c("echo", "add", "stats", "search") %in% names(tools)))
  echo <- tools$echo
  expect_identical(echo$description, "Return the text unchanged.")
  expect_identical(echo$annotations, list(title = "Echo", read_only_hint = TRUE, idempotent_hint = TRUE))
  expect_identical(echo$input_schema$required, list("text"))
  expect_identical(tools$stats$output_schema$properties$n, list(type = "integer", description = "Count."))
  expect_identical(tools$search$input_schema$`$defs`$options$type, "object")

  # structured content by the JSON -> R rules of tool arguments
  res <- mcp_call(server, "stats", list(values = c(1, 2, 4)))
  expect_s3_class(res, "mcplite_tool_result")
  expect_false(res$is_error)
  expect_identical(res$structured_content$n, 3L)
  expect_equal(res$structured_content$mean, 2.3333)
  # K6.1: the server's identity is the connection's, not the result's.
  expect_false("io.modelcontextprotocol/serverInfo" %in% names(res$meta))
  expect_identical(mcp_server_info(server)$server$name, "mcplite")
  expect_identical(mcp_call(server, "series", list(n = 3L))$structured_content, list(1L, 2L, 3L))
  expect_identical(mcp_call(server, "greeting")$structured_content, "hello")
  # payload options: I() keeps a one-element array, auto_unbox makes scalars
  one <- mcp_call(server, "stats", list(values = I(5)))$structured_content
  expect_identical(one$n, 1L)
  # sd is nullable in the server's output schema: null for one value
  expect_true("sd" %in% names(one) && is.null(one$sd))
  expect_identical(
    mcp_call(server, "search", list(query = "q", limit = 3L))$content[[1]]$text,
    "q-1\nq-2\nq-3"
  )
  expect_identical(
    mcp_call(server, "search", list(query = "q", options = list(upper = TRUE)))$content[[1]]$text,
    "Q-1\nQ-2"
  )
  expect_identical(mcp_call(server, "echo", list(text = "caf\u00e9 \u2603"))$content[[1]]$text, "caf\u00e9 \u2603")
})

test_that("every content type becomes the package's content objects", {
  server <- mcp_connect_script(client_server_script())
  on.exit(mcp_close(server))
  res <- mcp_call(server, "all_content")
  types <- vapply(res$content, function(b) b$type, character(1))
  expect_identical(types, c("text", "image", "audio", "resource_link", "resource", "resource"))
  expect_identical(class(res$content[[1]]), c("mcplite_content_text", "mcplite_content"))
  expect_identical(res$content[[1]]$annotations,
                   list(audience = I("user"), priority = 0.5, last_modified = "2025-01-01T00:00:00Z"))
  expect_identical(res$content[[1]]$meta, list(source = "test"))
  expect_identical(res$content[[2]]$mime_type, "image/png")
  expect_identical(res$content[[4]]$size, 42L)
  expect_identical(res$content[[4]]$title, "Report")
  expect_identical(res$content[[5]]$text, "Some notes.")
  expect_identical(res$content[[6]]$blob, "AAEC")
  expect_identical(res$content[[6]]$meta, list(origin = "memory"))
  expect_identical(res$structured_content, list(count = 6L))
  expect_identical(res$meta$request_kind, "demo")
  # the result is a valid tool result: it can be returned by a tool as is
  expect_s3_class(mcplite:::revalidate_tool_result(res), "mcplite_tool_result")
})

test_that("tool errors and JSON-RPC errors are distinct classed conditions", {
  server <- mcp_connect_script(client_server_script())
  on.exit(mcp_close(server))
  err <- expect_client_error(mcp_call(server, "fail", list(message = "{\"a\": 1}")), "mcplite_error_tool")
  expect_identical(conditionMessage(err), "Tool `fail` on MCP server `everything.R` reported an error: {\"a\": 1}")
  expect_identical(err$text, "{\"a\": 1}")
  expect_true(err$result$is_error)
  expect_identical(err$tool, "fail")
  err <- expect_client_error(mcp_call(server, "flagged_error"), "mcplite_error_tool")
  expect_identical(err$text, "The file does not exist.")

  err <- expect_client_error(mcp_call(server, "no_such_tool"), "mcplite_error_rpc")
  expect_identical(err$code, -32602L)
  expect_identical(err$error_message, "Invalid params: unknown tool")
  expect_match(conditionMessage(err), "everything.R", fixed = TRUE)
  expect_false(inherits(err, "mcplite_error_tool"))
  # on 2024-11-05 audio and resource links are a tool error
  old <- mcp_connect_script(client_server_script(), protocol = "2024-11-05")
  on.exit(mcp_close(old), add = TRUE)
  err <- expect_client_error(mcp_call(old, "all_content"), "mcplite_error_tool")
  expect_match(err$text, "2024-11-05")
  # the connection is still usable after errors
  expect_identical(mcp_call(server, "echo", list(text = "ok"))$content[[1]]$text, "ok")
})

test_that("K6.3: simplify = TRUE gives rows as a data frame and arrays of values as vectors", {
  table <- tool(function(n) {
    tool_result(structured_content = list(
      rows = data.frame(id = seq_len(n), name = letters[seq_len(n)], score = c(1.5, NA, 3)[seq_len(n)]),
      tags = c("a", "b"), nested = list(list(a = 1, b = list(2)), list(a = 2, b = list(3))), mixed = list(1, "x")
    ))
  }, "A table.", name = "table", arguments = list(n = type_integer()))
  mem <- local_mcp_connect(tools = table)
  raw <- mcp_call(mem, "table", list(n = 3L))$structured_content
  expect_true(is.list(raw$rows) && is.null(names(raw$rows)))
  res <- mcp_call(mem, "table", list(n = 3L), simplify = TRUE)$structured_content
  expect_identical(res$rows, data.frame(id = 1:3, name = c("a", "b", "c"), score = c(1.5, NA, 3)))
  expect_identical(res$tags, c("a", "b"))
  # Rows with nested values are not a table (their arrays are simplified
  # inside), and values of mixed types are left as they are.
  expect_identical(res$nested, list(list(a = 1L, b = 2L), list(a = 2L, b = 3L)))
  expect_identical(res$mixed, list(1L, "x"))
  expect_error(mcp_call(mem, "table", list(n = 1L), simplify = NA), "`simplify`", class = "mcplite_error")
})
