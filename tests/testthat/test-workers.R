# Worker processes (RULES section 14): the arguments and environment
# variables, the command line a worker starts with (and the launch modes that
# have none), and the launch modes end to end over stdio with Rscript -e and
# R -f. Concurrency, crashes, cancellation, the queue and orphans are tested
# with the Python SDK (tests/clients/python/test_python_workers.py) and the
# engine's fake workers (rust/engine/tests/workers/).

test_that("N1.1: workers and max_queue are checked, from the arguments or the environment", {
  withr::local_envvar(MCPLITE_WORKERS = NA, MCPLITE_MAX_QUEUE = NA)
  expect_null(worker_options(NULL, NULL))
  expect_null(worker_options(1, 0))
  for (bad in list(0, 1.5, "2", NA, c(2, 3), 1025)) {
    expect_error(worker_options(bad, NULL), "`workers`", class = "mcplite_error")
  }
  expect_error(worker_options(2, -1), "`max_queue`", class = "mcplite_error")
  expect_error(worker_options(2, 0.5), "`max_queue`", class = "mcplite_error")
  withr::local_envvar(MCPLITE_WORKERS = "many")
  expect_error(worker_options(NULL, NULL), "environment variable `MCPLITE_WORKERS`", class = "mcplite_error")
  withr::local_envvar(MCPLITE_WORKERS = "1", MCPLITE_MAX_QUEUE = "-3")
  expect_error(worker_options(NULL, NULL), "environment variable `MCPLITE_MAX_QUEUE`", class = "mcplite_error")
})

test_that("N5.3: the memory a worker may keep after a call comes from MCPLITE_WORKER_MEMORY", {
  withr::local_envvar(MCPLITE_WORKER_MEMORY = NA)
  expect_identical(worker_memory_growth(), 1024^3)
  withr::local_envvar(MCPLITE_WORKER_MEMORY = "256M")
  expect_identical(worker_memory_growth(), 256 * 1024^2)
  withr::local_envvar(MCPLITE_WORKER_MEMORY = "none")
  expect_identical(worker_memory_growth(), Inf)
  withr::local_envvar(MCPLITE_WORKER_MEMORY = "a lot")
  expect_error(worker_memory_growth(), "`MCPLITE_WORKER_MEMORY` must be a number of bytes",
               class = "mcplite_error_workers")
  # Checked before any worker starts: worker_options() reads it first.
  expect_error(worker_options(2, NULL), "`MCPLITE_WORKER_MEMORY`", class = "mcplite_error_workers")
})

test_that("N1.2: a session without a script to run again cannot have workers", {
  r <- file.path(R.home("bin"), "exec", "R")
  expect_error(worker_command(c(r, "--no-echo"), interactive = TRUE), "interactive session",
    class = "mcplite_error_workers"
  )
  expect_error(worker_command(c(r, "--vanilla", "-q"), interactive = FALSE), "standard input",
    class = "mcplite_error_workers"
  )
  expect_error(worker_command(c(r, "--no-echo", "--file=-"), interactive = FALSE), "standard input",
    class = "mcplite_error_workers"
  )
  expect_error(
    worker_command(c(r, "--no-echo", "--file=no/such/server.R"), interactive = FALSE),
    "\"no/such/server.R\" is not found",
    class = "mcplite_error_workers"
  )
  expect_error(
    worker_command(c("/no/such/R", "-e", "1"), interactive = FALSE), "\"/no/such/R\" is not found",
    class = "mcplite_error_workers"
  )
})

test_that("N1.2: the worker's command line is the server's, with the script made absolute", {
  r <- file.path(R.home("bin"), "exec", "R")
  dir <- withr::local_tempdir()
  writeLines("1", file.path(dir, "server.R"))
  withr::local_dir(dir)
  full <- normalizePath(file.path(dir, "server.R"))
  cmd <- worker_command(c(r, "--no-echo", "--no-restore", "--file=server.R", "--args", "a"), interactive = FALSE)
  expect_identical(cmd$program, r)
  expect_identical(cmd$args, c("--no-echo", "--no-restore", paste0("--file=", full), "--args", "a"))
  cmd <- worker_command(c(r, "-f", "server.R", "--no-echo"), interactive = FALSE)
  expect_identical(cmd$args, c("-f", full, "--no-echo"))
  cmd <- worker_command(c(r, "--no-echo", "-e", "mcplite::mcp_server(x, workers = 2)"), interactive = FALSE)
  expect_identical(cmd$args, c("--no-echo", "-e", "mcplite::mcp_server(x, workers = 2)"))
  # A path with spaces, as Rscript writes it.
  dir.create(file.path(dir, "my tools"))
  writeLines("1", file.path(dir, "my tools", "server.R"))
  cmd <- worker_command(c(r, "--no-echo", "--file=my~+~tools/server.R"), interactive = FALSE)
  spaced <- normalizePath(file.path(dir, "my tools", "server.R"))
  expect_identical(cmd$args, c("--no-echo", paste0("--file=", spaced)))
  expect_identical(worker_launch(cmd)$env, c(MCPLITE_WORKER_SOURCE = paste0("file:", spaced)))
})

test_that("N1.2: a worker starts with worker_main() in place of the script, which it reads from the environment", {
  r <- file.path(R.home("bin"), "exec", "R")
  launch <- worker_launch(list(program = r, args = c("--no-echo", "--file=/srv/server.R", "--args", "a", "-e", "x")))
  expect_identical(launch$program, r)
  expect_identical(launch$args, c("--no-echo", "-e", "mcplite:::worker_main()", "--args", "a", "-e", "x"))
  expect_identical(launch$env, c(MCPLITE_WORKER_SOURCE = "file:/srv/server.R"))
  launch <- worker_launch(list(program = r, args = c("-f", "/srv/server.R", "--vanilla")))
  expect_identical(launch$args, c("--vanilla", "-e", "mcplite:::worker_main()"))
  expect_identical(launch$env, c(MCPLITE_WORKER_SOURCE = "file:/srv/server.R"))
  # The expressions of `-e` are not on the worker's command line.
  launch <- worker_launch(list(program = r, args = c("--no-echo", "-e", "token~+~<-~+~1", "-e", "mcp_server(x)")))
  expect_identical(launch$args, c("--no-echo", "-e", "mcplite:::worker_main()"))
  expect_identical(launch$env, c(MCPLITE_WORKER_SOURCE = "exprs:token~+~<-~+~1\nmcp_server(x)"))
})

test_that("N1.2: live session tools cannot be combined with workers", {
  add <- tool(function(x) x, name = "id", description = "Identity.", arguments = list(x = type_number()))
  expect_error(
    mcp_server(list(add), session_tools = TRUE, workers = 2), "`session_tools = TRUE`",
    class = "mcplite_error_workers"
  )
})

# Run `args` (an R command line) with `input` on stdin, then EOF.
run_r <- function(program, args, input) {
  withr::local_envvar(MCPLITE_WORKERS = NA, MCPLITE_TRANSPORT = NA)
  f <- tempfile(fileext = ".jsonl")
  on.exit(unlink(f), add = TRUE)
  writeLines(input, f)
  processx::run(program, args,
    stdin = f, error_on_status = FALSE, timeout = 120,
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  )
}

worker_script <- '
library(mcplite)
pid <- tool(function() Sys.getpid(), name = "pid", description = "The process id.")
mcp_server(list(pid), workers = 2)
cat("after mcp_server\\n", file = stderr())
'

calls_input <- c(
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pid"}}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid"}}'
)

expect_worker_answers <- function(res) {
  expect_identical(res$status, 0L, info = res$stderr)
  lines <- strsplit(sub("\n$", "", res$stdout), "\n", fixed = TRUE)[[1]]
  expect_length(lines, 3L)
  msgs <- lapply(lines, jsonlite::fromJSON, simplifyVector = FALSE)
  ids <- vapply(msgs, function(m) m$id, numeric(1))
  expect_setequal(ids, 0:2)
  for (m in msgs[ids > 0]) {
    expect_false(m$result$isError)
    expect_match(m$result$content[[1]]$text, "^[0-9]+$")
  }
  # The rest of the script runs in the server only, after it stopped.
  expect_identical(lengths(regmatches(res$stderr, gregexpr("after mcp_server", res$stderr))), 1L)
}

test_that("N1.2: Rscript -e and R -f start workers that serve calls", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  expect_worker_answers(run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", worker_script), calls_input))
  dir <- withr::local_tempdir()
  writeLines(worker_script, file.path(dir, "server.R"))
  withr::local_dir(dir)
  expect_worker_answers(run_r(file.path(R.home("bin"), "R"), c("--vanilla", "--no-echo", "-f", "server.R"), calls_input))
})

test_that("N1.2: what a worker prints before it fails comes before the server's reason", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  # A worker that prints a line in two pieces, then fails to start.
  script <- '
library(mcplite)
if (nzchar(Sys.getenv("MCPLITE_WORKER"))) {
  cat("last words of worker", Sys.getenv("MCPLITE_WORKER"), file = stderr())
  cat(": cannot go on\\n", file = stderr())
  quit(status = 3)
}
mcp_server(tool(function() 1, name = "one", description = "x"), workers = 2)
'
  res <- run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", script), calls_input)
  expect_false(res$status == 0L)
  expect_identical(res$stdout, "")
  said <- regexpr("last words of worker [12]: cannot go on\n", res$stderr)
  reason <- regexpr("exited with status 3", res$stderr, fixed = TRUE)
  expect_gt(said, 0L, label = res$stderr)
  expect_gt(reason, said)
})

test_that("N1.4: a script that builds other tools in a worker fails the server at start", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- '
library(mcplite)
name <- if (nzchar(Sys.getenv("MCPLITE_WORKER"))) "changed" else "pid"
mcp_server(tool(function() 1, name = name, description = "x"), workers = 2)
'
  res <- run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", script), calls_input)
  expect_false(res$status == 0L)
  expect_identical(res$stdout, "")
  expect_match(res$stderr, "serves other tools (\"changed\") than the server (\"pid\")", fixed = TRUE)
})

test_that("N1.3: a worker's tools see the script's variables, but no frame number, the global environment or the command line reaches the script", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- '
library(mcplite)
api_key <- "SECRET-in-the-script"
tools <- list(
  tool(function(n) paste(deparse(sys.call(n)), collapse = " "), name = "call_of", description = "x",
       arguments = list(n = type_integer())),
  tool(function(n) paste(ls(sys.frame(n), all.names = TRUE), collapse = ","), name = "frame_of", description = "x",
       arguments = list(n = type_integer())),
  tool(function() paste(ls(globalenv(), all.names = TRUE), collapse = ","), name = "globals", description = "x"),
  tool(function() paste(commandArgs(), collapse = " "), name = "args", description = "x"),
  tool(function() api_key, name = "key", description = "x")
)
mcp_server(tools, workers = 2, instructions = "SECRET-in-the-script")
'
  input <- c(
    calls_input[[1]],
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_of","arguments":{"n":1}}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"frame_of","arguments":{"n":1}}}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"globals"}}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"args"}}',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"key"}}'
  )
  check <- function(res) {
    expect_identical(res$status, 0L, info = res$stderr)
    msgs <- lapply(strsplit(sub("\n$", "", res$stdout), "\n", fixed = TRUE)[[1]], jsonlite::fromJSON,
                   simplifyVector = FALSE)
    text <- function(id) {
      m <- msgs[[match(id, vapply(msgs, function(m) m$id, numeric(1)))]]
      m$result$content[[1]]$text
    }
    expect_identical(text(1), "mcplite:::worker_main()")
    expect_false(grepl("api_key|tools", text(2)))
    expect_identical(text(3), "")
    expect_false(grepl("SECRET", text(4), fixed = TRUE))
    expect_match(text(4), "mcplite:::worker_main()", fixed = TRUE)
    # The tools themselves still find the script's variables.
    expect_identical(text(5), "SECRET-in-the-script")
  }
  check(run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", script), input))
  dir <- withr::local_tempdir()
  writeLines(script, file.path(dir, "server.R"))
  withr::local_dir(dir)
  check(run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "server.R"), input))
})

test_that("N7.7: the wall time of a call in a worker is read from the environment", {
  withr::local_envvar(MCPLITE_CALL_TIMEOUT = NA)
  expect_identical(worker_call_timeout(), 3600)
  withr::local_envvar(MCPLITE_CALL_TIMEOUT = "90")
  expect_identical(worker_call_timeout(), 90)
  withr::local_envvar(MCPLITE_CALL_TIMEOUT = "none")
  expect_identical(worker_call_timeout(), Inf)
  for (bad in c("0", "2.5", "soon", "-1")) {
    withr::local_envvar(MCPLITE_CALL_TIMEOUT = bad)
    expect_error(worker_call_timeout(), "`MCPLITE_CALL_TIMEOUT` must be a whole number of seconds",
                 class = "mcplite_error_workers")
  }
})

test_that("N7.7: a call over its wall time is interrupted, its clean-up runs, and the worker serves the next call", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  mark <- withr::local_tempfile()
  script <- sprintf('
library(mcplite)
tools <- list(
  tool(function() { on.exit(writeLines("cleaned", %s)); Sys.sleep(120); "woke" }, name = "nap", description = "x"),
  tool(function() Sys.getpid(), name = "pid", description = "x")
)
mcp_server(tools, workers = 2)
', deparse(mark))
  input <- c(
    calls_input[[1]],
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap"}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid"}}'
  )
  withr::local_envvar(MCPLITE_CALL_TIMEOUT = "2")
  t0 <- Sys.time()
  res <- run_r(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", script), input)
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 100)
  expect_identical(res$status, 0L, info = res$stderr)
  msgs <- lapply(strsplit(sub("\n$", "", res$stdout), "\n", fixed = TRUE)[[1]], jsonlite::fromJSON,
                 simplifyVector = FALSE)
  nap <- Filter(function(m) identical(m$id, 1L), msgs)[[1]]
  expect_true(nap$result$isError)
  expect_match(nap$result$content[[1]]$text, "ran longer than 2 s", fixed = TRUE)
  expect_match(nap$result$content[[1]]$text, "MCPLITE_CALL_TIMEOUT", fixed = TRUE)
  expect_identical(readLines(mark), "cleaned")
  pid <- Filter(function(m) identical(m$id, 2L), msgs)[[1]]
  expect_match(pid$result$content[[1]]$text, "^[0-9]+$")
})

test_that("H7.1, H7.3, N5.1: over HTTP with workers, the logs name outcomes, the crashed call's tool and token, and count", {
  skip_on_os("windows")
  tokens <- withr::local_tempfile()
  writeLines("alice alice-0c4f9e2b7a1d8e3f5a6b", tokens)
  Sys.chmod(tokens, "600")
  srv <- start_http_server(c(
    "library(mcplite)",
    "die <- tool(function() quit(status = 3), 'Exit.', name = 'die')",
    "fail <- tool(function() stop('no luck'), 'Fail.', name = 'fail')",
    "fine <- tool(function() 'fine', 'Fine.', name = 'fine')",
    "mcp_server(list(die, fail, fine), port = 0L)"
  ), env = c(MCPLITE_TRANSPORT = "http", MCPLITE_WORKERS = "2", MCPLITE_TOKENS_FILE = tokens, MCPLITE_REPLICA = "r8091"))
  expect_match(srv$stderr, "at http://127.0.0.1:[0-9]+/mcp \\(replica r8091; 2 worker processes; 1 token; stop with")
  auth <- "Authorization: Bearer alice-0c4f9e2b7a1d8e3f5a6b"
  call <- function(name) modern_post(srv$url, "tools/call", name = name, params = list(name = name), headers = auth)
  for (name in c("die", "fail", "fine")) expect_identical(call(name)$status, 200L)
  srv$process$signal(tools::SIGTERM)
  srv$process$wait(30000)
  err <- paste0(srv$stderr, srv$process$read_all_error())
  expect_match(err, "mcplite: worker [12] \\(process [0-9]+\\) exited with status 3 during a call of tool \"die\" \\(token \"alice\"\\); starting a new one")
  outcome <- function(tool) {
    line <- grep(sprintf("tool=%s ", tool), strsplit(err, "\n", fixed = TRUE)[[1]], value = TRUE)
    sub(".* outcome=([a-z_]+) .*", "\\1", line)
  }
  expect_identical(c(outcome("die"), outcome("fail"), outcome("fine")), c("crashed", "tool_error", "ok"))
  expect_match(err, "mcplite: HTTP server stopped (SIGTERM): 0 calls drained (0 interrupted), 0 queued calls not run",
    fixed = TRUE)
  expect_identical(srv$process$get_exit_status(), 0L)
})

test_that("G3 with workers over HTTP: a 2026-07-28 call from a client that can be asked gets its log messages", {
  code <- c(
    "library(mcplite)",
    "t <- tool(function() { mcp_log('from the worker'); 'done' }, name = 'logs', description = 'Logs.')",
    "mcp_server(t, transport = 'http', port = 0L, workers = 2)"
  )
  srv <- start_http_server(code)
  for (protocol in c("2025-11-25", "2026-07-28")) {
    conn <- mcp_connect(url = srv$url, protocol = protocol, timeout = 30, log_level = "info",
                        elicitation = function(q) list())
    logs <- character()
    res <- withCallingHandlers(mcp_call(conn, "logs"), mcplite_server_log = function(m) {
      logs <<- c(logs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
    expect_identical(res$content[[1]]$text, "done")
    expect_match(logs, "from the worker", all = FALSE, info = protocol)
    mcp_close(conn)
  }
})
