# package_tools(): data-frame results shaped as the client asks (RULES R8.4,
# R/package-results.R). Drawings and missing values: test-package-plots.R.

test_that("data-frame results are shaped with .limit, .offset, .columns and .format", {
  withr::local_options(mcplite.shape.limit = 4L, mcplite.shape.max_limit = 6L)
  tl <- package_tools("utils", include = c("read.csv", "head"), shape = "read.csv", quiet = TRUE,
                      allow = "read_files", root = tempdir())
  schema <- input_schema(tl$read.csv)
  expect_identical(schema$properties$.limit[c("type", "minimum", "maximum", "default")],
                   list(type = "integer", minimum = 0L, maximum = 6L, default = 4L))
  expect_identical(unlist(schema$properties$.format$enum), c("records", "csv", "markdown"))
  expect_false(".limit" %in% names(input_schema(tl$head)$properties))

  csv <- paste(c("id,name,score", sprintf("%d,n%d,%s", 1:10, 1:10, 1:10 / 4)), collapse = "\n")
  full <- utils::read.csv(text = csv)
  session <- mcp_handler(tl)
  # The file lies inside `root`; `text` goes through read.csv()'s `...`,
  # which the schema does not declare (RULES L6.7).
  csv_file <- tempfile(tmpdir = tempdir(), fileext = ".csv")
  writeLines(csv, csv_file)
  on.exit(unlink(csv_file), add = TRUE)
  refused <- call_tool(session, "read.csv", list(text = csv))
  expect_true(refused$isError)
  expect_match(refused$content[[1]]$text, "unexpected argument `text`", fixed = TRUE)
  csv <- csv_file

  res <- call_tool(session, "read.csv", list(file = csv, .limit = 3L, .offset = 4L))
  sc <- res$structuredContent
  expect_identical(sc[c("total_rows", "offset", "limit", "returned_rows")],
                   list(total_rows = 10L, offset = 4L, limit = 3L, returned_rows = 3L))
  expect_identical(vapply(sc$rows, function(r) r$id, 1L), full$id[5:7])
  expect_identical(vapply(sc$rows, function(r) r$score, 1), full$score[5:7])
  expect_identical(jsonlite::parse_json(res$content[[1]]$text, simplifyVector = FALSE), sc)

  # The default limit and the hard maximum come from the options.
  expect_identical(call_tool(session, "read.csv", list(file = csv))$structuredContent$returned_rows, 4L)
  big <- call_tool(session, "read.csv", list(file = csv, .limit = 6L))$structuredContent
  expect_identical(big[c("limit", "returned_rows")], list(limit = 6L, returned_rows = 6L))
  # Above the advertised maximum: refused by the input schema (RULES L6.7).
  over <- call_tool(session, "read.csv", list(file = csv, .limit = 100L))
  expect_true(over$isError)
  expect_match(over$content[[1]]$text, "`.limit`: 100 is greater than the maximum of 6", fixed = TRUE)
  # Past the end: no rows, still the total.
  end <- call_tool(session, "read.csv", list(file = csv, .offset = 20L))$structuredContent
  expect_identical(end[c("total_rows", "returned_rows")], list(total_rows = 10L, returned_rows = 0L))

  cols <- call_tool(session, "read.csv", list(file = csv, .columns = list("score", "id"), .limit = 2L))
  expect_identical(unlist(cols$structuredContent$columns), c("score", "id"))
  expect_identical(names(cols$structuredContent$rows[[1]]), c("score", "id"))

  as_csv <- call_tool(session, "read.csv", list(file = csv, .format = "csv", .offset = 2L, .limit = 2L))
  expect_identical(as_csv$content[[1]]$text, "Rows 3 to 4 of 10.")
  expect_identical(
    as_csv$content[[2]]$text,
    paste(utils::capture.output(utils::write.csv(full[3:4, ], row.names = FALSE)), collapse = "\n")
  )
  expect_identical(as_csv$structuredContent$total_rows, 10L)

  md <- call_tool(session, "read.csv", list(file = csv, .format = "markdown", .limit = 2L,
                                             .columns = list("name", "score")))
  expect_identical(md$content[[2]]$text, "| name | score |\n| --- | --- |\n| n1 | 0.25 |\n| n2 | 0.50 |")

  bad_col <- call_tool(session, "read.csv", list(file = csv, .columns = list("nope")))
  expect_true(bad_col$isError)
  expect_match(bad_col$content[[1]]$text, "nope")
  expect_true(call_tool(session, "read.csv", list(file = csv, .format = "xml"))$isError)
  expect_true(call_tool(session, "read.csv", list(file = csv, .limit = -1L))$isError)

  # Results that are not data frames are returned unchanged.
  shaped_head <- package_tools("utils", include = "head", shape = TRUE, quiet = TRUE)
  res <- call_tool(mcp_handler(shaped_head), "head", list(x = list(3, 1, 2), n = 2L, .limit = 1L))
  expect_identical(res$content[[1]]$text, direct_text(utils::head(c(3, 1, 2), n = 2L)))
  expect_null(res$structuredContent)
})
