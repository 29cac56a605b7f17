# RULES R3: content-block constructors.

test_that("blocks have the documented class and fields (R3.6)", {
  b <- content_text("hi")
  expect_identical(class(b), c("mcplite_content_text", "mcplite_content"))
  expect_identical(names(b), c("type", "text", "annotations", "meta"))
  expect_identical(b$type, "text")
  expect_identical(b$text, "hi")
  expect_identical(b$annotations, list())
  expect_identical(b$meta, list())

  b <- content_image("aGk=", "image/png")
  expect_identical(class(b), c("mcplite_content_image", "mcplite_content"))
  expect_identical(names(b), c("type", "data", "mime_type", "annotations", "meta"))
  expect_identical(b$data, "aGk=")
  expect_identical(b$mime_type, "image/png")

  b <- content_audio("UklGRg==", "audio/wav")
  expect_identical(class(b), c("mcplite_content_audio", "mcplite_content"))
  expect_identical(b$type, "audio")

  b <- content_resource_link("file:///a.csv", "a.csv")
  expect_identical(class(b), c("mcplite_content_resource_link", "mcplite_content"))
  expect_identical(
    names(b),
    c("type", "uri", "name", "title", "description", "mime_type", "size", "annotations", "meta")
  )
  expect_null(b$title)
  expect_null(b$description)
  expect_null(b$mime_type)
  expect_null(b$size)
  expect_true(all(c("title", "size") %in% names(b)))

  b <- content_resource("memo://1", text = "x", mime_type = "text/plain")
  expect_identical(class(b), c("mcplite_content_resource", "mcplite_content"))
  expect_identical(names(b), c("type", "uri", "text", "blob", "mime_type", "annotations", "meta"))
  expect_identical(b$text, "x")
  expect_null(b$blob)
  b <- content_resource("memo://2", blob = "AAE=")
  expect_identical(b$blob, "AAE=")
  expect_null(b$text)
  expect_null(b$mime_type)
})

test_that("content_text() checks text (R3.2)", {
  expect_identical(content_text("")$text, "")
  expect_identical(content_text("line 1\nline 2")$text, "line 1\nline 2")
  expect_field_error(content_text(), "text")
  expect_field_error(content_text(NULL), "text")
  expect_field_error(content_text(NA_character_), "text")
  expect_field_error(content_text(c("a", "b")), "text")
  expect_field_error(content_text(1), "text")
  expect_field_error(content_text(list("a")), "text")
})

test_that("content_image() and content_audio() check data then mime_type (R3.2)", {
  for (make in list(content_image, content_audio)) {
    expect_identical(make("", "x/y")$data, "")
    expect_field_error(make(), "data")
    expect_field_error(make(NULL, "image/png"), "data")
    expect_field_error(make(as.raw(1:3), "image/png"), "data")
    expect_field_error(make(c("a", "b"), "image/png"), "data")
    expect_field_error(make("aGk="), "mime_type")
    expect_field_error(make("aGk=", NULL), "mime_type")
    expect_field_error(make("aGk=", ""), "mime_type")
    expect_field_error(make("aGk=", NA_character_), "mime_type")
    # data is checked first
    expect_field_error(make(1, ""), "data")
  }
})

test_that("content_resource_link() checks its fields in order (R3.2)", {
  b <- content_resource_link("https://example.org/x", "x", title = "X", description = "",
                             mime_type = "text/html", size = 0)
  expect_identical(b$title, "X")
  expect_identical(b$description, "")
  expect_identical(b$size, 0)
  expect_identical(content_resource_link("u:", "n", size = 10L)$size, 10L)
  expect_identical(content_resource_link("u:", "n", size = 1e12)$size, 1e12)

  expect_field_error(content_resource_link(), "uri")
  expect_field_error(content_resource_link("", "n"), "uri")
  expect_field_error(content_resource_link(NA_character_, "n"), "uri")
  expect_field_error(content_resource_link("u:"), "name")
  expect_field_error(content_resource_link("u:", ""), "name")
  expect_field_error(content_resource_link("u:", "n", title = 1), "title")
  expect_field_error(content_resource_link("u:", "n", title = NA_character_), "title")
  expect_field_error(content_resource_link("u:", "n", description = c("a", "b")), "description")
  expect_field_error(content_resource_link("u:", "n", mime_type = ""), "mime_type")
  expect_field_error(content_resource_link("u:", "n", mime_type = 1), "mime_type")
  for (bad in list(-1, 1.5, Inf, NaN, NA_integer_, NA_real_, "10", c(1, 2), TRUE,
                   as.difftime(1, units = "secs"))) {
    expect_field_error(content_resource_link("u:", "n", size = bad), "size")
  }
  # order: uri before name before title ... before size
  expect_field_error(content_resource_link("", "", title = 1, size = -1), "uri")
  expect_field_error(content_resource_link("u:", "", title = 1, size = -1), "name")
  expect_field_error(content_resource_link("u:", "n", title = 1, size = -1), "title")
  expect_field_error(content_resource_link("u:", "n", description = 1, mime_type = ""), "description")
  expect_field_error(content_resource_link("u:", "n", mime_type = "", size = -1), "mime_type")
})

test_that("content_resource() needs exactly one of text and blob (R3.2)", {
  err <- expect_field_error(content_resource("u:"), "text")
  expect_match(conditionMessage(err), "`blob`", fixed = TRUE)
  err <- expect_field_error(content_resource("u:", text = "a", blob = "b"), "text")
  expect_match(conditionMessage(err), "`blob`", fixed = TRUE)
  expect_field_error(content_resource("u:", text = 1), "text")
  expect_field_error(content_resource("u:", text = NA_character_), "text")
  expect_field_error(content_resource("u:", blob = as.raw(1)), "blob")
  expect_identical(content_resource("u:", text = "")$text, "")
  # order: uri, mime_type, then text/blob
  expect_field_error(content_resource("", mime_type = ""), "uri")
  expect_field_error(content_resource("u:", mime_type = ""), "mime_type")
  expect_field_error(content_resource(), "uri")
})

test_that("content annotations are validated and audience is stored as I() (R3.3)", {
  b <- content_text("x", annotations = list(
    audience = "user", priority = 0.5, last_modified = "2025-01-12T15:00:58Z", x_ext = list(a = 1)
  ))
  expect_identical(names(b$annotations), c("audience", "priority", "last_modified", "x_ext"))
  expect_identical(b$annotations$audience, I("user"))
  expect_identical(fixed_json(b$annotations$audience), '["user"]')
  expect_identical(
    content_text("x", annotations = list(audience = c(a = "assistant", b = "user", c = "user")))$annotations$audience,
    I(c("assistant", "user", "user"))
  )
  expect_identical(content_text("x", annotations = list(priority = 0L))$annotations$priority, 0L)
  expect_identical(content_text("x", annotations = list(priority = 1))$annotations$priority, 1)
  # last_modified is not checked as a timestamp
  expect_identical(
    content_text("x", annotations = list(last_modified = "yesterday"))$annotations$last_modified,
    "yesterday"
  )
})

test_that("content annotation errors name the field (R3.3)", {
  an <- function(...) content_text("x", annotations = list(...))
  err <- expect_field_error(an(lastModified = "2025-01-01"), "annotations$lastModified")
  expect_match(conditionMessage(err), "last_modified", fixed = TRUE)
  for (bad in list(character(), "robot", c("user", NA), 1, list("user"), NULL, factor("user"))) {
    expect_field_error(an(audience = bad), "annotations$audience")
  }
  for (bad in list(-0.1, 1.01, NA_real_, NaN, Inf, "0.5", c(0.1, 0.2), TRUE, NULL, I(0.5))) {
    expect_field_error(an(priority = bad), "annotations$priority")
  }
  for (bad in list(1, NA_character_, c("a", "b"), NULL, Sys.time())) {
    expect_field_error(an(last_modified = bad), "annotations$last_modified")
  }
  expect_field_error(an(ext = new.env()), "annotations")
  expect_field_error(content_text("x", annotations = list("user")), "annotations")
  expect_field_error(content_text("x", annotations = list(a = 1, a = 2)), "annotations")
  expect_field_error(content_text("x", annotations = c(priority = 1)), "annotations")
  expect_field_error(content_text("x", annotations = NULL), "annotations")
})

test_that("meta is a named, encodable list with NULL values allowed (R3.4)", {
  b <- content_text("x", meta = list(source = "db", nothing = NULL, nested = list(n = 1L)))
  expect_identical(names(b$meta), c("source", "nothing", "nested"))
  expect_null(b$meta$nothing)
  expect_field_error(content_text("x", meta = list(1)), "meta")
  expect_field_error(content_text("x", meta = list(a = 1, a = 2)), "meta")
  expect_field_error(content_text("x", meta = c(a = 1)), "meta")
  expect_field_error(content_text("x", meta = NULL), "meta")
  expect_field_error(content_text("x", meta = list(env = new.env())), "meta")
  r <- content_resource("u:", text = "t", meta = list(k = "v"))
  expect_identical(r$meta, list(k = "v"))
  # fields are checked before annotations, annotations before meta
  expect_field_error(content_text(1, annotations = 1, meta = 1), "text")
  expect_field_error(content_text("x", annotations = 1, meta = 1), "annotations")
})

test_that("constructors store strings as given, without touching base64 or URIs (R3.5)", {
  b <- content_image("not base64 at all!", "image/x-made-up")
  expect_identical(b$data, "not base64 at all!")
  b <- content_resource_link("relative/path", "p")
  expect_identical(b$uri, "relative/path")
})

test_that("validate_block() accepts real blocks and rejects forged ones", {
  b <- content_text("x", annotations = list(audience = "user"))
  expect_identical(validate_block(b), b)
  forged <- structure(list(type = "text", text = "x"),
                      class = c("mcplite_content_text", "mcplite_content"))
  expect_error(validate_block(forged), class = "mcplite_error")
  forged <- b
  forged$text <- 1
  expect_field_error(validate_block(forged), "text")
  forged <- content_image("a", "image/png")
  forged$mime_type <- NULL
  expect_error(validate_block(forged), class = "mcplite_error")
  forged <- b
  class(forged) <- c("mcplite_content_image", "mcplite_content")
  expect_error(validate_block(forged), class = "mcplite_error")
  expect_error(validate_block(list(type = "text", text = "x")), class = "mcplite_error")
})

test_that("content blocks print readably", {
  expect_output(print(content_text("Hello\nworld")), "<mcplite content: text>\n  Hello\n  world", fixed = TRUE)
  out <- capture.output(print(content_image("aGk=", "image/png", annotations = list(audience = "user"))))
  expect_identical(out[1], "<mcplite content: image (image/png, 4 base64 characters)>")
  expect_identical(out[2], '  annotations: audience = ["user"]')
  out <- capture.output(print(content_resource_link("file:///a", "a", size = 3e9)))
  expect_true(any(grepl("size: 3000000000", out, fixed = TRUE)))
  out <- capture.output(print(content_resource("memo://1", blob = "AAE=", meta = list(k = NULL))))
  expect_identical(out[1], "<mcplite content: embedded resource memo://1>")
  expect_true(any(grepl("meta: k = null", out, fixed = TRUE)))
})

test_that("errors for NA and wrong types say what was given", {
  expect_snapshot(error = TRUE, {
    content_text(NA_character_)
    content_text(NA)
    content_text(c("a", "b"))
    content_text(I("text"))
    content_text(factor("a"))
    content_image(1, "image/png")
    content_image("AAAA", "")
    content_resource_link("file:///a", name = NA_character_)
    content_resource_link("file:///a", name = "a", size = -1)
    content_resource_link("file:///a", name = "a", size = 1.5)
    content_text("x", annotations = list(priority = 2))
    content_text("x", annotations = list(priority = NA_real_))
    content_text("x", annotations = list(audience = NA_character_))
    content_text("x", annotations = list(last_modified = I("2024-01-01")))
    content_text("x", annotations = list("a"))
    content_text("x", meta = list(1))
  })
})
