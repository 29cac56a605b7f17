# RULES S10: a server that cannot start says why. Each case runs a real
# server script with `Rscript` (as a client or a process manager starts it),
# and checks what a user sees in the client's log: standard error holds one
# line naming the cause ("Error in `mcp_server()`: ..."; R adds "Execution halted"), the
# server never said it was serving, and the exit status is not 0.

skip_on_cran()

# Run `code` (lines of a server script) with `env` added to the
# environment, standard input closed; returns the exit status and the lines
# of standard error.
run_failing_server <- function(code, env = character()) {
  skip_if_not_installed("processx")
  script <- tempfile(fileext = ".R")
  writeLines(c("library(mcplite)", code), script)
  on.exit(unlink(script))
  clean <- c(
    MCPLITE_TRANSPORT = NA, MCPLITE_HOST = NA, MCPLITE_PORT = NA, MCPLITE_TOKEN = NA,
    MCPLITE_ALLOW_PUBLIC = NA, MCPLITE_REPLICA = NA, MCPLITE_PROGRESS_INTERVAL = NA
  )
  penv <- Sys.getenv()
  penv <- penv[setdiff(names(penv), names(clean))]
  res <- processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
    env = c(penv, R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), env),
    stdin = NULL, error_on_status = FALSE, timeout = 60
  )
  list(status = res$status, stderr = strsplit(res$stderr, "\n", fixed = TRUE)[[1]], stdout = res$stdout)
}

# One line naming the function that failed (RULES R9.2) and the cause,
# nothing served, a non-zero exit status.
expect_says_why <- function(res, cause, fun = "mcp_server") {
  said <- setdiff(res$stderr, c("Execution halted", ""))
  expect_length(said, 1L)
  expect_match(said, paste0("^Error in `", fun, "\\(\\)`: "))
  expect_match(said, cause)
  expect_false(any(grepl("serving MCP", res$stderr, fixed = TRUE)))
  expect_false(identical(res$status, 0L))
  expect_identical(res$stdout, "")
}

echo_script <- c(
  'echo <- tool(function(x) x, "Echo.", name = "echo", arguments = list(x = type_string()))',
  "mcp_server(echo)"
)
token <- strrep("0123456789abcdef", 2L)

test_that("a port in use is named, with what to do", {
  port <- free_port()
  held <- serverSocket(port)
  on.exit(close(held), add = TRUE)
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = port))
  expect_says_why(res, sprintf("cannot listen on 127\\.0\\.0\\.1:%d: the port is in use", port))
})

test_that("an address that is not this machine's is named", {
  # 192.0.2.0/24 is reserved for documentation (RFC 5737): no machine has it.
  res <- run_failing_server(echo_script, c(
    MCPLITE_TRANSPORT = "http", MCPLITE_HOST = "192.0.2.1", MCPLITE_PORT = free_port(), MCPLITE_TOKEN = token
  ))
  expect_says_why(res, "cannot listen on 192\\.0\\.2\\.1:[0-9]+: the address is not one of this machine's")
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_HOST = "no-such-host.invalid"))
  expect_says_why(res, "cannot resolve host \"no-such-host\\.invalid\"")
})

test_that("a public address without a token is refused, saying how to set one", {
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_HOST = "0.0.0.0", MCPLITE_PORT = free_port()))
  expect_says_why(res, "refusing to serve on 0\\.0\\.0\\.0 \\(not a loopback address\\) without a token: set a token \\(MCPLITE_TOKEN\\)")
})

test_that("token rules and bad environment variables are named", {
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = "has a space in it and more"))
  expect_says_why(res, "The environment variable `MCPLITE_TOKEN` must be")
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = "short-token"))
  expect_says_why(res, "`MCPLITE_TOKEN` is 11 characters long: a token must have at least 16")
  expect_false(any(grepl("short-token", res$stderr, fixed = TRUE)))
  # RULES H6.2: the shipped template's placeholder, and a token that repeats a few characters.
  placeholder <- "replace-me-with-the-output-of-openssl-rand-hex-32"
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = placeholder))
  expect_says_why(res, "looks like a placeholder, not a secret: make one with `openssl rand -hex 32`")
  expect_false(any(grepl(placeholder, res$stderr, fixed = TRUE)))
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_TOKEN = strrep("ab", 16)))
  expect_says_why(res, "is too easy to guess")
  # A tokens file others can read is refused when the server binds (the
  # engine checks it), after R's error printing was switched off.
  tokens <- withr::local_tempfile()
  writeLines(paste("alice", token), tokens)
  Sys.chmod(tokens, "644", use_umask = FALSE)
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = free_port(),
    MCPLITE_TOKENS_FILE = tokens))
  expect_says_why(res, "the tokens file .* is accessible to others \\(mode 644\\)")
  expect_false(any(grepl(token, res$stderr, fixed = TRUE)))
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "carrier-pigeon"))
  expect_says_why(res, "The environment variable `MCPLITE_TRANSPORT` must be \"stdio\" or \"http\"")
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_PORT = "eighty"))
  expect_says_why(res, "The environment variable `MCPLITE_PORT` must be a whole number")
  res <- run_failing_server(echo_script, c(MCPLITE_PROGRESS_INTERVAL = "soon"))
  expect_says_why(res, "The environment variable `MCPLITE_PROGRESS_INTERVAL` must be")
  res <- run_failing_server(echo_script, c(MCPLITE_TRANSPORT = "http", MCPLITE_REPLICA = "r 1"))
  expect_says_why(res, "The environment variable `MCPLITE_REPLICA` must be")
})

test_that("bad tool definitions are named, over stdio and over HTTP", {
  for (transport in c("stdio", "http")) {
    env <- c(MCPLITE_TRANSPORT = transport)
    res <- run_failing_server("mcp_server(list(function(x) x))", env)
    expect_says_why(res, "`tools\\[\\[1\\]\\]` must be a tool made by `tool\\(\\)`")
    res <- run_failing_server(c(
      'a <- tool(function(x) x, "A.", name = "a", arguments = list(x = type_string()))',
      "mcp_server(list(a, a))"
    ), env)
    expect_says_why(res, "`tools` must have unique names; repeated: \"a\"")
    res <- run_failing_server(
      'mcp_server(tool(function(x) x, "A.", name = "bad name!", arguments = list(x = type_string())))', env
    )
    # tool() fails first, called by the script before mcp_server() runs.
    expect_says_why(res, "`name` must be 1 to 128 ASCII letters", fun = "tool")
  }
})

test_that("S10.2: with workers, a bad HTTP configuration is said before any worker starts", {
  skip_on_os("windows")
  # A worker runs the script again (MCPLITE_WORKER set): it would leave a
  # file behind.
  marks <- withr::local_tempdir()
  script <- c(
    sprintf('if (nzchar(Sys.getenv("MCPLITE_WORKER"))) file.create(file.path("%s", Sys.getpid()))', marks),
    echo_script
  )
  tokens <- withr::local_tempfile()
  writeLines(c(paste("alice", token), "bob too-short"), tokens)
  Sys.chmod(tokens, "600")
  res <- run_failing_server(script, c(MCPLITE_TRANSPORT = "http", MCPLITE_WORKERS = "2", MCPLITE_TOKENS_FILE = tokens))
  expect_says_why(res, sprintf("the token of \"bob\" \\(the tokens file %s, line 2\\) is 9 characters long", tokens))
  port <- free_port()
  held <- serverSocket(port)
  on.exit(close(held), add = TRUE)
  res <- run_failing_server(script, c(MCPLITE_TRANSPORT = "http", MCPLITE_WORKERS = "2", MCPLITE_PORT = port))
  expect_says_why(res, sprintf("cannot listen on 127\\.0\\.0\\.1:%d: the port is in use", port))
  expect_length(list.files(marks), 0L)
})
