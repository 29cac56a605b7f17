# RULES C2: mcp_progress() outside a served call with a progress token.

test_that("C2: mcp_progress() is a silent no-op when nobody listens", {
  expect_invisible(mcp_progress(1))
  expect_false(mcp_progress(1))
  # Not increasing is fine when nobody listens: there is no call to compare with.
  expect_false(mcp_progress(0.5, total = 10, message = "half"))
  fit <- function(k) {
    for (i in seq_len(k)) mcp_progress(i, total = k, message = paste("fold", i))
    "done"
  }
  expect_identical(fit(3), "done")
})

test_that("C2: mcp_progress() checks its arguments with classed errors", {
  bad <- list(
    list(progress = NA_real_),
    list(progress = Inf),
    list(progress = "1"),
    list(progress = c(1, 2)),
    list(progress = 1, total = NaN),
    list(progress = 1, total = "10"),
    list(progress = 1, message = 2),
    list(progress = 1, message = NA_character_),
    list(progress = 1, message = c("a", "b"))
  )
  for (args in bad) {
    err <- expect_error(do.call(mcp_progress, args), class = "mcplite_error_progress")
    expect_s3_class(err, "mcplite_error")
    arg <- names(args)[length(args)]
    expect_match(conditionMessage(err), paste0("`", arg, "`"), fixed = TRUE)
  }
  expect_error(mcp_progress(), "progress")
})

test_that("C1.2: progress_interval is checked before serving starts", {
  tl <- tool(function() 1, name = "one", description = "One.")
  for (bad in list(0, -1, 0.01, 4000, NA_real_, "5", c(1, 2))) {
    expect_error(mcp_server(list(tl), progress_interval = bad), "`progress_interval`",
      class = "mcplite_error")
  }
  withr::local_envvar(MCPLITE_PROGRESS_INTERVAL = "soon")
  expect_error(mcp_server(list(tl)), "MCPLITE_PROGRESS_INTERVAL", class = "mcplite_error")
})

test_that("C2: a classed number or string is accepted; a factor is not", {
  x <- structure(3, class = "my_count")
  expect_true(is.numeric(x))
  expect_false(mcp_progress(x, total = structure(10L, class = "my_count"),
    message = structure("three", class = "my_label")))
  expect_error(mcp_progress(factor("a")), "`progress`", class = "mcplite_error_progress")
})
