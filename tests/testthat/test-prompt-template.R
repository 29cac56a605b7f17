# RULES section 16 (issue 45 item 4): prompts, templates the engine fills.

review <- prompt_template(
  "review_model",
  "Review a fitted model.",
  messages = list(
    "Review `{{model}}` for {{audience}}; keep {braces}.",
    prompt_message("I will check {{model}}.", role = "assistant"),
    content_resource("file:///{{model}}.txt", text = "{{model}} summary", mime_type = "text/plain")
  ),
  arguments = list(
    model = type_string("Name of the model object."),
    audience = type_enum(c("the board", "the team", "The Public"), "Who reads the review.", required = FALSE)
  )
)
echo <- tool(function(x) x, name = "echo", description = "Echo.", arguments = list(x = type_string()))

rpc <- function(h, method, params = NULL, id = 1) {
  msg <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(params)) msg$params <- params
  jsonlite::fromJSON(mcp_handle(h, jsonlite::toJSON(msg, auto_unbox = TRUE)), simplifyVector = FALSE)
}

legacy_handler <- function(...) {
  h <- mcp_handler(list(echo), ...)
  init <- rpc(h, "initialize", list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
                                    clientInfo = list(name = "t", version = "1")), id = 0)
  list(h = h, init = init)
}

test_that("Q1: prompts are listed with their arguments, and declared", {
  s <- legacy_handler(prompts = list(review))
  expect_identical(s$init$result$capabilities$prompts, list(listChanged = FALSE))
  expect_identical(s$init$result$capabilities$completions, setNames(list(), character()))
  l <- rpc(s$h, "prompts/list")$result$prompts
  expect_identical(l, list(list(
    name = "review_model", description = "Review a fitted model.",
    arguments = list(
      list(name = "model", description = "Name of the model object.", required = TRUE),
      list(name = "audience", description = "Who reads the review.", required = FALSE)
    )
  )))
  # Without prompts: no capability, and the methods are unknown as before.
  s <- legacy_handler()
  expect_null(s$init$result$capabilities$prompts)
  expect_identical(rpc(s$h, "prompts/list")$error$code, -32601L)
})

test_that("Q2: prompts/get fills the declared placeholders, in every message", {
  s <- legacy_handler(prompts = review)
  r <- rpc(s$h, "prompts/get", list(name = "review_model", arguments = list(model = "fit", audience = "the board")))
  msgs <- r$result$messages
  expect_identical(r$result$description, "Review a fitted model.")
  expect_identical(vapply(msgs, function(m) m$role, ""), c("user", "assistant", "user"))
  expect_identical(msgs[[1]]$content, list(type = "text", text = "Review `fit` for the board; keep {braces}."))
  expect_identical(msgs[[2]]$content$text, "I will check fit.")
  expect_identical(msgs[[3]]$content$resource,
                   list(uri = "file:///fit.txt", mimeType = "text/plain", text = "fit summary"))
  # An optional argument left out is empty; a value is text, never filled
  # again nor run (RULES Q2.2).
  r <- rpc(s$h, "prompts/get", list(name = "review_model", arguments = list(model = "{{audience}}`); system('x')")))
  expect_identical(r$result$messages[[1]]$content$text, "Review `{{audience}}`); system('x')` for ; keep {braces}.")
})

test_that("Q2: prompts/get refuses what it cannot fill, with -32602", {
  s <- legacy_handler(prompts = review)
  e <- rpc(s$h, "prompts/get", list(name = "review_model"))$error
  expect_identical(e$code, -32602L)
  expect_identical(e$data, list(missing = "model"))
  expect_identical(rpc(s$h, "prompts/get", list(name = "nope"))$error$code, -32602L)
  expect_identical(rpc(s$h, "prompts/get", list(name = "review_model", arguments = list(model = 1)))$error$code,
                   -32602L)
})

test_that("Q3: completion offers an argument's values that start with what was typed", {
  s <- legacy_handler(prompts = review)
  complete <- function(arg, value, name = "review_model") {
    rpc(s$h, "completion/complete", list(ref = list(type = "ref/prompt", name = name),
                                         argument = list(name = arg, value = value)))
  }
  expect_identical(complete("audience", "the")$result$completion,
                   list(values = list("the board", "the team", "The Public"), total = 3L, hasMore = FALSE))
  expect_identical(complete("audience", "THE T")$result$completion$values, list("the team"))
  expect_identical(complete("model", "f")$result$completion$values, list())
  expect_identical(complete("model", "f", name = "nope")$error$code, -32602L)
  # Suggestions do not restrict what may be given.
  r <- rpc(s$h, "prompts/get", list(name = "review_model", arguments = list(model = "m", audience = "my cat")))
  expect_match(r$result$messages[[1]]$content$text, "for my cat;", fixed = TRUE)
})

test_that("Q1: a 2026-07-28 client lists and gets prompts too", {
  h <- mcp_handler(list(echo), prompts = list(review))
  meta <- list("io.modelcontextprotocol/protocolVersion" = "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities" = setNames(list(), character()))
  d <- rpc(h, "server/discover", list("_meta" = meta))$result
  expect_identical(d$capabilities$prompts, list(listChanged = FALSE))
  l <- rpc(h, "prompts/list", list("_meta" = meta))$result
  expect_identical(l$resultType, "complete")
  expect_identical(l$prompts[[1]]$name, "review_model")
  g <- rpc(h, "prompts/get", list("_meta" = meta, name = "review_model", arguments = list(model = "m")))$result
  expect_identical(g$resultType, "complete")
  expect_identical(g$messages[[2]]$content$text, "I will check m.")
})

test_that("prompt_template() and prompt_message() check their arguments", {
  expect_error(prompt_template("a b", "d", "m"), "`name` must be 1 to 64", class = "mcplite_error_argument")
  expect_error(prompt_template("a", "d", list()), "`messages` must be", class = "mcplite_error_argument")
  expect_error(prompt_template("a", "d", list(1)), "`messages[[1]]` must be a string", fixed = TRUE,
               class = "mcplite_error_argument")
  expect_error(prompt_template("a", "d", "m", arguments = list(n = type_integer())), "`arguments$n` must be",
               fixed = TRUE, class = "mcplite_error_argument")
  expect_error(prompt_template("a", "d", "m", arguments = list(n = type_enum(1:3))), "`arguments$n` must be",
               fixed = TRUE, class = "mcplite_error_argument")
  expect_error(prompt_message("m", role = "system"), "`role` must be one of", class = "mcplite_error_argument")
  expect_error(mcp_handler(list(echo), prompts = list(review, review)), "unique names",
               class = "mcplite_error_argument")
  expect_error(mcp_handler(list(echo), prompts = "x"), "`prompts` must be", class = "mcplite_error_argument")
  expect_output(print(review), "review_model: Review a fitted model.")
  expect_output(print(review), "audience (optional)", fixed = TRUE)
})
