# RULES R8.10: what a package tool's call changes in the process is undone.

test_that("R8.10: options, working directory and environment variables are put back", {
  withr::local_options(mcplite.test.kept = "before")
  withr::local_envvar(MCPLITE_TEST_KEPT = "before")
  wd <- getwd()
  dir <- withr::local_tempdir()
  mcplite:::with_call_state({
    options(mcplite.test.kept = "changed", mcplite.test.new = 1, digits = 3)
    Sys.setenv(MCPLITE_TEST_KEPT = "changed", MCPLITE_TEST_NEW = "1")
    Sys.unsetenv("HOME_NOT_SET_BY_ANYONE")
    setwd(dir)
  })
  expect_identical(getOption("mcplite.test.kept"), "before")
  expect_null(getOption("mcplite.test.new"))
  expect_identical(getOption("digits"), 7L)
  expect_identical(Sys.getenv("MCPLITE_TEST_KEPT"), "before")
  expect_identical(Sys.getenv("MCPLITE_TEST_NEW", unset = NA), NA_character_)
  expect_identical(getwd(), wd)
  # A variable the call removed comes back.
  withr::local_envvar(MCPLITE_TEST_GONE = "here")
  mcplite:::with_call_state(Sys.unsetenv("MCPLITE_TEST_GONE"))
  expect_identical(Sys.getenv("MCPLITE_TEST_GONE"), "here")
})

test_that("R8.10: put back also when the call fails", {
  withr::local_options(mcplite.test.kept = "before")
  expect_error(mcplite:::with_call_state({
    options(mcplite.test.kept = "changed")
    stop("boom")
  }), "boom")
  expect_identical(getOption("mcplite.test.kept"), "before")
})

test_that("R8.10: the search path, task callbacks, sinks and connections", {
  before <- search()
  callbacks <- getTaskCallbackNames()
  sinks <- sink.number()
  cons <- rownames(showConnections(all = TRUE))
  f <- withr::local_tempfile()
  mcplite:::with_call_state({
    attach(list(mcplite_attached = 1), name = "mcplite_test_attached")
    addTaskCallback(function(...) TRUE, name = "mcplite_test_callback")
    sink(f)
    file(f, "w")
  })
  expect_identical(search(), before)
  expect_identical(getTaskCallbackNames(), callbacks)
  expect_identical(sink.number(), sinks)
  expect_identical(rownames(showConnections(all = TRUE)), cons)
})

test_that("R8.10: the snapshot and the restore collect no garbage (they run for every call)", {
  # showConnections() runs gc(): tens of milliseconds per call with a large
  # package's documentation in memory.
  calls <- 0L
  count <- function() calls <<- calls + 1L
  suppressMessages(trace("gc", bquote(.(count)()), print = FALSE, where = baseenv()))
  on.exit(suppressMessages(untrace("gc", where = baseenv())))
  cons <- getAllConnections()
  f <- withr::local_tempfile()
  mcplite:::with_call_state(file(f, "w"))
  expect_identical(calls, 0L)
  expect_identical(getAllConnections(), cons)
  gc()
  expect_identical(calls, 1L)
})

test_that("R8.10: the RNG kind is put back and the seed goes on", {
  withr::local_seed(1)
  kind <- RNGkind()
  # (R warns that these kinds are poor ones: the point is that they do not last.)
  suppressWarnings(mcplite:::with_call_state(RNGkind("Marsaglia-Multicarry", "Box-Muller", "Rounding")))
  expect_identical(RNGkind(), kind)
  a <- mcplite:::with_call_state(runif(1))
  b <- mcplite:::with_call_state(runif(1))
  expect_false(identical(a, b))
})

test_that("R8.10: palette, devices and graphical parameters", {
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  pal <- grDevices::palette()
  devices <- grDevices::dev.list()
  mcplite:::with_call_state({
    grDevices::palette(c("red", "green"))
    grDevices::png(withr::local_tempfile(fileext = ".png"))
  })
  expect_identical(grDevices::palette(), pal)
  expect_identical(grDevices::dev.list(), devices)
  # A device open before the call keeps its parameters.
  grDevices::png(f <- tempfile(fileext = ".png"))
  on.exit({
    grDevices::dev.off()
    unlink(f)
  }, add = TRUE)
  mar <- graphics::par("mar")
  mcplite:::with_call_state(graphics::par(mar = c(0, 0, 0, 0)))
  expect_identical(graphics::par("mar"), mar)
})

test_that("R8.10: the locale, memory limits and global variables", {
  locale <- Sys.getlocale("LC_COLLATE")
  vsize <- mem.maxVSize()
  g <- globalenv()
  assign("mcplite_test_kept", 1, envir = g)
  on.exit(rm(list = intersect(c("mcplite_test_kept", "mcplite_test_new"), ls(g)), envir = g), add = TRUE)
  mcplite:::with_call_state({
    Sys.setlocale("LC_COLLATE", "C")
    mem.maxVSize(2 * 1024^3)
    assign("mcplite_test_new", 2, envir = g)
    assign("mcplite_test_kept", "changed", envir = g)
  })
  expect_identical(Sys.getlocale("LC_COLLATE"), locale)
  expect_identical(mem.maxVSize(), vsize)
  expect_false(exists("mcplite_test_new", envir = g, inherits = FALSE))
  expect_identical(get("mcplite_test_kept", envir = g), 1)
  mcplite:::with_call_state(rm("mcplite_test_kept", envir = g))
  expect_identical(get("mcplite_test_kept", envir = g), 1)
})

test_that("R8.10: what a call created in the temporary directory is removed", {
  before <- list.files(tempdir(), all.files = TRUE, no.. = TRUE)
  kept <- tempfile("mcplite-kept-")
  writeLines("kept", kept)
  on.exit(unlink(kept), add = TRUE)
  mcplite:::with_call_state({
    writeLines("made", tempfile("mcplite-made-"))
    dir.create(file.path(tempdir(), "mcplite-made-dir", "sub"), recursive = TRUE)
    writeLines("x", file.path(tempdir(), "mcplite-made-dir", "sub", "f"))
    writeLines("changed", kept)
  })
  expect_setequal(list.files(tempdir(), all.files = TRUE, no.. = TRUE), c(before, basename(kept)))
  # A file that was there stays (what the call wrote into it is its content now).
  expect_identical(readLines(kept), "changed")
})
