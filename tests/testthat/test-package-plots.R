# Package tools that draw (RULES R8.9) and missing values in package tools'
# results (RULES R8.5), with real installed packages: graphics, grid,
# lattice and stats, in process and through a server with workers.

# tools/call through the engine in this process; returns the parsed result.
plot_call <- function(session, name, args = structure(list(), names = character())) {
  line <- mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = name, arguments = args, `_meta` = modern_meta())
  ))
  jsonlite::parse_json(line, simplifyVector = FALSE)$result
}

# The image of a result's image block, decoded and checked: PNG of 640 x 480
# pixels with something other than the white background on it.
expect_drawing <- function(block, info = NULL) {
  expect_identical(block$type, "image", info = info)
  expect_identical(block$mimeType, "image/png", info = info)
  img <- png::readPNG(jsonlite::base64_dec(block$data))
  expect_identical(dim(img)[1:2], c(480L, 640L), info = info)
  expect_true(any(img[, , 1:3] < 0.5), info = paste(info, "(the image is blank)"))
  invisible(img)
}

block_types <- function(res) vapply(res$content, function(b) b$type, "")

# Files this R process's plots could leave behind: in the working directory
# and our temporary PNG files.
leftovers <- function() {
  c(list.files(getwd(), all.files = TRUE, no.. = TRUE),
    list.files(tempdir(), pattern = "^mcplite-plot-"))
}

test_that("R8.9: what a package function draws comes back as a PNG, with its value, leaving no file", {
  skip_if_not_installed("png")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  withr::local_dir(withr::local_tempdir())
  devices <- grDevices::dev.list()
  before <- leftovers()
  graphics_tools <- package_tools("graphics", include = c("plot", "hist", "barplot"), quiet = TRUE)
  session <- mcp_handler(c(graphics_tools, package_tools("stats", include = "median", quiet = TRUE)))

  # plot() returns NULL: the answer is the image alone.
  res <- plot_call(session, "plot", list(x = list(1, 2, 3, 4), y = list(4, 1, 3, 2)))
  expect_false(res$isError)
  expect_identical(block_types(res), "image")
  expect_drawing(res$content[[1]], "plot")

  # hist() returns a "histogram": its text as before, then the image.
  x <- c(1, 2, 2, 3, 3, 3, 4, 4, 5, 9)
  res <- plot_call(session, "hist", list(x = as.list(x)))
  expect_false(res$isError)
  expect_identical(block_types(res), c("text", "image"))
  counts <- utils::capture.output(print(graphics::hist(x, plot = FALSE)$counts))
  expect_match(res$content[[1]]$text, paste0("$counts\n", counts, "\n"), fixed = TRUE)
  expect_drawing(res$content[[2]], "hist")

  # barplot() returns the bar midpoints (as JSON), and draws.
  res <- plot_call(session, "barplot", list(height = list(3, 1, 2)))
  expect_identical(block_types(res), c("text", "image"))
  expect_identical(as.vector(jsonlite::fromJSON(res$content[[1]]$text)), c(0.7, 1.9, 3.1))
  expect_drawing(res$content[[2]], "barplot")

  # Nothing drawn, no image: hist(plot = FALSE) and median().
  res <- plot_call(session, "hist", list(x = as.list(x), plot = FALSE))
  expect_identical(block_types(res), "text")
  expect_identical(block_types(plot_call(session, "median", list(x = list(1, 3)))), "text")

  # An error while drawing is a tool error, and closes the device too.
  expect_true(plot_call(session, "plot", list(x = list(1, 2), y = list(1, 2, 3)))$isError)

  expect_identical(leftovers(), before)
  expect_identical(grDevices::dev.list(), devices)
})

test_that("R8.9: grid drawings and lattice plots (drawn when printed) come back as images", {
  skip_if_not_installed("png")
  skip_if_not_installed("lattice")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  withr::local_dir(withr::local_tempdir())
  before <- leftovers()
  session <- mcp_handler(c(
    package_tools("grid", include = "grid.rect", quiet = TRUE),
    package_tools("lattice", include = "histogram", quiet = TRUE)
  ))
  res <- plot_call(session, "grid.rect", list(width = 0.5, height = 0.5, default.units = "npc"))
  expect_false(res$isError)
  expect_identical(tail(block_types(res), 1L), "image")
  expect_drawing(res$content[[length(res$content)]], "grid.rect")

  # A trellis object draws when printed: the image is the answer (R would
  # otherwise print it to a PDF file).
  res <- plot_call(session, "histogram", list(x = list(1, 2, 2, 3, 3, 3, 4, 7)))
  expect_false(res$isError)
  expect_identical(block_types(res), "image")
  expect_drawing(res$content[[1]], "lattice histogram")
  expect_identical(leftovers(), before)
})

test_that("R8.9: an open device stays current and untouched; a device a function opens itself is its own", {
  skip_if_not_installed("png")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  withr::local_dir(withr::local_tempdir())
  session <- mcp_handler(package_tools("graphics", include = "plot", quiet = TRUE))
  devices <- grDevices::dev.list()
  # The user's device (as in a live session): it stays current, nothing is
  # drawn on it (a PNG device writes no file without a page).
  users <- file.path(tempdir(), "users-device.png")
  grDevices::png(users)
  user_dev <- grDevices::dev.cur()
  withr::defer(if (user_dev %in% grDevices::dev.list()) grDevices::dev.off(user_dev))
  res <- plot_call(session, "plot", list(x = list(1, 2, 3)))
  expect_identical(block_types(res), "image")
  expect_drawing(res$content[[1]], "plot with a device open")
  expect_identical(grDevices::dev.cur(), user_dev)
  expect_identical(unname(grDevices::dev.list()), unname(c(devices, user_dev)))
  grDevices::dev.off(user_dev)
  expect_false(file.exists(users))

  # A function that draws into a file of its own (pdf(file = ...)) still
  # does; nothing of it comes back as an image.
  own <- function(path) {
    grDevices::pdf(path)
    graphics::plot(1:3)
    grDevices::dev.off()
    path
  }
  wrapper <- package_tool_wrapper(own, "own", list(), NULL)
  expect_identical(wrapper(path = "own.pdf"), "own.pdf")
  expect_gt(file.size("own.pdf"), 0)
  expect_identical(grDevices::dev.list(), devices)
})

test_that("R8.5: missing values in package tools' results are null; user-written tools keep jsonlite's default", {
  session <- mcp_handler(c(
    package_tools("stats", include = c("pnorm", "median"), quiet = TRUE),
    list(tool(function() c(NA, 1.5), name = "by_hand", description = "Hand-written."))
  ))
  text <- function(name, args = structure(list(), names = character())) {
    plot_call(session, name, args)$content[[1]]$text
  }
  expect_identical(text("pnorm", list(q = list(NULL, 0), mean = 0)), "[null,0.5]")
  expect_identical(text("median", list(x = list(1, NULL))), "null")
  expect_identical(text("by_hand"), "[\"NA\",1.5]")
  # A payload option the user set still decides.
  withr::local_options(mcplite.json.na = "string")
  expect_identical(text("pnorm", list(q = list(NULL, 0), mean = 0)), "[\"NA\",0.5]")
})

test_that("R8.9, R8.5: workers draw and encode as the server does, and leave no file", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_if_not_installed("png")
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  writeLines(c(
    "library(mcplite)",
    "mcp_server(c(package_tools('graphics', include = 'plot', quiet = TRUE),",
    "  package_tools('stats', include = 'pnorm', quiet = TRUE)), workers = 2)"
  ), file.path(dir, "server.R"))
  input <- file.path(withr::local_tempdir(), "in.jsonl")
  writeLines(c(
    modern_call("plot", '{"x":[3,1,2]}', id = 1),
    modern_call("pnorm", '{"q":[null,0]}', id = 2)
  ), input)
  res <- withr::with_envvar(c(MCPLITE_WORKERS = NA, MCPLITE_TRANSPORT = NA), processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", "server.R"),
    wd = dir, stdin = input, error_on_status = FALSE, timeout = 120,
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  ))
  expect_identical(res$status, 0L, info = res$stderr)
  msgs <- lapply(strsplit(sub("\n$", "", res$stdout), "\n", fixed = TRUE)[[1]],
                 jsonlite::parse_json, simplifyVector = FALSE)
  by_id <- stats::setNames(msgs, vapply(msgs, function(m) as.character(m$id), ""))
  expect_identical(block_types(by_id[["1"]]$result), "image")
  expect_drawing(by_id[["1"]]$result$content[[1]], "plot in a worker")
  expect_identical(by_id[["2"]]$result$content[[1]]$text, "[null,0.5]")
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "server.R")
})
