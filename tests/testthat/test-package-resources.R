# package_resources() (RULES U5.1).

read_text <- function(client, uri) mcp_read_resource(client, uri)[[1]]$text

test_that("U5.1: each help page is a resource with the page as ?topic prints it", {
  pages <- package_resources("stats", topics = c("t.test", "lm", "pt"), vignettes = FALSE, cache = FALSE)
  # The pages documenting the topics, by page name (pt is on ?TDist).
  expect_named(pages, c("r-help://stats/TDist", "r-help://stats/lm", "r-help://stats/t.test"))
  t <- pages[["r-help://stats/t.test"]]
  expect_s3_class(t, "mcplite_resource")
  expect_identical(t$name, "t.test")
  expect_identical(t$title, "Student's t-Test")
  expect_identical(t$mime_type, "text/plain")
  # The text is what R's own renderer gives for the page.
  out <- tempfile()
  tools::Rd2txt(tools::Rd_db("stats")[["t.test.Rd"]], out = out, package = "stats",
                options = list(underline_titles = FALSE), outputEncoding = "UTF-8")
  expect_identical(t$body, paste0(paste(readLines(out, encoding = "UTF-8"), collapse = "\n"), "\n"))
  # Served and read by a client, as any resource.
  client <- local_mcp_connect(tools = mcp_handler(list(), resources = pages))
  listed <- mcp_list_resources(client)
  expect_named(listed, names(pages))
  expect_identical(listed[["r-help://stats/TDist"]]$title, "The Student t Distribution")
  expect_identical(read_text(client, "r-help://stats/t.test"), t$body)
  expect_match(read_text(client, "r-help://stats/TDist"), "pt(q, df, ncp, lower.tail = TRUE, log.p = FALSE)",
               fixed = TRUE)
})

test_that("U5.1: a page name a URI cannot hold is percent-encoded, and the URI reads it", {
  pages <- package_resources("base", topics = "rownames", vignettes = FALSE, cache = FALSE)
  expect_named(pages, "r-help://base/row%2Bcolnames")
  expect_identical(pages[[1]]$name, "row+colnames")
  client <- local_mcp_connect(tools = mcp_handler(list(), resources = pages))
  expect_match(read_text(client, "r-help://base/row%2Bcolnames"), "Row and Column Names")
  expect_identical(mcplite:::uri_segment(":= ü"), "%3A%3D%20%C3%BC")
})

test_that("U5.1: vignettes are their installed sources", {
  skip_if_not(nrow(tools::getVignetteInfo("data.table")) > 0L, "data.table installed without vignettes")
  docs <- package_resources("data.table", help = FALSE)
  info <- tools::getVignetteInfo("data.table")
  expect_true("r-vignette://data.table/datatable-intro" %in% names(docs))
  intro <- docs[["r-vignette://data.table/datatable-intro"]]
  expect_identical(intro$mime_type, "text/markdown")
  expect_identical(intro$title, unname(info[info[, "File"] == "datatable-intro.Rmd", "Title"]))
  src <- file.path(info[1, "Dir"], "doc", "datatable-intro.Rmd")
  expect_identical(intro$body, paste0(paste(readLines(src, encoding = "UTF-8"), collapse = "\n"), "\n"))
  # help = FALSE: no page; a package without vignettes has none.
  expect_false(any(startsWith(names(docs), "r-help://")))
  expect_length(package_resources("stats", help = FALSE), 0L)
})

test_that("U5.1: code in a help page is never run, and pages are cached", {
  lib <- install_test_package("mcplitesexpr", list(
    NAMESPACE = "export(f)",
    "R/f.R" = "f <- function() 1",
    "man/f.Rd" = c(
      "\\name{f}", "\\alias{f}", "\\title{A page with code}",
      "\\description{Made \\Sexpr[stage=render]{Sys.setenv(MCPLITE_SEXPR_RAN = 'yes'); 'at render'}.}",
      "\\usage{f()}"
    )
  ))
  withr::local_libpaths(lib, action = "prefix")
  withr::local_envvar(MCPLITE_SEXPR_RAN = NA)
  cache <- withr::local_tempdir()
  pages <- package_resources("mcplitesexpr", cache = cache)
  expect_identical(Sys.getenv("MCPLITE_SEXPR_RAN"), "")
  expect_match(pages[["r-help://mcplitesexpr/f"]]$body, "Sexpr[stage=render]", fixed = TRUE)
  # R's own help would have run it: the page does hold code.
  out <- tempfile()
  tools::Rd2txt(tools::Rd_db("mcplitesexpr", lib.loc = lib)[["f.Rd"]], out = out)
  expect_identical(Sys.getenv("MCPLITE_SEXPR_RAN"), "yes")
  Sys.unsetenv("MCPLITE_SEXPR_RAN")
  # Cached on disk: a new session's call reads the file instead of rendering
  # (a page marked in the file comes back marked).
  file <- file.path(cache, "help-mcplitesexpr.rds")
  entry <- readRDS(file)
  entry$pages$f$text <- "from the cache\n"
  saveRDS(entry, file)
  rm(list = ls(mcplite:::docs_memory), envir = mcplite:::docs_memory)
  expect_identical(package_resources("mcplitesexpr", cache = cache)[[1]]$body, "from the cache\n")
  expect_identical(package_resources("mcplitesexpr", cache = FALSE)[[1]]$body, pages[[1]]$body)
})

test_that("U5.1: arguments are checked", {
  expect_error(package_resources(), class = "mcplite_error_argument")
  expect_error(package_resources("notapackage"), "not installed", class = "mcplite_error_argument")
  expect_error(package_resources("stats", help = NA), "`help` must be TRUE or FALSE",
               class = "mcplite_error_argument")
  expect_error(package_resources("stats", topics = 1), "`topics` must be", class = "mcplite_error_argument")
  expect_error(package_resources("stats", topics = "no_such_topic", cache = FALSE),
               "`topics` names \"no_such_topic\", which no help page of stats documents",
               class = "mcplite_error_argument")
  expect_error(package_resources("stats", cache = 1), "`cache` must be", class = "mcplite_error_argument")
})
