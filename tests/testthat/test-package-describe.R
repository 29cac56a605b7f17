# package_tools(): tool titles and descriptions from the help pages
# (RULES R8.1), on real installed packages (R/package-describe.R).

test_that("titles, descriptions and argument docs come from the help page", {
  tl <- stats_tools(include = c("qnorm", "median"))
  expect_named(tl, c("median", "qnorm"))
  spec <- tool_spec(tl$qnorm)
  # The Normal Distribution page documents dnorm, pnorm, qnorm and rnorm:
  # the tool leads with its own usage (RULES R8.1).
  expect_identical(spec$annotations[["title"]], "\"qnorm(): The Normal Distribution\"")
  expect_match(spec$description, "^`qnorm\\(p, mean = 0, sd = 1, lower.tail = TRUE, log.p = FALSE\\)`")
  expect_match(spec$description, "\n\nDensity, distribution function, quantile function", fixed = TRUE)
  expect_match(spec$description, "**Value:** `dnorm` gives the density", fixed = TRUE)
  schema <- input_schema(tl$qnorm)
  expect_identical(schema$properties$p$description, "vector of probabilities. (Type guessed.)")
  expect_identical(
    schema$properties$lower.tail$description,
    "logical; if TRUE (default), probabilities are P[X \\le x] otherwise, P[X > x]."
  )
  text <- stats_tools(include = "median", docs = "text")
  expect_false(grepl("`", tool_spec(text$median)$description, fixed = TRUE))
  expect_match(tool_spec(tl$median)$description, "`x`", fixed = TRUE)
})

test_that("functions sharing a help page lead with their own usage and value (RULES R8.1)", {
  skip_if_not_installed("data.table")
  dt <- package_tools("data.table", include = c("hour", "year", "month", "as.IDate"), quiet = TRUE)
  d <- vapply(dt, function(t) tool_spec(t)$description, "")
  # One page ("Integer based date class") documents them all; each says
  # what it is first, then the page's shared first paragraph.
  expect_length(unique(d), 4L)
  expect_match(d[["hour"]], "^`hour\\(x\\)`\n\n\\*\\*Value:\\*\\* `second`, `minute`, `hour`")
  expect_match(d[["year"]], "^`year\\(x\\)`")
  expect_match(d[["as.IDate"]], "^`as.IDate\\(x, \\.\\.\\.\\)`\n\n\\*\\*Value:\\*\\* For `as.IDate`, a class of")
  for (nm in names(d)) {
    expect_match(d[[nm]], "Date and time classes with integer storage", fixed = TRUE)
  }
  # What the page says about its other functions only is left out.
  expect_false(grepl("For `as.ITime`", d[["as.IDate"]], fixed = TRUE))
  expect_false(grepl("For `as.IDate`", d[["hour"]], fixed = TRUE))
  expect_identical(tool_spec(dt$hour)$annotations[["title"]], "\"hour(): Integer based date class\"")
  # A page documenting one function keeps its title and description.
  med <- tool_spec(stats_tools(include = "median")$median)
  expect_identical(med$annotations[["title"]], "\"Median Value\"")
  expect_match(med$description, "^Compute the sample median")
})

test_that("descriptions keep their first paragraph and every argument within a budget (RULES R8.1)", {
  tl <- stats_tools()
  manifest <- mcp_manifest(tl)
  expect_lte(nchar(manifest, "bytes"), 400000)
  docs <- package_docs("stats", find.package("stats"), "markdown", TRUE, names(tl))
  for (fname in names(tl)) {
    doc <- function_doc(fname, docs)$topic
    if (is.null(doc)) next
    first <- strsplit(doc$description, "\n\n", fixed = TRUE)[[1]][[1]]
    expect_true(grepl(first, tool_spec(tl[[fname]])$description, fixed = TRUE), info = fname)
    props <- input_schema(tl[[fname]])$properties
    for (arg in intersect(names(props), names(doc$arguments))) {
      expect_true(nzchar(props[[arg]]$description %||% ""), info = paste(fname, arg))
    }
  }
  # A shortened description says where the rest is.
  expect_match(tool_spec(tl$fft)$description, "(More: `?stats::fft`.)", fixed = TRUE)
})
