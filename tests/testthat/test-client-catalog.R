# RULES K11 (issue 45 item 6): a client reads a server's resources and
# prompts, in memory and over stdio, in both eras.

codebook <- resource("docs://codebook", "mpg: miles per gallon", description = "Columns.", title = "Codebook")
logo <- resource("img://logo", as.raw(c(0x89, 0x50, 0x4e, 0x47)), mime_type = "image/png")
about <- resource_template("help://{topic}", "See ?{{topic}}", name = "help")
review <- prompt_template("review", "Review a model.", "Review {{model}} for {{who}}.",
  arguments = list(model = type_string("The model."), who = type_string(required = FALSE)))
echo <- tool(function(x) x, name = "echo", description = "Echo.", arguments = list(x = type_string()))

check_catalog <- function(client) {
  r <- mcp_list_resources(client)
  expect_identical(names(r), c("docs://codebook", "img://logo"))
  expect_identical(r[["docs://codebook"]], list(uri = "docs://codebook", name = "codebook", title = "Codebook",
                                                description = "Columns.", mime_type = "text/plain", size = 21L))
  t <- mcp_list_resource_templates(client)
  expect_identical(names(t), "help://{topic}")
  expect_identical(t[[1]]$name, "help")
  expect_identical(mcp_read_resource(client, "docs://codebook"),
                   list(list(uri = "docs://codebook", mime_type = "text/plain", text = "mpg: miles per gallon")))
  expect_identical(mcp_read_resource(client, "img://logo")[[1]]$blob, as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  expect_identical(mcp_read_resource(client, "help://lm")[[1]]$text, "See ?lm")
  err <- expect_error(mcp_read_resource(client, "docs://nope"), class = "mcplite_error_rpc")
  expect_match(conditionMessage(err), "Resource not found")
  p <- mcp_list_prompts(client)
  expect_identical(names(p), "review")
  expect_identical(vapply(p$review$arguments, function(a) a$required, TRUE), c(TRUE, FALSE))
  got <- mcp_get_prompt(client, "review", list(model = "fit"))
  expect_identical(got$messages[[1]], list(role = "user", content = list(type = "text", text = "Review fit for .")))
  expect_error(mcp_get_prompt(client, "review"), class = "mcplite_error_rpc")
}

test_that("K11: resources and prompts in memory, in both eras", {
  for (protocol in c("2025-11-25", "2026-07-28")) {
    client <- mcp_connect(tools = mcp_handler(list(echo), resources = list(codebook, logo, about), prompts = review),
                          protocol = protocol)
    check_catalog(client)
    mcp_close(client)
  }
})

test_that("K11: a server without resources answers Method not found", {
  client <- mcp_connect(tools = mcp_handler(list(echo)))
  on.exit(mcp_close(client))
  expect_error(mcp_list_resources(client), "Method not found", class = "mcplite_error_rpc")
  expect_error(mcp_list_prompts(client), class = "mcplite_error_rpc")
})

test_that("K11: the arguments are checked", {
  client <- mcp_connect(tools = mcp_handler(list(echo), prompts = review))
  on.exit(mcp_close(client))
  expect_error(mcp_read_resource(client, ""), class = "mcplite_error_argument")
  expect_error(mcp_get_prompt(client, "review", list(model = 1)), "named list of strings",
               class = "mcplite_error_argument")
  expect_error(mcp_get_prompt(client, "review", list("fit")), class = "mcplite_error_argument")
  expect_error(mcp_list_prompts(client, 1), class = "mcplite_error_argument")
  expect_error(mcp_list_prompts("nope"), class = "mcplite_error_argument")
})

test_that("K11: over stdio and HTTP, with Mcp-Name mirrored in 2026-07-28", {
  script <- client_server_script("conformance.R")
  client <- mcp_connect(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
                        env = c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)))
  on.exit(mcp_close(client), add = TRUE)
  expect_true("test://static-text" %in% names(mcp_list_resources(client)))
  expect_identical(mcp_read_resource(client, "test://template/7/data")[[1]]$mime_type, "application/json")
  expect_identical(mcp_get_prompt(client, "test_simple_prompt")$messages[[1]]$content$text,
                   "This is a simple prompt for testing.")
  srv <- start_http_server(readLines(script), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = "0"))
  for (protocol in c("2025-11-25", "2026-07-28")) {
    h <- mcp_connect(url = srv$url, protocol = protocol)
    expect_identical(mcp_read_resource(h, "test://static-binary")[[1]]$mime_type, "image/png")
    expect_identical(mcp_get_prompt(h, "test_prompt_with_arguments", list(arg1 = "a", arg2 = "b"))$messages[[1]]$content$text,
                     "Prompt with arguments: arg1='a', arg2='b'")
    mcp_close(h)
  }
})
