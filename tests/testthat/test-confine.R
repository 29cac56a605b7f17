# Confined workers (RULES N7): each "cannot" observed with tools written
# without package_tools(), so no classifier stands in the way: the kernel
# refuses. The engine's own test (rust/engine/src/confine.rs) does the same
# without R.

test_that("N7.1: confine is checked before anything starts", {
  add <- tool(function(x) x, name = "id", description = "Identity.", arguments = list(x = type_number()))
  expect_error(mcp_server(add, confine = NA), "`confine`", class = "mcplite_error")
  withr::local_envvar(MCPLITE_WORKERS = NA)
  skip_on_os(c("windows", "mac", "solaris"))
  expect_error(mcp_server(add, confine = TRUE), "`workers` to 2 or more", class = "mcplite_error_workers")
  expect_error(mcp_server(add, confine = TRUE, workers = 1), "`workers` to 2 or more",
               class = "mcplite_error_workers")
})

test_that("N7.2: the policy reads R and the libraries, writes the temporary directory and package tools' roots, never the working directory", {
  root <- normalizePath(withr::local_tempdir())
  # A working directory as a server has it: outside R's temporary directory.
  wd <- normalizePath(withr::local_tempdir(tmpdir = dirname(tempdir())))
  withr::local_dir(wd)
  readers <- package_tools("utils", include = "read.csv", allow = "read_files", root = root, quiet = TRUE)
  p <- confine_policy(readers)
  expect_true(root %in% p$write)
  expect_true(tempdir() %in% p$write)
  expect_true(all(c(R.home(), .libPaths()) %in% p$read))
  expect_false(any(startsWith(wd, c(p$read, p$write)[c(p$read, p$write) != "/"])))
  expect_false(any(c("/proc", "/etc", "/root", "/home") %in% c(p$read, p$write)))
  # Without package tools, no root.
  plain <- tool(function() 1, name = "one", description = "One.")
  expect_identical(setdiff(confine_policy(list(plain))$write, c(tempdir(), "/dev/null")), character())
})

test_that("N7.2: a confined worker cannot run programs, connect, read or write beyond its policy, or see secrets", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_if_not(identical(Sys.info()[["sysname"]], "Linux"), "Linux only")
  dir <- withr::local_tempdir()
  canary <- file.path(dir, "canary.txt")
  token <- paste0("canary-", paste(sample(letters, 16, TRUE), collapse = ""))
  writeLines(token, canary)
  marker <- file.path(dir, "marker")
  # A live listener: the unconfined run below shows a connection succeeds.
  listener <- NULL
  for (i in 1:20) {
    port <- sample(20000:40000, 1)
    listener <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(listener)) break
  }
  skip_if(is.null(listener), "no free port for a listener")
  on.exit(close(listener), add = TRUE)
  script <- file.path(dir, "server.R")
  writeLines(c(
    "library(mcplite)",
    "tools <- list(",
    "  tool(function() as.character(suppressWarnings(system('true'))), name = 'run', description = 'Run a program.'),",
    "  tool(function(path) paste(readLines(path), collapse = ''), name = 'read', description = 'Read.',",
    "       arguments = list(path = type_string())),",
    "  tool(function(path) { writeLines('x', path); 'written' }, name = 'write', description = 'Write.',",
    "       arguments = list(path = type_string())),",
    "  tool(function(port) { con <- socketConnection('127.0.0.1', port, timeout = 2); close(con); 'connected' },",
    "       name = 'connect', description = 'Connect.', arguments = list(port = type_integer())),",
    "  tool(function() { f <- tempfile(); writeLines('scratch', f); readLines(f) }, name = 'scratch',",
    "       description = 'Use the temporary directory.'),",
    "  tool(function() Sys.getenv('MCPLITE_TEST_SECRET', 'unset'), name = 'secret', description = 'Read a secret.'),",
    "  tool(function() sum(1:10), name = 'compute', description = 'Compute.')",
    ")",
    "mcp_server(tools, workers = 2, confine = Sys.getenv('TEST_CONFINE') == '1')"
  ), script)
  calls <- list(
    run = NULL, read = list(path = canary), write = list(path = marker), connect = list(port = port),
    scratch = NULL, secret = NULL, compute = NULL
  )
  lines <- c(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    vapply(seq_along(calls), function(i) {
      params <- list(name = names(calls)[[i]])
      if (!is.null(calls[[i]])) params$arguments <- calls[[i]]
      as.character(jsonlite::toJSON(list(jsonrpc = "2.0", id = i, method = "tools/call", params = params),
                                    auto_unbox = TRUE))
    }, "")
  )
  input <- file.path(dir, "input.jsonl")
  writeLines(lines, input)
  serve <- function(confine) {
    res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
      stdin = input, error_on_status = FALSE, timeout = 120,
      env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
              MCPLITE_TEST_SECRET = token, TEST_CONFINE = if (confine) "1" else "0")
    )
    expect_identical(res$status, 0L, info = res$stderr)
    out <- lapply(strsplit(sub("\n$", "", res$stdout), "\n", fixed = TRUE)[[1]], jsonlite::fromJSON,
                  simplifyVector = FALSE)
    ids <- vapply(out, function(m) as.character(m$id), "")
    results <- lapply(names(calls), function(name) {
      r <- out[[match(as.character(match(name, names(calls))), ids)]]$result
      list(error = isTRUE(r$isError), text = r$content[[1]]$text)
    })
    stats::setNames(results, names(calls))
  }
  withr::local_envvar(MCPLITE_WORKERS = NA, MCPLITE_TRANSPORT = NA)
  # Unconfined, each of these works: the test can see the difference.
  free <- serve(FALSE)
  expect_identical(free$run, list(error = FALSE, text = "0"))
  expect_identical(free$read, list(error = FALSE, text = token))
  expect_identical(free$write, list(error = FALSE, text = "written"))
  expect_true(file.exists(marker))
  unlink(marker)
  expect_identical(free$connect, list(error = FALSE, text = "connected"))
  expect_identical(free$secret$text, token)
  # Confined, the kernel refuses.
  held <- serve(TRUE)
  expect_identical(held$run$text, "127") # the shell could not be started
  expect_true(held$read$error)
  expect_false(grepl(token, held$read$text, fixed = TRUE))
  expect_true(held$write$error)
  expect_false(file.exists(marker))
  expect_true(held$connect$error)
  expect_identical(held$secret$text, "unset")
  # What a worker needs still works.
  expect_identical(held$scratch, list(error = FALSE, text = "scratch"))
  expect_identical(held$compute, list(error = FALSE, text = "55"))
})
