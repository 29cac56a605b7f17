# The mcplite-results topic: its example (RULES J2.5) and its table of
# default mappings, checked through tool_result()'s generated fallback.

manual_structured <- function() {
  list(
    count = 1L,
    values = c(NA_real_, NaN, Inf, -Inf),
    rows = data.frame(id = 1L, missing = NA_real_)
  )
}

clear_payload_options <- function(env = parent.frame()) {
  withr::local_options(list(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  ), .local_envir = env)
}

test_that("the manual example gives the documented text with na = 'null', auto_unbox = FALSE (J2.5)", {
  clear_payload_options()
  text <- local({
    old <- options(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE)
    on.exit(options(old))
    result <- tool_result(structured_content = manual_structured())
    result$content[[1]]$text
  })
  expect_identical(
    text,
    '{"count":[1],"values":[null,null,null,null],"rows":[{"id":1,"missing":null}]}'
  )
  # the options were restored
  expect_null(getOption("mcplite.json.na"))
})

test_that("the manual example gives the documented text with default options (J2.5)", {
  clear_payload_options()
  result <- tool_result(structured_content = manual_structured())
  expect_identical(
    result$content[[1]]$text,
    '{"count":1,"values":["NA","NaN","Inf","-Inf"],"rows":[{"id":1}]}'
  )
  expect_identical(result$structured_content, manual_structured())
})

test_that("the documented default mappings hold for structured content", {
  clear_payload_options()
  rows <- list(
    list(list(a = 1, b = "x"), '{"a":1,"b":"x"}'),
    list(list(), "{}"),
    list(list(items = list()), '{"items":[]}'),
    list(list(a = NULL), '{"a":null}'),
    list(c(1.5, 2), "[1.5,2]"),
    list(list(values = c(a = 1, b = 2)), '{"values":[1,2]}'),
    list(character(0), "[]"),
    list(pi, "3.1416"),
    list(123456.789, "123456.789"),
    list(NA, "null"),
    list(c(TRUE, NA), "[true,null]"),
    list(NA_integer_, '"NA"'),
    list(c(NA_real_, NaN, Inf, -Inf), '["NA","NaN","Inf","-Inf"]'),
    list(factor("lo"), '"lo"'),
    list(as.Date("2024-01-02"), '"2024-01-02"'),
    list(matrix(1:4, 2), "[[1,3],[2,4]]"),
    list(data.frame(x = 1:2, y = c("a", NA)), '[{"x":1,"y":"a"},{"x":2}]'),
    list(I(1), "[1]"),
    list(jsonlite::unbox(1), "1"),
    list('{"a":1}', '"{\\"a\\":1}"')
  )
  for (row in rows) {
    got <- tool_result(structured_content = row[[1]])$content[[1]]$text
    expect_identical(got, row[[2]], info = deparse(row[[1]]))
  }
})

test_that("each payload option changes structured content as documented", {
  clear_payload_options()
  fallback <- function(x) tool_result(structured_content = x)$content[[1]]$text
  withr::with_options(list(mcplite.json.null = "list"), {
    expect_identical(fallback(list(a = NULL)), '{"a":{}}')
  })
  withr::with_options(list(mcplite.json.na = "string"), {
    expect_identical(fallback(list(a = NA, b = NA_character_)), '{"a":"NA","b":"NA"}')
  })
  withr::with_options(list(mcplite.json.na = "null"), {
    expect_identical(fallback(list(i = NA_integer_, d = Inf)), '{"i":null,"d":null}')
    expect_identical(fallback(data.frame(x = c(1, NA))), '[{"x":1},{"x":null}]')
  })
  withr::with_options(list(mcplite.json.auto_unbox = FALSE), {
    expect_identical(fallback(list(a = 1, b = jsonlite::unbox(2))), '{"a":[1],"b":2}')
  })
  withr::with_options(list(mcplite.json.digits = NA), {
    expect_identical(fallback(pi), "3.14159265358979")
  })
  withr::with_options(list(mcplite.json.digits = 0), {
    expect_identical(fallback(2.6), "3")
  })
  # NULL restores the default
  withr::with_options(list(mcplite.json.na = NULL), {
    expect_identical(fallback(NA_integer_), '"NA"')
  })
})

test_that("the fixed encoding of schemas and metadata ignores the payload options", {
  clear_payload_options()
  withr::local_options(list(
    mcplite.json.auto_unbox = FALSE, mcplite.json.digits = 1, mcplite.json.na = "string"
  ))
  t <- tool(function() 1, "d", name = "fixed",
            annotations = list(ratio = 0.123456789),
            output_schema = type_from_schema(list(type = "number", maximum = 0.123456789)))
  spec <- tool_spec(t)
  expect_identical(spec$annotations, c(ratio = "0.123456789"))
  expect_identical(spec$output_schema, '{"type":"number","maximum":0.123456789}')
})
