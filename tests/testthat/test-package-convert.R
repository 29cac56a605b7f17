# package_tools(): JSON arguments made into R values (vectors, data frames,
# matrices, time series, formulas; RULES R8.2, R8.8), R/package-convert.R.

test_that("a time series comes with its frequency and start (RULES R8.2)", {
  tl <- stats_tools(include = c("decompose", "stl", "acf"))
  session <- mcp_handler(tl)
  # Two years of monthly values: a frequency decompose() and stl() need,
  # which an array of numbers (a series of frequency one) does not carry.
  values <- as.numeric(datasets::co2[1:48])
  series <- list(data = as.list(values), frequency = 12, start = list(1959, 1))
  res <- call_tool(session, "decompose", list(x = series))
  expect_false(res$isError)
  # A "decomposed.ts" comes as the text R prints for it (RULES R8.5).
  expected <- stats::decompose(stats::ts(values, start = c(1959, 1), frequency = 12))
  expect_identical(res$content[[1]]$text, paste(utils::capture.output(print(expected)), collapse = "\n"))
  res <- call_tool(session, "stl", list(x = series, s.window = "periodic"))
  expect_false(res$isError, info = res$content[[1]]$text)
  res <- call_tool(session, "decompose", list(x = as.list(values)))
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "no or less than 2 periods", fixed = TRUE)
  # An array of values is still a series (of frequency one).
  res <- call_tool(session, "acf", list(x = as.list(values), plot = FALSE, lag.max = 3))
  expect_false(res$isError)
  # A malformed series, or one with a member the schema does not name
  # (`start_date` is not `start`), is the client's error, said in its terms:
  # the input schema refuses it before R runs (RULES L6.7).
  bad <- list(
    list(list(data = as.list(values), frequency = "monthly"), '`x/frequency` must be of type "number", got "monthly"'),
    list(list(data = as.list(values), frequency = 12, start_date = 1959), "`x` has unexpected member `start_date`"),
    list(list(data = list("a", "b"), frequency = 12), '`x/data/0` must be of type "number", got "a"')
  )
  for (b in bad) {
    res <- call_tool(session, "decompose", list(x = b[[1]]))
    expect_true(res$isError)
    expect_match(res$content[[1]]$text, b[[2]], fixed = TRUE)
  }
  # Behind the schema, the conversion says the same in its own words.
  convert <- mcplite:::series_from_json
  expect_error(convert(list(data = list(1, 2), frequency = "monthly")), "a time series is {\"data\": [numbers]", fixed = TRUE)
})

test_that("formulas are left out unless a string form is chosen", {
  # Model functions evaluate expressions built from their arguments
  # (RULES R8.8): served only with "evaluate_code" allowed.
  expect_message(
    tl <- package_tools("stats", include = c("lm", "xtabs"), allow = "evaluate_code"),
    "lm \\(formula: formula\\)"
  )
  expect_named(tl, "xtabs")
  expect_false("formula" %in% names(input_schema(tl$xtabs)$properties))

  tl <- stats_tools(include = "lm", formulas = "string", allow = "evaluate_code")
  schema <- input_schema(tl$lm)
  expect_identical(schema$properties$formula$type, "string")
  # Model functions (match.call()) only require their first argument.
  expect_identical(schema$required, list("formula"))
  # Functions (na.action) are never accepted from a client.
  expect_false("na.action" %in% names(schema$properties))

  session <- mcp_handler(tl)
  df <- data.frame(y = c(1, 3, 2, 5, 4), x = 1:5)
  records <- lapply(seq_len(nrow(df)), function(i) as.list(df[i, ]))
  res <- call_tool(session, "lm", list(formula = "y ~ x", data = records))
  expect_false(res$isError)
  fit <- stats::lm(y ~ x, data = df)
  expect_match(res$content[[1]]$text, format(stats::coef(fit)[["x"]], digits = 4), fixed = TRUE)
  # Only a formula is accepted: the string is not evaluated.
  marker <- file.path(tempdir(), "mcplite-formula-marker")
  bad <- call_tool(session, "lm", list(formula = sprintf("file.create('%s')", marker)))
  expect_true(bad$isError)
  expect_match(bad$content[[1]]$text, "is not a formula")
  expect_false(file.exists(marker))
  # Its terms may call formula operators and arithmetic only (the model
  # function would evaluate them), and see no global variable.
  bad <- call_tool(session, "lm", list(formula = sprintf("y ~ x + file.create('%s')", marker),
                                       data = records))
  expect_true(bad$isError)
  expect_match(bad$content[[1]]$text, "calls file.create\\(\\), which a formula may not")
  expect_false(file.exists(marker))
  ok <- call_tool(session, "lm", list(formula = "log(y) ~ poly(x, 2)", data = records))
  expect_false(ok$isError)
  assign("mcplite_secret_column", 1:5, envir = globalenv())
  withr::defer(rm("mcplite_secret_column", envir = globalenv()))
  hidden <- call_tool(session, "lm", list(formula = "y ~ mcplite_secret_column", data = records))
  expect_true(hidden$isError)
  expect_match(hidden$content[[1]]$text, "mcplite_secret_column")
})

test_that("JSON values are converted to R vectors and data frames", {
  expect_identical(as_atomic(list(1L, 2.5, NULL), "number"), c(1, 2.5, NA))
  expect_identical(as_atomic(list(1L, 2L), "number"), c(1, 2))
  expect_identical(as_atomic(3, "integer"), 3L)
  expect_identical(as_atomic(list("a", NULL), "string"), c("a", NA))
  expect_identical(simplify_json(list(TRUE, FALSE)), c(TRUE, FALSE))
  expect_identical(simplify_json(list(1L, "a")), list(1L, "a"))
  expect_identical(
    simplify_json(list(list(a = 1L, b = "x"), list(a = 2L))),
    data.frame(a = 1:2, b = c("x", NA), stringsAsFactors = FALSE)
  )
  expect_identical(simplify_json(list(k = list(1L, 2L))), list(k = 1:2))
  # Where the schema names a matrix, arrays of one length and kind are a
  # matrix, one row each (as jsonlite simplifies them); ragged or mixed
  # arrays stay a list. Untyped, they stay a list of vectors.
  expect_identical(simplify_json(list(list(1, 2), list(3L, 4)), matrix = TRUE), rbind(c(1, 2), c(3, 4)))
  expect_identical(simplify_json(list(list("a"), list("b")), matrix = TRUE), rbind("a", "b"))
  expect_identical(simplify_json(list(list(1, 2), list(3)), matrix = TRUE), list(c(1, 2), 3))
  expect_identical(simplify_json(list(list(1, 2), list("a", "b")), matrix = TRUE), list(c(1, 2), c("a", "b")))
  expect_identical(simplify_json(list(list(1, 2), list(3L, 4))), list(c(1, 2), c(3, 4)))
  expect_s3_class(formula_from_json("y ~ x + z"), "formula")
  expect_error(formula_from_json("q()"), "not a formula")
})
