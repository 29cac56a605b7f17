# Run the testthat suite against the installed package and write
# "passed failed" (counted per test block) to the file given as argument.
args <- commandArgs(trailingOnly = TRUE)
out <- args[[1]]
Sys.setenv(NOT_CRAN = "true")
res <- testthat::test_dir(
  "tests/testthat",
  package = "mcplite",
  load_package = "installed",
  reporter = testthat::ProgressReporter$new(show_praise = FALSE),
  stop_on_failure = FALSE,
  stop_on_warning = FALSE
)
df <- as.data.frame(res)
bad <- df$failed > 0 | df$error
ok <- !bad & !df$skipped
writeLines(paste(sum(ok), sum(bad)), out)
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", sum(ok), sum(bad), sum(df$skipped & !bad)))
