# What an MCP client connection holds (R/client-connection.R): closing it,
# garbage collection and R's exit end the server process; the environment
# a server inherits; the engine reached only through the connection
# methods, the wrappers and bridge_value().

skip_on_cran()
skip_if_not_installed("withr")

test_that("closing, garbage collection and R exiting end the server process", {
  server <- mcp_connect_script(client_server_script())
  pid <- mcp_server_info(server)$pid
  expect_true(process_alive(pid))
  expect_identical(mcp_close(server), "exited with status 0")
  expect_false(process_alive(pid))
  expect_identical(mcp_close(server), "exited with status 0")
  err <- expect_client_error(mcp_call(server, "echo", list(text = "x")), "mcplite_error_connection")
  expect_match(conditionMessage(err), "is closed")

  # The garbage collector does not wait for the server: the connection is
  # closed on a thread of its own (issue 42).
  server <- mcp_connect_script(client_server_script())
  pid <- mcp_server_info(server)$pid
  rm(server)
  gc()
  wait_until(function() !process_alive(pid), "the server to end after garbage collection", 10)

  # a server that ignores EOF and SIGTERM, with a child of its own
  conn <- sh_connect("trap '' TERM; sleep 300 & echo $! >&2; while :; do sleep 1; done")
  wait_until(function() length(mcp_stderr(conn)) > 0L, "the server to report its child")
  grandchild <- as.integer(mcp_stderr(conn)[[1]])
  expect_true(process_alive(grandchild))
  expect_match(mcp_close(conn), "SIGKILL")
  wait_until(function() !process_alive(grandchild), "the server's child to end", 10)

  # R exits without closing: the server goes with it
  out <- system2(
    file.path(R.home("bin"), "Rscript"),
    c("--vanilla", "-e", shQuote(sprintf(
      "s <- mcplite::mcp_connect_script('%s'); cat(mcplite::mcp_server_info(s)$pid)", client_server_script()
    ))),
    stdout = TRUE, stderr = FALSE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))
  )
  pid <- as.integer(out[[length(out)]])
  expect_false(is.na(pid))
  wait_until(function() !process_alive(pid), "the server to end with R", 10)
})

test_that("issue 42: R's garbage collector does not wait for a server to exit", {
  # A server that ignores the end of its input and SIGTERM: closing it takes
  # the grace periods, then SIGKILL. The collector returns while it still
  # runs, and it is ended on the connection's own thread.
  conn <- sh_connect("trap '' TERM; while :; do sleep 1; done")
  pid <- mcp_server_info(conn)$pid
  rm(conn)
  gc()
  expect_true(process_alive(pid))
  wait_until(function() !process_alive(pid), "the server to be killed after garbage collection", 30)
})

test_that("servers get an allowlisted environment plus their env, and a working directory", {
  withr::local_envvar(MCPLITE_TEST_SECRET = "s3cret", LC_MEASUREMENT = "C")
  script <- paste(
    "read call",
    "printf '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"structuredContent\":{\"secret\":\"%s\",\"given\":\"%s\",\"home\":\"%s\",\"lc\":\"%s\",\"dir\":\"%s\"},\"content\":[]}}\\n' \"$MCPLITE_TEST_SECRET\" \"$GIVEN\" \"$HOME\" \"$LC_MEASUREMENT\" \"$(pwd)\"",
    "cat >/dev/null",
    sep = "\n"
  )
  dir <- withr::local_tempdir()
  conn <- sh_connect(script, env = c(GIVEN = "yes"), cwd = dir)
  on.exit(mcp_close(conn), add = TRUE)
  sc <- mcp_call(conn, "env")$structured_content
  expect_identical(sc$secret, "")
  expect_identical(sc$given, "yes")
  expect_identical(sc$home, Sys.getenv("HOME"))
  expect_identical(sc$lc, "C")
  expect_identical(normalizePath(sc$dir), normalizePath(dir))
})

test_that("the client reaches the engine only through the wrappers and bridge_value() (RULES K1.2)", {
  src <- Sys.glob(test_path("..", "..", "R", "client*.R"))
  skip_if_not(length(src) > 0L, "needs the package sources")
  expect_true(all(c("client.R", "client-connection.R") %in% basename(src)))
  code <- unlist(lapply(src, readLines))
  expect_false(any(grepl(".Call(", code, fixed = TRUE)))
  expect_false(any(grepl("mcplite_client_failure", code, fixed = TRUE)))
})
