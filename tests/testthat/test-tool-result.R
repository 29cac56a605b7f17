# RULES R4: tool_result(), the generated fallback (J4) and normalize_result().

local_default_payload_options <- function(env = parent.frame()) {
  withr::local_options(list(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  ), .local_envir = env)
}

test_that("a result has exactly the four documented fields (R4.3)", {
  local_default_payload_options()
  r <- tool_result(content_text("Done."))
  expect_identical(class(r), "mcplite_tool_result")
  expect_identical(names(r), c("content", "structured_content", "is_error", "meta"))
  expect_identical(r$content, list(content_text("Done.")))
  expect_null(r$structured_content)
  expect_false(r$is_error)
  expect_identical(r$meta, list())
})

test_that("explicit content is kept as is, without fallback (R4.2)", {
  local_default_payload_options()
  blocks <- list(content_text("Generated the plot."), content_image("base64-data", "image/png"))
  r <- tool_result(content = blocks)
  expect_identical(r$content, blocks)
  r <- tool_result(content = blocks, structured_content = list(a = 1))
  expect_identical(r$content, blocks)
  expect_identical(r$structured_content, list(a = 1))
  # names of a content list are dropped
  r <- tool_result(content = list(first = content_text("a")))
  expect_null(names(r$content))
})

test_that("a single fallback block is generated from structured content (J4.4)", {
  local_default_payload_options()
  fallback <- function(x) {
    r <- tool_result(structured_content = x)
    expect_length(r$content, 1L)
    expect_identical(class(r$content[[1]]), c("mcplite_content_text", "mcplite_content"))
    r$content[[1]]$text
  }
  expect_identical(fallback(list(ok = TRUE, count = 2L)), '{"ok":true,"count":2}')
  expect_identical(fallback(list()), "{}")
  expect_identical(fallback(list(ok = TRUE, values = list(1L, 2L))), '{"ok":true,"values":[1,2]}')
  expect_identical(fallback("hello"), '"hello"')
  expect_identical(fallback(1:2), "[1,2]")
  expect_identical(fallback(list(1, "a")), '[1,"a"]')
  expect_identical(fallback(list(items = list())), '{"items":[]}')
  expect_identical(fallback(list(a = NULL)), '{"a":null}')
  # JSON-looking strings and json objects stay strings (J4.3)
  expect_identical(fallback(list(j = '{"a":1}')), '{"j":"{\\"a\\":1}"}')
  expect_identical(
    fallback(list(j = jsonlite::toJSON(list(a = 1)))),
    '{"j":"{\\"a\\":[1]}"}'
  )
  # I() and unbox() keep their meaning
  expect_identical(fallback(list(a = I(1), b = jsonlite::unbox("x"))), '{"a":[1],"b":"x"}')
  # the stored value is the one supplied
  expect_identical(tool_result(structured_content = list())$structured_content, list())
})

test_that("the fallback follows the payload options at construction (R6)", {
  local_default_payload_options()
  withr::local_options(list(mcplite.json.auto_unbox = FALSE))
  expect_identical(tool_result(structured_content = list(n = 1L))$content[[1]]$text, '{"n":[1]}')
  withr::local_options(list(mcplite.json.auto_unbox = TRUE, mcplite.json.null = "list"))
  expect_identical(tool_result(structured_content = list(a = NULL))$content[[1]]$text, '{"a":{}}')
  withr::local_options(list(mcplite.json.null = NULL, mcplite.json.digits = 2))
  expect_identical(tool_result(structured_content = list(p = pi))$content[[1]]$text, '{"p":3.14}')
  withr::local_options(list(mcplite.json.digits = I(3)))
  expect_identical(tool_result(structured_content = list(p = 123.456))$content[[1]]$text, '{"p":123}')
})

test_that("invalid payload options are reported first (R4.2.1, R6.4)", {
  local_default_payload_options()
  withr::local_options(list(mcplite.json.na = "nope"))
  expect_field_error(tool_result(content = 1, structured_content = new.env()), "mcplite.json.na")
  withr::local_options(list(mcplite.json.na = NULL, mcplite.json.null = "none"))
  expect_field_error(tool_result(content_text("x")), "mcplite.json.null")
})

test_that("structured_content must be encodable, with a valid root (R4.2.2, J4)", {
  local_default_payload_options()
  err <- expect_field_error(tool_result(structured_content = new.env()), "structured_content")
  expect_match(conditionMessage(err), "environment")
  expect_field_error(tool_result(structured_content = list(a = 1, 2)), "structured_content")
  expect_field_error(tool_result(structured_content = list(a = 1, a = 2)), "structured_content")
  expect_field_error(
    tool_result(structured_content = structure(list(1, 2), names = c("a", NA))),
    "structured_content"
  )
  # its errors win over content, is_error and meta errors
  expect_field_error(
    tool_result(content = 1, structured_content = new.env(), is_error = NA, meta = 1),
    "structured_content"
  )
  # nested duplicated names follow jsonlite and are accepted
  expect_identical(
    tool_result(structured_content = list(a = list(b = 1, b = 2)))$content[[1]]$text,
    '{"a":{"b":1,"b.1":2}}'
  )
})

test_that("is_error must be TRUE or FALSE and comes before content (R4.2.4)", {
  local_default_payload_options()
  expect_true(tool_result(content_text("Oops."), is_error = TRUE)$is_error)
  for (bad in list(NA, "TRUE", 1, c(TRUE, FALSE), NULL)) {
    expect_field_error(tool_result(content_text("x"), is_error = bad), "is_error")
  }
  expect_field_error(tool_result(content = list(), is_error = NA), "is_error")
})

test_that("content must be a non-empty list of constructor blocks (R4.2.5)", {
  local_default_payload_options()
  expect_field_error(tool_result(), "content")
  expect_field_error(tool_result(content = list()), "content")
  expect_field_error(tool_result(content = list(), structured_content = list(a = 1)), "content")
  err <- expect_field_error(tool_result("Done."), "content")
  expect_match(conditionMessage(err), "content_text()", fixed = TRUE)
  expect_field_error(tool_result(list("Done.")), "content")
  expect_field_error(tool_result(list(type = "text", text = "raw")), "content")
  expect_field_error(tool_result(list(list(type = "text", text = "raw"))), "content")
  expect_field_error(tool_result(NULL), "content")
  forged <- structure(list(type = "text", text = 1, annotations = list(), meta = list()),
                      class = c("mcplite_content_text", "mcplite_content"))
  err <- expect_field_error(tool_result(list(content_text("ok"), forged)), "content")
  expect_match(conditionMessage(err), "`text`", fixed = TRUE)
  expect_match(conditionMessage(err), "Element 2", fixed = TRUE)
  # content comes before meta
  expect_field_error(tool_result(content = list(), meta = 1), "content")
})

test_that("meta follows the content meta rules (R4.2.6)", {
  local_default_payload_options()
  r <- tool_result(content_text("x"), meta = list(trace = "abc", n = NULL))
  expect_identical(r$meta, list(trace = "abc", n = NULL))
  expect_field_error(tool_result(content_text("x"), meta = list(1)), "meta")
  expect_field_error(tool_result(content_text("x"), meta = NULL), "meta")
  expect_field_error(tool_result(content_text("x"), meta = list(e = new.env())), "meta")
})

test_that("normalize_result() re-validates returned results (R4.4)", {
  local_default_payload_options()
  r <- tool_result(structured_content = list(a = 1))
  expect_identical(normalize_result(r), r)
  # the stored fallback is not regenerated
  withr::local_options(list(mcplite.json.auto_unbox = FALSE))
  expect_identical(normalize_result(r)$content[[1]]$text, '{"a":1}')
  withr::local_options(list(mcplite.json.auto_unbox = NULL))

  extra <- r
  extra$extra <- 1
  expect_error(normalize_result(extra), class = "mcplite_error")
  missing_field <- unclass(r)[c("content", "is_error", "meta")]
  class(missing_field) <- "mcplite_tool_result"
  expect_error(normalize_result(missing_field), class = "mcplite_error")

  bad <- r
  bad$content[[1]]$text <- NA_character_
  expect_field_error(normalize_result(bad), "content")
  bad <- r
  bad$content <- list()
  expect_field_error(normalize_result(bad), "content")
  bad <- r
  bad$is_error <- "no"
  expect_field_error(normalize_result(bad), "is_error")
  bad <- r
  bad$meta <- list(1)
  expect_field_error(normalize_result(bad), "meta")
  bad <- r
  bad["structured_content"] <- list(new.env())
  expect_field_error(normalize_result(bad), "structured_content")
  bad <- r
  bad$content[[1]]$annotations <- list(priority = 2)
  expect_field_error(normalize_result(bad), "annotations$priority")

  # options that became invalid are reported
  withr::local_options(list(mcplite.json.digits = -1))
  expect_field_error(normalize_result(r), "mcplite.json.digits")
})

test_that("a tool returning tool_result() is still directly callable", {
  local_default_payload_options()
  t <- tool(function(n) tool_result(structured_content = list(n = n)), "Echo.", name = "echo",
            arguments = list(n = type_integer()), output_schema = type_object(n = type_integer()))
  r <- t(3L)
  expect_s3_class(r, "mcplite_tool_result")
  expect_identical(r$content[[1]]$text, '{"n":3}')
})

test_that("tool results print their blocks and structured content", {
  local_default_payload_options()
  r <- tool_result(
    content = list(content_text("Done."), content_image("aGk=", "image/png")),
    structured_content = list(ok = TRUE),
    is_error = TRUE,
    meta = list(k = 1L)
  )
  out <- capture.output(print(r))
  expect_identical(out[1], "<mcplite tool result: error>")
  expect_identical(out[2], "content: 2 blocks")
  expect_identical(out[3], "  [1] text")
  expect_identical(out[4], "      Done.")
  expect_identical(out[5], "  [2] image (image/png, 4 base64 characters)")
  expect_identical(out[6], 'structured_content: {"ok":true}')
  expect_identical(out[7], "meta: k = 1")
  expect_output(print(tool_result(content_text("x"))), "<mcplite tool result>\ncontent: 1 block", fixed = TRUE)
  expect_identical(
    capture.output(print(tool_result(content_image("aGk=", "image/png")))),
    c("<mcplite tool result>", "content: 1 block", "  [1] image (image/png, 4 base64 characters)")
  )
})

test_that("returned results reach the wire through the server (R4.4)", {
  local_default_payload_options()
  good <- tool(
    function() {
      tool_result(
        list(content_text("hi", annotations = list(audience = "user", last_modified = "2025-01-01"))),
        structured_content = list(ok = TRUE),
        meta = list(m = 1L)
      )
    },
    "Good.", name = "good", output_schema = type_object(ok = type_boolean())
  )
  forged <- tool(
    function() {
      r <- tool_result(content_text("x"))
      r$content[[1]]$text <- 1
      r
    },
    "Forged.", name = "forged"
  )
  s <- mcp_handler(list(good, forged))
  mcp_handle(s, list(jsonrpc = "2.0", id = 1L, method = "initialize", params = list(
    protocolVersion = "2025-06-18", capabilities = structure(list(), names = character()),
    clientInfo = list(name = "test", version = "1")
  )))
  call <- function(id, name) {
    jsonlite::parse_json(mcp_handle(s, list(
      jsonrpc = "2.0", id = id, method = "tools/call",
      params = list(name = name, arguments = structure(list(), names = character()))
    )))$result
  }
  res <- call(2L, "good")
  expect_identical(res$content[[1]]$text, "hi")
  expect_identical(res$content[[1]]$annotations$audience, list("user"))
  expect_identical(res$content[[1]]$annotations$lastModified, "2025-01-01")
  expect_identical(res$structuredContent, list(ok = TRUE))
  expect_identical(res$`_meta`, list(m = 1L))
  expect_false(res$isError)
  res <- call(3L, "forged")
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "`text`", fixed = TRUE)
})

test_that("errors for NA and wrong types say what was given", {
  expect_snapshot(error = TRUE, {
    tool_result(content_text("x"), is_error = NA)
    tool_result(content_text("x"), is_error = "yes")
    tool_result("just text")
    tool_result(list(content_text("x"), "y"))
  })
})

test_that("small numbers: the documented rounding example, and the fix", {
  p <- c(1.08e-05, 9.9e-06, 5.1e-05, 3.1e-11)
  withr::local_options(mcplite.json.digits = NULL)
  # jsonlite's default of 4 decimal places, exactly as documented
  expect_identical(tool_result(structured_content = p)$content[[1]]$text, "[0,9.9e-06,0.0001,3.1e-11]")
  expect_identical(
    tool_result(structured_content = list(p_value = 1.08e-05, se = 0.00903))$content[[1]]$text,
    '{"p_value":0,"se":0.009}'
  )
  expect_identical(
    tool_result(structured_content = p)$content[[1]]$text,
    as.character(jsonlite::toJSON(p, auto_unbox = TRUE))
  )
  # the recommended setting for statistical output
  withr::local_options(mcplite.json.digits = I(6))
  expect_identical(tool_result(structured_content = p)$content[[1]]$text, "[1.08e-05,9.9e-06,5.1e-05,3.1e-11]")
  expect_identical(
    tool_result(structured_content = list(p_value = 1.08e-05, se = 0.00903))$content[[1]]$text,
    '{"p_value":1.08e-05,"se":0.00903}'
  )
  withr::local_options(mcplite.json.digits = NA)
  expect_identical(tool_result(structured_content = p)$content[[1]]$text, "[1.08e-05,9.9e-06,5.1e-05,3.1e-11]")
})
