# Confined workers (RULES N7): each "cannot" observed with tools written
# without package_tools(), so no classifier stands in the way: the kernel
# refuses. The engine's own test (rust/engine/src/confine.rs) does the same
# without R.

test_that("N7.1: confine is checked before anything starts", {
  add <- tool(function(x) x, name = "id", description = "Identity.", arguments = list(x = type_number()))
  expect_error(mcp_server(add, confine = NA), "`confine`", class = "mcplite_error")
  expect_error(mcp_server(add, confine = "yes"), "NULL, TRUE or FALSE", class = "mcplite_error")
  withr::local_envvar(MCPLITE_WORKERS = NA)
  skip_on_os(c("windows", "mac", "solaris"))
  expect_error(mcp_server(add, confine = TRUE, session_tools = TRUE), "cannot be combined with `confine = TRUE`",
               class = "mcplite_error_workers")
  # A wrong limit stops the server before any worker starts.
  withr::local_envvar(MCPLITE_CONFINE_MEMORY = "lots")
  expect_error(mcp_server(add, confine = TRUE, transport = "stdio"), "`MCPLITE_CONFINE_MEMORY`.*\"lots\"",
               class = "mcplite_error_workers")
})

test_that("N7.1: confine = NULL confines package tools where the kernel can, and says when it cannot", {
  plain <- tool(function() 1, name = "one", description = "One.")
  pkg <- package_tools("stats", include = "median", quiet = TRUE)
  expect_false(confine_default(NULL, list(plain)))
  expect_true(confine_default(TRUE, list(plain)))
  expect_false(confine_default(FALSE, pkg))
  expect_true(is_package_tool(pkg[[1]]))
  expect_false(is_package_tool(plain))
  skip_if_not(identical(Sys.info()[["sysname"]], "Linux"), "Linux only")
  skip_if(!is.null(engine_confine_available()), "the kernel cannot confine")
  expect_true(confine_default(NULL, pkg, worker = TRUE))
  expect_false(confine_default(NULL, list(plain), worker = TRUE))
  # With a script to start workers with (as a server has).
  expect_true(confine_default(NULL, c(list(plain), pkg), command = function() list()))
  # Without a script, the package tools run unconfined, and the server says why.
  expect_message(
    res <- confine_default(NULL, pkg, command = function() worker_command(interactive = TRUE)),
    "package tools are not confined: there is no script"
  )
  expect_false(res)
})

test_that("N7.5: the CPU time of a call is read from the environment", {
  withr::local_envvar(MCPLITE_CALL_CPU = NA)
  expect_identical(confine_call_cpu(), 600)
  withr::local_envvar(MCPLITE_CALL_CPU = "30")
  expect_identical(confine_call_cpu(), 30)
  withr::local_envvar(MCPLITE_CALL_CPU = "none")
  expect_identical(confine_call_cpu(), Inf)
  for (bad in c("0", "1.5", "ten", "-3")) {
    withr::local_envvar(MCPLITE_CALL_CPU = bad)
    expect_error(confine_call_cpu(), "`MCPLITE_CALL_CPU` must be a whole number of seconds",
                 class = "mcplite_error_workers")
  }
})

test_that("N7.2: memory and file size limits are read from the environment", {
  withr::local_envvar(MCPLITE_CONFINE_MEMORY = NA, MCPLITE_CONFINE_FILE_SIZE = NA)
  expect_identical(confine_limits(), list(memory = 4 * 1024^3, file_size = 1024^3))
  withr::local_envvar(MCPLITE_CONFINE_MEMORY = "8G", MCPLITE_CONFINE_FILE_SIZE = "none")
  expect_identical(confine_limits(), list(memory = 8 * 1024^3, file_size = Inf))
  withr::local_envvar(MCPLITE_CONFINE_MEMORY = "512 mb", MCPLITE_CONFINE_FILE_SIZE = "1000")
  expect_identical(confine_limits(), list(memory = 512 * 1024^2, file_size = 1000))
  for (bad in c("0", "-1", "4.5G", "4X", "G")) {
    withr::local_envvar(MCPLITE_CONFINE_FILE_SIZE = bad)
    expect_error(confine_limits(), "`MCPLITE_CONFINE_FILE_SIZE` must be a number of bytes",
                 class = "mcplite_error_workers")
  }
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

test_that("N7.2: a confined worker cannot run programs, connect, read or write beyond its policy, exceed its limits, or see secrets", {
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
    "  tool(function() length(raw(1.2e9)), name = 'allocate', description = 'Allocate 1.2 GB.'),",
    "  tool(function() { f <- tempfile(); on.exit(unlink(f)); writeBin(raw(2e6), f); file.size(f) },",
    "       name = 'bigfile', description = 'Write a file of 2 MB.'),",
    "  tool(function() sum(1:10), name = 'compute', description = 'Compute.')",
    ")",
    "mcp_server(tools, workers = 2, confine = Sys.getenv('TEST_CONFINE') == '1')"
  ), script)
  calls <- list(
    run = NULL, read = list(path = canary), write = list(path = marker), connect = list(port = port),
    scratch = NULL, secret = NULL, allocate = NULL, bigfile = NULL, compute = NULL
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
              MCPLITE_TEST_SECRET = token, TEST_CONFINE = if (confine) "1" else "0",
              MCPLITE_CONFINE_MEMORY = "1G", MCPLITE_CONFINE_FILE_SIZE = "1M")
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
  expect_identical(free$allocate, list(error = FALSE, text = "1200000000"))
  expect_identical(free$bigfile, list(error = FALSE, text = "2000000"))
  # Confined, the kernel refuses.
  held <- serve(TRUE)
  expect_identical(held$run$text, "127") # the shell could not be started
  expect_true(held$read$error)
  expect_false(grepl(token, held$read$text, fixed = TRUE))
  expect_true(held$write$error)
  expect_false(file.exists(marker))
  expect_true(held$connect$error)
  expect_identical(held$secret$text, "unset")
  # Beyond the limits (1 GiB of memory, files of 1 MiB) R fails, the worker lives on.
  expect_true(held$allocate$error)
  expect_match(held$allocate$text, "cannot allocate")
  # The file stops growing at the limit.
  expect_lte(as.numeric(held$bigfile$text), 1024^2)
  # What a worker needs still works.
  expect_identical(held$scratch, list(error = FALSE, text = "scratch"))
  expect_identical(held$compute, list(error = FALSE, text = "55"))
})

test_that("N7.1: a server of package tools confines them by default; confine = FALSE does not", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_if_not(identical(Sys.info()[["sysname"]], "Linux"), "Linux only")
  skip_if(!is.null(engine_confine_available()), "the kernel cannot confine")
  dir <- withr::local_tempdir()
  token <- paste0("canary-", paste(sample(letters, 16, TRUE), collapse = ""))
  script <- file.path(dir, "server.R")
  # The classifier is bypassed on purpose (allow): only the confinement of
  # the default stands between the tool and the secret.
  writeLines(c(
    "library(mcplite)",
    "tools <- package_tools('base', include = c('Sys.getenv', 'Sys.getpid'), allow = 'read_secrets', quiet = TRUE)",
    "if (Sys.getenv('TEST_CONFINE') == 'default') mcp_server(tools) else mcp_server(tools, confine = FALSE)"
  ), script)
  lines <- c(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Sys.getenv","arguments":{"x":"MCPLITE_TEST_SECRET"}}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Sys.getpid","arguments":{}}}'
  )
  input <- file.path(dir, "input.jsonl")
  writeLines(lines, input)
  serve <- function(confine) {
    p <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
      stdin = input, stdout = "|", stderr = "|",
      env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
              MCPLITE_TEST_SECRET = token, TEST_CONFINE = confine)
    )
    on.exit(p$kill(), add = TRUE)
    out <- p$read_all_output_lines()
    p$wait(60000)
    expect_identical(p$get_exit_status(), 0L, info = p$read_all_error())
    msgs <- lapply(out, jsonlite::fromJSON, simplifyVector = FALSE)
    ids <- vapply(msgs, function(m) as.character(m$id), "")
    text <- function(id) msgs[[match(id, ids)]]$result$content[[1]]$text
    list(secret = text("1"), pid = as.integer(text("2")), server = p$get_pid())
  }
  withr::local_envvar(MCPLITE_WORKERS = NA, MCPLITE_TRANSPORT = NA)
  open <- serve("false")
  expect_identical(open$secret, token)
  expect_identical(open$pid, open$server)
  held <- serve("default")
  expect_identical(held$secret, "")
  # It ran in a worker, not in the server's process.
  expect_false(identical(held$pid, held$server))
})
