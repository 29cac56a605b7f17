# The demo client (inst/examples/demo-client.R, run by scripts/demo.sh)
# prints nothing but the transcript and the exit status.

test_that("the demo transcript has no stray output", {
  skip_on_cran()
  skip_if_not_installed("processx")
  client <- system.file("examples", "demo-client.R", package = "mcplite")
  server <- system.file("examples", "server.R", package = "mcplite")
  skip_if(!nzchar(client) || !nzchar(server), "examples not installed")
  res <- processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", client, server),
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)),
    error_on_status = FALSE, timeout = 120
  )
  expect_identical(res$status, 0L, info = res$stderr)
  lines <- strsplit(res$stdout, "\n", fixed = TRUE)[[1]]
  expect_identical(trimws(lines[[length(lines)]]), "server exited with status 0")
  body <- lines[-length(lines)]
  expect_true(all(grepl("^(-> |<- |   \\(notification)", body)), info = paste(body, collapse = "\n"))
  expect_identical(sum(startsWith(body, "<- ")), 7L)
})
