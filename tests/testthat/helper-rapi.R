# Shared expectations for the R API tests (tool, types, content, results).

# An error of class `mcplite_error` whose message names `field` in backticks.
expect_field_error <- function(expr, field) {
  err <- tryCatch(
    {
      force(expr)
      NULL
    },
    error = function(e) e
  )
  if (is.null(err)) {
    testthat::fail(paste0("Expected an mcplite_error naming `", field, "`, but there was no error."))
    return(invisible(NULL))
  }
  testthat::expect_s3_class(err, "mcplite_error")
  testthat::expect_true(
    grepl(paste0("`", field, "`"), conditionMessage(err), fixed = TRUE),
    info = paste0("message should name `", field, "`: ", conditionMessage(err))
  )
  invisible(err)
}

# Fixed JSON of a type helper's schema.
schema_json <- function(x) fixed_json(type_schema(x, "x"))
