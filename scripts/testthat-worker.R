# One test file of scripts/testthat-summary.R, in an R process of its own:
#   Rscript --vanilla scripts/testthat-worker.R <test file> <results file>
# Runs the file against the installed package and saves its results (a data
# frame, one row per test block) to <results file>. No limit on failures
# (testthat stops a run after 10 by default, uncounted files after it).
args <- commandArgs(trailingOnly = TRUE)
res <- testthat::test_file(
  args[[1]],
  package = "mcplite",
  load_package = "installed",
  reporter = testthat::ProgressReporter$new(show_praise = FALSE, max_failures = Inf),
  stop_on_failure = FALSE,
  stop_on_warning = FALSE
)
saveRDS(as.data.frame(res), args[[2]])
