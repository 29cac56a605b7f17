# resource_files() (RULES U6.1).

# A project directory: text, data, a figure, a subdirectory, secrets in
# hidden files, a link to outside it and a large file.
local_project <- function(env = parent.frame()) {
  root <- withr::local_tempdir("project-", .local_envir = env)
  outside <- withr::local_tempdir("outside-", .local_envir = env)
  dir.create(file.path(root, "data"))
  dir.create(file.path(root, ".git"))
  writeLines("# Findings\nThe effect is small: caf\u00e9.", file.path(root, "report.md"), useBytes = TRUE)
  write.csv(head(mtcars, 3), file.path(root, "data", "cars.csv"), row.names = FALSE)
  writeBin(as.raw(c(0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3)), file.path(root, "figure.png"))
  writeBin(as.raw(c(0, 1, 2, 255)), file.path(root, "model.bin"))
  writeLines("plot(1)", file.path(root, "analysis.R"))
  writeLines("TOKEN=secret-in-env", file.path(root, ".env"))
  writeLines("[core]", file.path(root, ".git", "config"))
  writeLines("secret-outside", file.path(outside, "id_rsa"))
  file.symlink(file.path(outside, "id_rsa"), file.path(root, "key"))
  file.symlink(outside, file.path(root, "elsewhere"))
  file.symlink(file.path(root, "report.md"), file.path(root, "same.md"))
  writeBin(as.raw(rep(65L, 2000L)), file.path(root, "big.txt"))
  list(root = root, outside = outside)
}

test_that("U6.1: each regular file under the root is a resource with its file URI and type", {
  p <- local_project()
  expect_message(files <- resource_files(p$root, max_size = 1000), "left out 3 files")
  top <- normalizePath(p$root)
  expect_named(files, vapply(file.path(top, c("analysis.R", "data/cars.csv", "figure.png", "model.bin",
                                                "report.md", "same.md")), mcplite:::file_uri, "", USE.NAMES = FALSE))
  by_name <- stats::setNames(files, vapply(files, function(r) r$name, ""))
  expect_identical(vapply(by_name, function(r) r$mime_type, ""), c(
    analysis.R = "text/x-r", `data/cars.csv` = "text/csv", figure.png = "image/png",
    model.bin = "application/octet-stream", report.md = "text/markdown", same.md = "text/markdown"
  ))
  client <- local_mcp_connect(tools = mcp_handler(list(), resources = files))
  read <- function(name) mcp_read_resource(client, by_name[[name]]$uri)[[1]]
  expect_identical(read("report.md")$text, "# Findings\nThe effect is small: caf\u00e9.\n")
  expect_identical(read("data/cars.csv")$text, paste0(paste(readLines(file.path(p$root, "data", "cars.csv")),
                                                            collapse = "\n"), "\n"))
  expect_identical(read("figure.png")$blob, readBin(file.path(p$root, "figure.png"), "raw", 100))
  expect_identical(read("model.bin")$blob, as.raw(c(0, 1, 2, 255)))
  # The link inside the root is served; its target is the same file.
  expect_identical(read("same.md")$text, read("report.md")$text)
})

test_that("U6.1: hidden files, links to outside the root and large files are never served", {
  p <- local_project()
  msgs <- character()
  files <- withCallingHandlers(resource_files(p$root, max_size = 1000), message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  expect_match(msgs, "key (a link to outside the root)", fixed = TRUE)
  expect_match(msgs, "elsewhere/ (a link to a directory)", fixed = TRUE)
  expect_match(msgs, "big.txt (2,000 bytes, more than `max_size`)", fixed = TRUE)
  expect_false(any(grepl("secret|core", vapply(files, function(r) r$body, ""))))
  expect_false(any(grepl("\\.env|\\.git|id_rsa|key|big", names(files))))
  # A client that asks for those files' URIs gets "not found".
  client <- local_mcp_connect(tools = mcp_handler(list(), resources = files))
  for (uri in vapply(file.path(normalizePath(p$root), c(".env", "key", "elsewhere/id_rsa", ".git/config")),
                     mcplite:::file_uri, "")) {
    expect_error(mcp_read_resource(client, uri), "Resource not found")
  }
  # hidden = TRUE serves hidden files, and never a link to outside.
  all <- suppressMessages(resource_files(p$root, hidden = TRUE, max_size = 1e4))
  expect_true(all(c(".env", ".git/config", "big.txt") %in% vapply(all, function(r) r$name, "")))
  expect_false(any(c("key", "elsewhere/id_rsa") %in% vapply(all, function(r) r$name, "")))
})

test_that("U6.1: pattern and recursive choose the files; arguments are checked", {
  p <- local_project()
  csv <- resource_files(p$root, pattern = "\\.csv$", quiet = TRUE)
  expect_identical(unname(vapply(csv, function(r) r$name, "")), "data/cars.csv")
  top <- suppressMessages(resource_files(p$root, recursive = FALSE, max_size = 1e4))
  expect_false(any(grepl("/", vapply(top, function(r) r$name, ""))))
  expect_identical(mcplite:::file_uri("/a b/c%d/\u00e9.txt"), "file:///a%20b/c%25d/%C3%A9.txt")
  expect_identical(mcplite:::file_uri("C:/x/y.txt"), "file:///C:/x/y.txt")
  expect_error(resource_files(), "`root` is required", class = "mcplite_error_argument")
  expect_error(resource_files(file.path(p$root, "nope")), "existing directory", class = "mcplite_error_argument")
  expect_error(resource_files(p$root, pattern = "("), "not a valid regular expression",
               class = "mcplite_error_argument")
  expect_error(resource_files(p$root, max_size = 0), "`max_size` must be", class = "mcplite_error_argument")
  expect_error(resource_files(p$root, hidden = "yes"), "`hidden` must be TRUE or FALSE",
               class = "mcplite_error_argument")
})

test_that("U6.1: links that loop or lead to hidden files, and text told from its bytes", {
  root <- withr::local_tempdir("odd-")
  dir.create(file.path(root, "sub"))
  writeLines("x", file.path(root, "sub", "a.txt"))
  file.symlink(root, file.path(root, "sub", "loop"))
  file.symlink(".", file.path(root, "self"))
  writeLines("TOKEN=1", file.path(root, ".env"))
  file.symlink(file.path(root, ".env"), file.path(root, "env"))
  writeLines(c("BMI,age,weight,height,group", "22.5,40,70,176,a"), file.path(root, "bmi.csv"))
  writeBin(as.raw(c(0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0)), file.path(root, "notes.txt"))
  file.create(file.path(root, "empty.md"))
  # "café" in Latin-1, a name that is not UTF-8 (R itself will not make it).
  if (.Platform$OS.type == "unix") {
    system2("sh", c("-c", shQuote("touch \"$1/$(printf 'caf\\351')\""), "sh", shQuote(root)))
  }
  msgs <- character()
  files <- withCallingHandlers(resource_files(root), message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  by_name <- stats::setNames(files, vapply(files, function(r) r$name, ""))
  # Each file once: the loops are not entered, the link to .env is refused.
  expect_named(by_name, c("bmi.csv", "empty.md", "notes.txt", "sub/a.txt"))
  expect_match(msgs, "env (a link to a hidden file)", fixed = TRUE)
  expect_match(msgs, "self/ (a link to a directory)", fixed = TRUE)
  expect_match(msgs, "sub/loop/ (a link to a directory)", fixed = TRUE)
  if (.Platform$OS.type == "unix") expect_match(msgs, "caf\\xe9 (a name that is not UTF-8)", fixed = TRUE)
  # A CSV whose first bytes look like a BMP image is still CSV text; a .txt
  # holding a PNG is an image; an empty file is empty text.
  expect_identical(by_name$bmi.csv$mime_type, "text/csv")
  expect_identical(by_name$bmi.csv$kind, "text")
  expect_identical(by_name$notes.txt$mime_type, "image/png")
  expect_identical(by_name$notes.txt$kind, "blob")
  expect_identical(by_name$empty.md$body, "")
})
