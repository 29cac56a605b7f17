# package_tools(): which arguments are required, from what the function's
# formals and code say (RULES R8.3, R/package-signatures.R).

test_that("a function argument a model-building function uses is required (RULES R8.3)", {
  # integrate() and by() use match.call(), like lm(), but call the function
  # they are given (match.fun(f), FUN(...)): left out, the tool could only
  # fail, so they are skipped and say why.
  res <- with_messages(package_tools("stats", include = c("integrate", "lm", "xtabs"),
                                     formulas = "string", allow = "evaluate_code"))
  expect_setequal(names(res$value), c("lm", "xtabs"))
  msg <- paste(res$messages, collapse = "")
  expect_match(msg, "integrate (f: function)", fixed = TRUE)
  expect_error(stats::integrate(lower = 0, upper = 1), "\"f\"")
  # lm() never uses na.action by name (only through match.call()): still
  # left out, and lm is served.
  expect_false("na.action" %in% names(input_schema(res$value$lm)$properties))
  res <- with_messages(package_tools("base", include = c("by", "nchar")))
  expect_named(res$value, "nchar")
  expect_match(paste(res$messages, collapse = ""), "by (FUN: function)", fixed = TRUE)
})

test_that("arguments a function handles when missing are not required (RULES R8.3)", {
  # smoothScatter() evaluates its `transformation` (RULES R8.8).
  g <- package_tools("graphics", include = c("hist", "smoothScatter"), quiet = TRUE,
                     allow = "evaluate_code")
  # hist.default() hands `ylab` on to plot.histogram(), which tests
  # missing(ylab); smoothScatter() hands `bandwidth` to a helper that does.
  expect_identical(unlist(input_schema(g$hist)$required), "x")
  expect_false("bandwidth" %in% unlist(input_schema(g$smoothScatter)$required))
  expect_true("bandwidth" %in% names(input_schema(g$smoothScatter)$properties))
  expect_identical(unlist(input_schema(stats_tools(include = "dbinom")$dbinom)$required),
                   c("x", "size", "prob"))
  res <- call_tool(mcp_handler(g), "hist", list(x = list(1, 2, 2, 3, 3, 3), plot = FALSE))
  expect_false(res$isError)
})
