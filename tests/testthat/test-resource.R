# RULES section 17 (issue 45 item 3): resources and resource templates, held
# and answered by the engine.

echo <- tool(function(x) x, name = "echo", description = "Echo.", arguments = list(x = type_string()))
png <- as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))

rpc <- function(h, method, params = NULL, id = 1, meta = NULL) {
  msg <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(meta)) {
    params <- c(params, list(`_meta` = meta))
  }
  if (!is.null(params)) msg$params <- params
  jsonlite::fromJSON(mcp_handle(h, jsonlite::toJSON(msg, auto_unbox = TRUE)), simplifyVector = FALSE)
}

modern <- list(`io.modelcontextprotocol/protocolVersion` = "2026-07-28",
               `io.modelcontextprotocol/clientCapabilities` = setNames(list(), character()))

legacy_handler <- function(...) {
  h <- mcp_handler(list(echo), ...)
  init <- rpc(h, "initialize", list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
                                    clientInfo = list(name = "t", version = "1")), id = 0)
  list(h = h, init = init)
}

resources <- list(
  resource("docs://codebook", "species: the species\nisland: the island", description = "Columns.",
           title = "Codebook"),
  resource("img://logo", png, mime_type = "image/png"),
  resource("data://cars", data.frame(speed = c(4, 7), name = c("a", "b, c"))),
  resource("data://settings", list(alpha = 0.05, methods = c("lm", "glm"))),
  resource_template("help://{package}/{+topic}", "See ?{{package}}::{{topic}}; {{other}} stays.",
                    name = "help", mime_type = "text/markdown",
                    arguments = list(package = type_enum(c("stats", "utils", "Stats2"), "A package.")))
)

test_that("U1: resources and templates are listed and the capability declared", {
  s <- legacy_handler(resources = resources)
  caps <- s$init$result$capabilities
  expect_identical(caps$resources, list(subscribe = TRUE, listChanged = FALSE))
  expect_identical(caps$completions, setNames(list(), character()))
  expect_null(caps$prompts)
  l <- rpc(s$h, "resources/list")$result$resources
  expect_identical(vapply(l, function(r) r$uri, ""),
                   c("docs://codebook", "img://logo", "data://cars", "data://settings"))
  expect_identical(l[[1]], list(uri = "docs://codebook", name = "codebook", title = "Codebook",
                                description = "Columns.", mimeType = "text/plain", size = 39L))
  expect_identical(l[[2]][c("mimeType", "size")], list(mimeType = "image/png", size = 8L))
  expect_identical(l[[3]]$mimeType, "text/csv")
  expect_identical(l[[4]]$mimeType, "application/json")
  t <- rpc(s$h, "resources/templates/list")$result$resourceTemplates
  expect_identical(t, list(list(uriTemplate = "help://{package}/{+topic}", name = "help",
                                mimeType = "text/markdown")))
  # Without resources: no capability, and the methods are unknown as before.
  s <- legacy_handler()
  expect_null(s$init$result$capabilities$resources)
  expect_identical(rpc(s$h, "resources/list")$error$code, -32601L)
  expect_identical(rpc(s$h, "resources/read", list(uri = "docs://codebook"))$error$code, -32601L)
})

test_that("U2: reading gives the content as text or base64, and templates are filled", {
  s <- legacy_handler(resources = resources)
  read <- function(uri) rpc(s$h, "resources/read", list(uri = uri))
  expect_identical(read("docs://codebook")$result$contents, list(list(
    uri = "docs://codebook", mimeType = "text/plain", text = "species: the species\nisland: the island"
  )))
  blob <- read("img://logo")$result$contents[[1]]
  expect_identical(jsonlite::base64_dec(blob$blob), png)
  expect_null(blob$text)
  csv <- read("data://cars")$result$contents[[1]]$text
  expect_identical(utils::read.csv(text = csv), data.frame(speed = c(4L, 7L), name = c("a", "b, c")))
  expect_identical(jsonlite::fromJSON(read("data://settings")$result$contents[[1]]$text),
                   list(alpha = 0.05, methods = c("lm", "glm")))
  # {+topic} takes slashes; percent escapes are decoded; an undeclared
  # placeholder stays; the URI is given back as asked.
  r <- read("help://stats/lm%20fit/x")$result$contents[[1]]
  expect_identical(r$uri, "help://stats/lm%20fit/x")
  expect_identical(r$text, "See ?stats::lm fit/x; {{other}} stays.")
  expect_identical(r$mimeType, "text/markdown")
  # A value is text: it is never filled again, and never run.
  expect_identical(read("help://%7B%7Bpackage%7D%7D/system(%22id%22)")$result$contents[[1]]$text,
                   "See ?{{package}}::system(\"id\"); {{other}} stays.")
})

test_that("U2.3: a URI not found is an error naming it, per era", {
  s <- legacy_handler(resources = resources)
  e <- rpc(s$h, "resources/read", list(uri = "docs://nope"))$error
  expect_identical(e, list(code = -32002L, message = "Resource not found", data = list(uri = "docs://nope")))
  # {package} takes no slash; an empty value matches nothing.
  expect_identical(rpc(s$h, "resources/read", list(uri = "help://a/b/c"))$result$contents[[1]]$text,
                   "See ?a::b/c; {{other}} stays.")
  expect_identical(rpc(s$h, "resources/read", list(uri = "help:///x"))$error$code, -32002L)
  expect_identical(rpc(s$h, "resources/read", list(uri = 1))$error$code, -32602L)
  m <- rpc(s$h, "resources/read", list(uri = "docs://nope"), meta = modern)$error
  expect_identical(m$code, -32602L)
  expect_identical(m$data, list(uri = "docs://nope"))
  expect_identical(rpc(s$h, "resources/list", list(cursor = "next"))$error$code, -32602L)
})

test_that("U1, U2: the 2026-07-28 era lists and reads with its result fields", {
  s <- legacy_handler(resources = resources)
  d <- rpc(s$h, "server/discover", meta = modern)$result
  expect_identical(d$capabilities$resources, list(subscribe = TRUE, listChanged = FALSE))
  r <- rpc(s$h, "resources/read", list(uri = "docs://codebook"), meta = modern)$result
  expect_identical(r$resultType, "complete")
  expect_identical(r$cacheScope, "public")
  expect_identical(r$`_meta`$`io.modelcontextprotocol/serverInfo`$name, "mcplite")
  l <- rpc(s$h, "resources/templates/list", meta = modern)$result
  expect_identical(l$resourceTemplates[[1]]$name, "help")
  expect_identical(rpc(s$h, "resources/subscribe", list(uri = "docs://codebook"), meta = modern)$error$code,
                   -32601L)
})

test_that("U3: legacy sessions subscribe and unsubscribe to what can be read", {
  s <- legacy_handler(resources = resources)
  expect_identical(rpc(s$h, "resources/subscribe", list(uri = "docs://codebook"))$result,
                   setNames(list(), character()))
  expect_identical(rpc(s$h, "resources/unsubscribe", list(uri = "help://stats/lm"))$result,
                   setNames(list(), character()))
  expect_identical(rpc(s$h, "resources/subscribe", list(uri = "docs://other"))$error$code, -32002L)
})

test_that("U4: template variables complete from their type_enum()", {
  s <- legacy_handler(resources = resources)
  complete <- function(arg, value, uri = "help://{package}/{+topic}") {
    rpc(s$h, "completion/complete", list(ref = list(type = "ref/resource", uri = uri),
                                         argument = list(name = arg, value = value)))
  }
  expect_identical(complete("package", "st")$result$completion,
                   list(values = list("stats", "Stats2"), total = 2L, hasMore = FALSE))
  expect_identical(complete("topic", "")$result$completion$total, 0L)
  expect_identical(complete("package", "", uri = "help://stats/lm")$error$code, -32602L)
})

test_that("resource() and resource_template() check their arguments", {
  expect_error(resource("no scheme", "x"), class = "mcplite_error_argument")
  expect_error(resource("noscheme", "x"), "must start with a scheme", class = "mcplite_error_argument")
  expect_error(resource("x://a"), "`content` is required", class = "mcplite_error_argument")
  expect_error(resource("x://a", function() 1), "not a function", class = "mcplite_error_argument")
  expect_error(resource("x://a", content_resource("x://b", text = "t")), class = "mcplite_error_argument")
  expect_error(resource("x://a", "t", mime_type = "text"), "MIME type", class = "mcplite_error_argument")
  expect_error(resource("x://a", NA_character_), "UTF-8 text", class = "mcplite_error_argument")
  expect_error(resource("x://a", "t", name = ""), class = "mcplite_error_argument")
  err <- expect_error(resource_template("x://{a}{b}", "t"), class = "mcplite_error_argument")
  expect_match(conditionMessage(err), "side by side")
  expect_identical(conditionCall(err)[[1]], quote(resource_template))
  expect_error(resource_template("x://fixed", "t"), "no `\\{name\\}` variable", class = "mcplite_error_argument")
  expect_error(resource_template("x://{a}", "t", arguments = list(b = type_string())), "not a variable",
               class = "mcplite_error_argument")
  expect_error(resource_template("x://{a}", "t", arguments = list(a = type_number())), "template variables",
               class = "mcplite_error_argument")
  expect_error(mcp_handler(list(echo), resources = list(resources[[1]], resources[[1]])), "unique URIs",
               class = "mcplite_error_argument")
  expect_error(mcp_handler(list(echo), resources = "docs://codebook"), class = "mcplite_error_argument")
  # Defaults: the name is the URI's last part; content blocks keep their type.
  r <- resource("file:///tmp/report.md/", content_text("# Report"), mime_type = "text/markdown")
  expect_identical(r$name, "report.md")
  expect_identical(r$mime_type, "text/markdown")
  expect_output(print(r), "file:///tmp/report.md/ \\(text/markdown, 8 bytes\\)")
  expect_output(print(resources[[5]]), "Variables: package, topic")
})
