# What a function can do besides computing a value (RULES R8.8): the
# classifier (R/capabilities*.R). package_tools() on real packages, with each
# capability left out and then allowed and its effect observed, is in
# test-package-tools.R.

test_that("every .Internal() function of this R has been reviewed", {
  known <- c(names(capability_internal), capability_pure)
  expect_identical(setdiff(builtins(internal = TRUE), known), character())
})

test_that("a package whose code quotes an empty argument is analysed (RULES R8.8)", {
  skip_if_not_installed("hms")
  # hms's code holds `quote(expr = )`, which once stopped the analysis with
  # 'argument "q" is missing'. (What its functions reach through vctrs is
  # more than computing: only is_hms() is served by default.)
  tl <- package_tools("hms", quiet = TRUE)
  expect_true("is_hms" %in% names(tl))
})
