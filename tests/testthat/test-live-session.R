# Live R sessions (RULES R10): a real interactive R under a pseudo-terminal
# (tmux) opens itself with mcp_session(); a real MCP client (mcp_connect())
# drives a server started with session_tools = TRUE.

# -- helpers --------------------------------------------------------------------

skip_if_no_live <- function() {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("tmux")), "tmux is not installed (scripts/setup.sh installs it)")
}

# A private directory for sessions (and one for the test's own files); with
# `mode`, one that other users may reach (under /tmp, since R's own temporary
# directory is private).
private_dir <- function(env = parent.frame(), mode = "0700") {
  d <- if (mode == "0700") withr::local_tempdir(.local_envir = env) else withr::local_tempdir(tmpdir = "/tmp", .local_envir = env)
  Sys.chmod(d, mode, use_umask = FALSE)
  normalizePath(d)
}

# The tests' own tmux server, its socket in R's temporary directory (removed
# with it).
tmux_socket <- file.path(tempdir(), "tmux-live")

tmux <- function(...) {
  system2("tmux", c("-S", tmux_socket, ...), stdout = TRUE, stderr = TRUE)
}

# An interactive R in a tmux pane; `dir` is its session directory. Files it
# writes for the test go to `files`.
# `vars`: other environment variables instead of MCPLITE_SESSION_DIR (`dir`
# is then where the test expects the socket).
start_r <- function(dir, env = parent.frame(), user = NULL, vars = c(MCPLITE_SESSION_DIR = dir)) {
  name <- paste0("r", as.integer(stats::runif(1, 1, 1e6)))
  files <- private_dir(env, mode = if (is.null(user)) "0700" else "0777")
  libs <- paste(.libPaths(), collapse = ":")
  r <- shQuote(file.path(R.home("bin"), "R"))
  unset <- paste("-u", setdiff(c("MCPLITE_SESSION_DIR", "XDG_RUNTIME_DIR", "TMPDIR"), names(vars)))
  cmd <- paste("env", paste(unset, collapse = " "), paste0(names(vars), "=", shQuote(vars), collapse = " "),
               paste0("R_LIBS=", shQuote(libs)), "LANG=C.UTF-8", r, "--quiet --no-save --no-restore")
  if (!is.null(user)) {
    cmd <- paste("setpriv --reuid", user, "--regid", user, "--clear-groups", cmd)
  }
  tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", shQuote(cmd))
  # (A test that quits this R ends the tmux session too: no session to kill
  # is no failure.)
  withr::defer(suppressWarnings(tmux("kill-session", "-t", name)), envir = env)
  s <- list(name = name, files = files, dir = dir, n = 0L)
  s$pid <- r_run(s, 'cat(Sys.getpid(), file = "%s/pid")', result = "pid")
  s
}

screen <- function(s) paste(tmux("capture-pane", "-p", "-t", s$name), collapse = "\n")

r_type <- function(s, code) {
  tmux("send-keys", "-t", s$name, "-l", shQuote(code))
  tmux("send-keys", "-t", s$name, "Enter")
}

# Type `code` at the prompt (`%s` stands for the directory of files), then
# wait until R has run it and is at the prompt again; returns the contents
# of the file `result` if given.
r_run <- function(s, code, result = NULL, timeout = 30) {
  marker <- file.path(s$files, paste0("done-", as.integer(stats::runif(1, 1, 1e9))))
  r_type(s, paste0(gsub("%s", s$files, code, fixed = TRUE), '; cat("", file = "', marker, '")'))
  wait_until(function() file.exists(marker), paste0("R to run `", code, "`\n", screen(s)), timeout)
  if (!is.null(result)) paste(readLines(file.path(s$files, result), warn = FALSE), collapse = "\n")
}

open_session <- function(s, args = "") {
  r_run(s, paste0("h <- mcplite::mcp_session(", args, ")"))
  sock <- file.path(s$dir, paste0(s$pid, ".sock"))
  wait_until(function() file.exists(sock), "the session's socket")
  sock
}

server_script <- function(dir, wait = 30) {
  path <- file.path(dir, "server.R")
  writeLines(c(
    "library(mcplite)",
    "nrow_of <- tool(function(name) nrow(get(name, envir = globalenv())), name = 'nrow_of',",
    "  description = 'Rows of a data frame.', arguments = list(name = type_string()))",
    "where <- tool(function() Sys.getpid(), name = 'where', description = 'The pid that ran it.')",
    "mark <- tool(function() { assign('marker_ran', TRUE, envir = globalenv()); 'marked' },",
    "  name = 'mark', description = 'Leave a mark.')",
    "talk <- tool(function() { cat('printed by the tool\\n'); message('said by the tool');",
    "  warning('warned by the tool'); 'talked' }, name = 'talk', description = 'Talk.')",
    "fails <- tool(function() stop('failed on purpose'), name = 'fails', description = 'Fail.')",
    "spin <- tool(function() { on.exit(assign('spin_cleaned_up', TRUE, envir = globalenv())); repeat x <- sum(1:10) },",
    "  name = 'spin', description = 'Never return.')",
    sprintf("mcp_server(list(nrow_of, where, mark, talk, fails, spin), session_tools = TRUE, session_wait = %s)", wait)
  ), path)
  path
}

connect <- function(dir, files, wait = 30, env = parent.frame(), vars = c(MCPLITE_SESSION_DIR = dir)) {
  srv <- mcp_connect_script(server_script(files, wait), env = vars)
  withr::defer(mcp_close(srv), envir = env)
  srv
}

text_of <- function(res) paste(vapply(res$content, function(b) b$text, ""), collapse = "\n")

sessions_of <- function(srv) {
  mcp_call(srv, "list_r_sessions")$structured_content$sessions
}

select <- function(srv, id) text_of(mcp_call(srv, "select_r_session", list(id = as.character(id))))

# In process: one tools/call through a handler, the parsed result.
handler_call <- function(h, name, args = structure(list(), names = character())) {
  line <- mcp_handle(h, modern_call(name, jsonlite::toJSON(args, auto_unbox = TRUE)))
  jsonlite::fromJSON(line, simplifyVector = FALSE)$result
}

handler_tools <- function(h) {
  line <- mcp_handle(h, paste0(
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{',
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  ))
  tools <- jsonlite::fromJSON(line, simplifyVector = FALSE)$result$tools
  stats::setNames(tools, vapply(tools, function(t) t$name, ""))
}

tool_error <- function(expr) {
  e <- tryCatch({
    expr
    NULL
  }, mcplite_error_tool = function(e) e)
  expect_s3_class(e, "mcplite_error_tool")
  conditionMessage(e)
}

# -- without a session ------------------------------------------------------------

test_that("R10.1: mcp_session() does nothing outside an interactive session, and checks its arguments", {
  expect_message(h <- mcp_session(), "not interactive")
  expect_null(h)
  expect_error(mcp_session(allow_code = "yes"), "`allow_code`", class = "mcplite_error")
  expect_error(mcp_session(echo = NA), "`echo`", class = "mcplite_error")
  expect_error(mcp_session(label = 1), "`label`", class = "mcplite_error")
  expect_error(mcp_server(list(), session_tools = "yes"), "`session_tools`", class = "mcplite_error")
  expect_error(mcp_handler(list(), session_tools = TRUE, session_wait = -1), "`session_wait`",
               class = "mcplite_error")
})

test_that("R9.2: the errors of live-session tools are classed, their message is the tool error", {
  err <- expect_error(live_describe_object("no_such_object_here"), class = "mcplite_error_live")
  expect_s3_class(err, "mcplite_error")
  expect_match(conditionMessage(err), "There is no object `no_such_object_here`", fixed = TRUE)
  expect_null(conditionCall(err))
  expect_error(live_read_help(""), "`topic` must be a help topic", class = "mcplite_error_live")
})

test_that("R10.5: without session_tools nothing changes; with it, the session tools are listed", {
  add <- tool(function(x) x + 1, name = "add", description = "Add one.", arguments = list(x = type_number()))
  expect_identical(names(handler_tools(mcp_handler(list(add)))), "add")
  listed <- handler_tools(mcp_handler(list(add), session_tools = TRUE))
  expect_identical(
    names(listed),
    c("add", "list_r_sessions", "select_r_session", "list_r_objects", "describe_r_object",
      "read_r_help", "run_r_code")
  )
  expect_true(listed$list_r_objects$annotations$readOnlyHint)
  expect_false(listed$run_r_code$annotations$readOnlyHint)
  # A tool named like a session tool collides.
  clash <- tool(function() 1, name = "list_r_objects", description = "Mine.")
  expect_error(mcp_handler(list(clash), session_tools = TRUE), "list_r_objects", class = "mcplite_error")
})

test_that("R10.6: with no session selected, tools run in the server and the answer says so", {
  dir <- private_dir()
  withr::local_envvar(MCPLITE_SESSION_DIR = dir)
  add <- tool(function(x) x + 1, name = "add", description = "Add one.", arguments = list(x = type_number()))
  h <- mcp_handler(list(add), session_tools = TRUE)
  res <- handler_call(h, "add", list(x = 1))
  expect_false(res$isError)
  expect_identical(res$content[[1]]$text, "2")
  expect_match(res$content[[2]]$text, "No R session is selected, so this ran in the server", fixed = TRUE)
  listed <- handler_call(h, "list_r_sessions")
  expect_match(listed$content[[1]]$text, "No R session is open", fixed = TRUE)
  expect_length(listed$structuredContent$sessions, 0L)
  res <- handler_call(h, "select_r_session", list(id = "12345"))
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "no R session \"12345\"", fixed = TRUE)
  res <- handler_call(h, "select_r_session", list(id = "../etc"))
  expect_match(res$content[[1]]$text, "not a session id", fixed = TRUE)
  # run_r_code never runs in the server.
  marker <- file.path(dir, "ran")
  res <- handler_call(h, "run_r_code", list(code = sprintf("file.create('%s')", marker)))
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "No R session is selected, so the code did not run", fixed = TRUE)
  expect_false(file.exists(marker))
})

test_that("R10.2: a session directory open to others is refused by the server", {
  dir <- withr::local_tempdir()
  Sys.chmod(dir, "0755", use_umask = FALSE)
  withr::local_envvar(MCPLITE_SESSION_DIR = dir)
  h <- mcp_handler(list(), session_tools = TRUE)
  res <- handler_call(h, "list_r_sessions")
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "its permissions are 0755", fixed = TRUE)
  expect_match(handler_call(h, "select_r_session", list(id = "1"))$content[[1]]$text, "0755", fixed = TRUE)
})

# -- with a real interactive R ------------------------------------------------------

test_that("R10: objects made at the prompt are visible to the tools of a selected session", {
  skip_if_no_live()
  dir <- private_dir()
  s <- start_r(dir)
  sock <- open_session(s, 'label = "analysis"')
  expect_identical(file.info(sock)$mode, as.octmode("600"))
  r_run(s, "cars2 <- head(mtcars, 10); fit <- lm(mpg ~ wt, mtcars)")
  srv <- connect(dir, s$files)
  listed <- sessions_of(srv)
  expect_length(listed, 1L)
  expect_identical(listed[[1]]$id, s$pid)
  expect_identical(listed[[1]]$label, "analysis")
  expect_identical(listed[[1]]$front_end, "terminal")
  expect_identical(listed[[1]]$directory, getwd())
  expect_false(listed[[1]]$busy)
  expect_false(listed[[1]]$allow_code)
  expect_match(select(srv, s$pid), paste("Selected R session", s$pid))

  # The server's own tools run there, and come back as if run in the server.
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
  expect_identical(text_of(mcp_call(srv, "nrow_of", list(name = "cars2"))), "10")
  expect_match(tool_error(mcp_call(srv, "fails")), "failed on purpose", fixed = TRUE)
  talked <- mcp_call(srv, "talk")
  expect_identical(text_of(talked), "talked")
  server_err <- function() paste(mcp_stderr(srv), collapse = "\n")
  wait_until(function() grepl("warned by the tool", server_err(), fixed = TRUE), "the server's stderr")
  err <- server_err()
  expect_match(err, "printed by the tool", fixed = TRUE)
  expect_match(err, "said by the tool", fixed = TRUE)

  # The built-in tools read the session.
  objects <- mcp_call(srv, "list_r_objects")$structured_content$objects
  names_seen <- vapply(objects, function(o) o$name, "")
  expect_true(all(c("cars2", "fit", "h") %in% names_seen))
  cars <- objects[[which(names_seen == "cars2")]]
  expect_identical(cars$class, "data.frame")
  expect_identical(cars$dimensions, "10 x 11")
  described <- text_of(mcp_call(srv, "describe_r_object", list(name = "cars2", rows = 2)))
  expect_match(described, "| Mazda RX4 Wag | 21 | 6 |", fixed = TRUE)
  expect_false(grepl("Datsun 710", described, fixed = TRUE))
  expect_match(text_of(mcp_call(srv, "describe_r_object", list(name = "fit"))), "Residual standard error")
  expect_match(tool_error(mcp_call(srv, "describe_r_object", list(name = "nope"))), "no object `nope`")
  expect_match(text_of(mcp_call(srv, "read_r_help", list(topic = "lm"))), "Fitting Linear Models")

  # R10.10: a model's text cannot draw on the console (clear it, fake a prompt).
  expect_error(mcp_call(srv, "nrow_of", list(name = "\033[2J\033[H\rPassword: ")), "not found")

  # The console shows one line per call, with its arguments, and nothing the tools printed.
  console <- screen(s)
  expect_match(console, "[mcplite] where() (", fixed = TRUE)
  expect_match(console, '[mcplite] nrow_of(name = "cars2") (', fixed = TRUE)
  expect_match(console, "[mcplite] fails() error (", fixed = TRUE)
  expect_match(console, '[mcplite] nrow_of(name = "\\033[2J\\033[H\\rPassword: ") error (', fixed = TRUE)
  expect_false(grepl("printed by the tool", console, fixed = TRUE))
  expect_false(grepl("said by the tool", console, fixed = TRUE))
  expect_false(grepl("warned by the tool", console, fixed = TRUE))
})

test_that("R10.4: a call waits while the user's code runs, never runs in the middle of it, and times out", {
  skip_if_no_live()
  dir <- private_dir()
  s <- start_r(dir)
  open_session(s)
  srv <- connect(dir, s$files, wait = 30)
  select(srv, s$pid)

  # A computation of about two seconds typed at the prompt: the call waits
  # (with heartbeats) and runs once it is over, after `loop_done` is set.
  r_type(s, "{ t_end <- Sys.time() + 2; while (Sys.time() < t_end) {}; loop_done <- TRUE }")
  wait_until(function() isTRUE(sessions_of(srv)[[1]]$busy), "the session to be busy")
  beats <- 0L
  res <- mcp_call(srv, "nrow_of", list(name = "mtcars"), progress = function(...) beats <<- beats + 1L)
  expect_identical(text_of(res), "32")
  objects <- vapply(mcp_call(srv, "list_r_objects")$structured_content$objects, function(o) o$name, "")
  expect_true("loop_done" %in% objects)
  expect_gte(beats, 1L)

  # R waiting inside a function (Sys.sleep(), whose event processing runs
  # the session's handler: R is not idle then) and back at the prompt after
  # an error: the call runs then. The loop ends once the client heard a
  # heartbeat.
  stop_file <- file.path(s$files, "stop-0")
  r_type(s, sprintf("{ while (!file.exists('%s')) Sys.sleep(0.05); stop('user error') }", stop_file))
  wait_until(function() isTRUE(sessions_of(srv)[[1]]$busy), "the session to be busy")
  said <- character()
  res <- mcp_call(srv, "nrow_of", list(name = "cars"), progress = function(progress, total, message) {
    said <<- c(said, message)
    file.create(stop_file)
  })
  expect_identical(text_of(res), "50")
  # RULES N3.2: the heartbeats say what the call waits for.
  expect_match(said[[1]], "^waiting for the selected R session to be idle at its prompt for [0-9]+ s, not running yet$")
  expect_true(file.exists(stop_file))
  expect_match(screen(s), "user error", fixed = TRUE)

  # The client gives up on a call that waits (it cancels it): the server
  # withdraws it, it never runs in the session, and the server goes on.
  stop_file <- file.path(s$files, "stop-1")
  r_type(s, sprintf("{ while (!file.exists('%s')) {}; loop2_done <- TRUE }", stop_file))
  wait_until(function() isTRUE(sessions_of(srv)[[1]]$busy), "the session to be busy")
  waiting <- file.path(s$files, "waiting")
  interrupt_when(waiting)
  got <- tryCatch(
    mcp_call(srv, "mark", progress = function(...) file.create(waiting)),
    interrupt = function(e) "interrupted"
  )
  expect_identical(got, "interrupted")
  # (The client returns at once; the server withdraws the call right after.)
  wait_until(function() sessions_of(srv)[[1]]$waiting_calls == 0L, "the call to be withdrawn")
  file.create(stop_file)
  wait_until(function() !isTRUE(sessions_of(srv)[[1]]$busy), "the session to be idle")
  objects <- vapply(mcp_call(srv, "list_r_objects")$structured_content$objects, function(o) o$name, "")
  expect_true("loop2_done" %in% objects)
  expect_false("marker_ran" %in% objects)

  # R waiting inside a function (Sys.sleep in a loop) is busy as well; with a
  # short wait the call gives up, and it never runs later.
  mcp_close(srv)
  srv <- connect(dir, s$files, wait = 1)
  select(srv, s$pid)
  stop_file <- file.path(s$files, "stop-2")
  r_type(s, sprintf("{ while (!file.exists('%s')) Sys.sleep(0.05); sleep_done <- TRUE }", stop_file))
  wait_until(function() isTRUE(sessions_of(srv)[[1]]$busy), "the session to be busy")
  msg <- tool_error(mcp_call(srv, "mark"))
  expect_match(msg, paste0("The R session ", s$pid, " stayed busy for 1 s"), fixed = TRUE)
  file.create(stop_file)
  wait_until(function() !isTRUE(sessions_of(srv)[[1]]$busy), "the session to be idle")
  objects <- vapply(mcp_call(srv, "list_r_objects")$structured_content$objects, function(o) o$name, "")
  expect_true("sleep_done" %in% objects)
  expect_false("marker_ran" %in% objects)
  expect_false(grepl("[mcplite] mark", screen(s), fixed = TRUE))
})

test_that("R10.6: a session closed or gone while selected: the call fails and says so; one opened again is found again", {
  skip_if_no_live()
  dir <- private_dir()
  s <- start_r(dir)
  sock <- open_session(s)
  srv <- connect(dir, s$files)
  select(srv, s$pid)
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
  # Opened again (as the refusal of run_r_code tells the user to): still selected.
  r_run(s, "close(h); h <- mcplite::mcp_session(allow_code = TRUE)")
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
  expect_true(sessions_of(srv)[[1]]$selected)
  expect_identical(text_of(mcp_call(srv, "run_r_code", list(code = "cat('in the session')"))), "in the session")

  # Closed: the call does not run anywhere, and says so as an error.
  r_run(s, "close(h)")
  expect_false(file.exists(sock))
  msg <- tool_error(mcp_call(srv, "mark"))
  expect_match(msg, paste0("The selected R session ", s$pid, " is gone"), fixed = TRUE)
  expect_match(msg, "did not run, there or anywhere else", fixed = TRUE)
  # Now unselected: tools run in the server, with the note that says so.
  expect_match(mcp_call(srv, "where")$content[[2]]$text, "No R session is selected", fixed = TRUE)
  expect_length(sessions_of(srv), 0L)

  # Opened again, selected, then R exits: the socket goes with it.
  sock <- open_session(s)
  select(srv, s$pid)
  r_type(s, "q('no')")
  wait_until(function() !file.exists(sock), "R's exit to remove the socket")
  wait_until(function() !tools::pskill(as.integer(s$pid), 0L), "R to exit")
  res <- tryCatch(mcp_call(srv, "where"), mcplite_error_tool = function(e) e)
  expect_s3_class(res, "mcplite_error_tool")
  expect_match(conditionMessage(res), "is gone", fixed = TRUE, info = paste(capture.output(str(res)), collapse = "\n"))
})

test_that("R10.3: two sessions at once, and a server restarted by its client", {
  skip_if_no_live()
  dir <- private_dir()
  a <- start_r(dir)
  b <- start_r(dir)
  open_session(a)
  open_session(b, "echo = FALSE")
  r_run(a, "who <- 'a'")
  r_run(b, "who <- 'b'")
  who <- tool(function() get("who", envir = globalenv()), name = "who", description = "Who.")
  srv <- connect(dir, a$files)
  ids <- vapply(sessions_of(srv), function(x) x$id, "")
  expect_setequal(ids, c(a$pid, b$pid))
  select(srv, a$pid)
  expect_identical(text_of(mcp_call(srv, "where")), a$pid)
  select(srv, b$pid)
  expect_identical(text_of(mcp_call(srv, "where")), b$pid)
  expect_false(grepl("[mcplite]", screen(b), fixed = TRUE))
  expect_match(select(srv, "server"), "No session is selected")
  expect_false(text_of(mcp_call(srv, "where")) %in% c(a$pid, b$pid))

  # The client restarts its server: the sessions stay, the new server picks
  # one again.
  select(srv, a$pid)
  mcp_close(srv)
  srv2 <- connect(dir, a$files)
  expect_setequal(vapply(sessions_of(srv2), function(x) x$id, ""), c(a$pid, b$pid))
  expect_match(mcp_call(srv2, "where")$content[[2]]$text, "No R session is selected", fixed = TRUE)
  select(srv2, a$pid)
  expect_identical(text_of(mcp_call(srv2, "where")), a$pid)
})

test_that("R10.8: run_r_code is refused unless the session allows it, and then runs at the prompt", {
  skip_if_no_live()
  dir <- private_dir()
  s <- start_r(dir)
  open_session(s)
  srv <- connect(dir, s$files)
  select(srv, s$pid)
  marker <- file.path(s$files, "code-ran")
  code <- sprintf("file.create('%s'); code_ran <- TRUE; 6 * 7", marker)
  msg <- tool_error(mcp_call(srv, "run_r_code", list(code = code)))
  expect_match(msg, "does not allow running code", fixed = TRUE)
  expect_match(msg, "Nothing was run", fixed = TRUE)
  expect_false(file.exists(marker))
  objects <- vapply(mcp_call(srv, "list_r_objects")$structured_content$objects, function(o) o$name, "")
  expect_false("code_ran" %in% objects)

  open_session(s, "allow_code = TRUE")
  select(srv, s$pid)
  expect_true(sessions_of(srv)[[1]]$allow_code)
  out <- text_of(mcp_call(srv, "run_r_code", list(code = code)))
  expect_match(out, "[1] 42", fixed = TRUE)
  expect_true(file.exists(marker))
  expect_match(tool_error(mcp_call(srv, "run_r_code", list(code = "stop('boom')"))), "boom")
  # Warnings and messages come back after what was printed (issue 44 item 2).
  said <- text_of(mcp_call(srv, "run_r_code", list(code = "x <- as.numeric('x'); message('hello'); x")))
  expect_match(said, "[1] NA", fixed = TRUE)
  expect_match(said, "Warning: NAs introduced by coercion", fixed = TRUE)
  expect_match(said, "hello", fixed = TRUE)
  # Plots come back as images; the user's working directory gets no
  # Rplots.pdf and the user's device none of it (issue 44 item 2).
  wd <- r_run(s, 'cat(getwd(), file = "%s/wd")', result = "wd")
  had_rplots <- file.exists(file.path(wd, "Rplots.pdf"))
  res <- mcp_call(srv, "run_r_code", list(code = "plot(1:10); cat('drawn')"))
  expect_identical(res$content[[1]]$text, "drawn")
  expect_identical(res$content[[2]]$mime_type, "image/png")
  img <- png::readPNG(jsonlite::base64_dec(res$content[[2]]$data))
  expect_true(any(img[, , 1:3] < 0.5))
  expect_identical(file.exists(file.path(wd, "Rplots.pdf")), had_rplots)
  expect_identical(r_run(s, 'cat(dev.cur(), file = "%s/dev")', result = "dev"), "1")
  # Code that prints nothing and draws nothing says so.
  expect_identical(text_of(mcp_call(srv, "run_r_code", list(code = "invisible(1)"))), "(the code printed nothing)")
})

test_that("R10.2: a session refuses a directory open to others, and other users cannot reach it", {
  skip_if_no_live()
  # The session side: mcp_session() refuses a directory others can enter.
  open_dir <- withr::local_tempdir()
  Sys.chmod(open_dir, "0755", use_umask = FALSE)
  s <- start_r(open_dir)
  got <- r_run(s, paste0(
    "msg <- tryCatch({ mcplite::mcp_session(); 'opened' }, mcplite_error_session = function(e) ",
    "conditionMessage(e)); writeLines(msg, '%s/msg')"
  ), result = "msg")
  expect_match(got, "its permissions are 0755", fixed = TRUE)
  expect_length(list.files(open_dir, pattern = "sock$"), 0L)

  skip_if(Sys.info()[["effective_user"]] != "root" || !nzchar(Sys.which("setpriv")),
          "checks with another user need root and setpriv")
  python <- "/usr/bin/python3"
  skip_if(!file.exists(python), "/usr/bin/python3 is needed to connect as another user")
  connect_py <- paste(
    "import socket, struct, json, sys",
    "s = socket.socket(socket.AF_UNIX)",
    "try:",
    "    s.connect(sys.argv[1])",
    "except OSError as e:",
    "    print('connect failed:', e.strerror); sys.exit(0)",
    "pre = s.recv(8)",
    "h, b = struct.unpack('>II', pre)",
    "print(json.loads(s.recv(h))['type'])",
    sep = "\n"
  )
  py <- file.path(private_dir(mode = "0755"), "connect.py")
  writeLines(connect_py, py)

  # Another user cannot see root's session directory, let alone connect.
  dir <- private_dir()
  s <- start_r(dir)
  sock <- open_session(s)
  as_nobody <- function(...) {
    suppressWarnings(system2("setpriv", c("--reuid", "65534", "--regid", "65534", "--clear-groups", ...),
                             stdout = TRUE, stderr = TRUE))
  }
  expect_match(paste(as_nobody("ls", dir), collapse = " "), "Permission denied")
  expect_match(paste(as_nobody(python, py, sock), collapse = " "), "connect failed: Permission denied")

  # A session of another user refuses a connection from this one (the peer
  # check), even when the directory lets it through. That user's R must be
  # able to load mcplite (not so under R CMD check, whose library is in a
  # directory only this user can enter).
  loads <- as_nobody("env", shQuote(paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))),
                     shQuote(file.path(R.home("bin"), "Rscript")), "-e",
                     shQuote("cat(requireNamespace('mcplite', quietly = TRUE))"))
  skip_if_not(identical(utils::tail(loads, 1), "TRUE"), "user nobody cannot load mcplite from this library")
  nobody_dir <- file.path(private_dir(mode = "0755"), "nobody")
  dir.create(nobody_dir, mode = "0700")
  system2("chown", c("65534:65534", nobody_dir))
  n <- start_r(nobody_dir, user = 65534)
  nsock <- file.path(nobody_dir, paste0(n$pid, ".sock"))
  r_type(n, "h <- mcplite::mcp_session()")
  wait_until(function() file.exists(nsock), "the other user's session socket")
  expect_identical(system2(python, c(py, nsock), stdout = TRUE), "refused")
  # and a server of this user refuses that directory before connecting.
  withr::local_envvar(MCPLITE_SESSION_DIR = nobody_dir)
  res <- handler_call(mcp_handler(list(), session_tools = TRUE), "list_r_sessions")
  expect_match(res$content[[1]]$text, "belongs to user id 65534", fixed = TRUE)
})

test_that("R10.2: a server started with XDG_RUNTIME_DIR finds a session started without it", {
  skip_if_no_live()
  # The session's R has no XDG_RUNTIME_DIR (as under some IDEs): its socket
  # goes to mcplite-<uid> in its TMPDIR. The server has a private
  # XDG_RUNTIME_DIR and the same TMPDIR: it looks in both.
  tmp <- private_dir()
  xdg <- private_dir()
  uid <- system2("id", "-u", stdout = TRUE)
  s <- start_r(file.path(tmp, paste0("mcplite-", uid)), vars = c(TMPDIR = tmp))
  sock <- open_session(s)
  expect_identical(file.info(dirname(sock))$mode, as.octmode("700"))
  srv <- connect(NULL, s$files, vars = c(TMPDIR = tmp, XDG_RUNTIME_DIR = xdg))
  expect_identical(vapply(sessions_of(srv), function(x) x$id, ""), s$pid)
  select(srv, s$pid)
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
  # An R session with XDG_RUNTIME_DIR puts its socket there, and is found too.
  b <- start_r(file.path(xdg, "mcplite"), vars = c(TMPDIR = tmp, XDG_RUNTIME_DIR = xdg))
  open_session(b)
  expect_setequal(vapply(sessions_of(srv), function(x) x$id, ""), c(s$pid, b$pid))
})

# A session_tools server of one package tool, connected, with session `s`
# selected; closed at the end of the calling test. `args`: more arguments of
# mcp_server() (the package tools of a server with `confine = FALSE` are
# routed as other tools, R10.11; by default, where the kernel can, they run
# in a confined worker, N7.6).
package_session_server <- function(s, dir, package, fun, env = parent.frame(), args = ", confine = FALSE") {
  script <- file.path(s$files, paste0(fun, ".R"))
  writeLines(c(
    "library(mcplite)",
    sprintf("mcp_server(package_tools('%s', include = '%s', quiet = TRUE), session_tools = TRUE%s)", package, fun, args)
  ), script)
  srv <- mcp_connect_script(script, env = c(MCPLITE_SESSION_DIR = dir))
  withr::defer(mcp_close(srv), envir = env)
  expect_match(select(srv, s$pid), paste("Selected R session", s$pid))
  srv
}

test_that("R8.9: a package tool run in a selected session draws on its own device, the user's stays current", {
  skip_if_no_live()
  skip_if_not_installed("png")
  dir <- private_dir()
  s <- start_r(dir)
  # Package tools run in a session only where its user allows code (R10.11).
  open_session(s, "allow_code = TRUE")
  # The user's own device, current at the prompt.
  r_run(s, 'png("%s/users.png"); cat(dev.cur(), file = "%s/before"); cat(getwd(), file = "%s/wd")')
  wd <- readLines(file.path(s$files, "wd"), warn = FALSE)
  rplots_before <- file.exists(file.path(wd, "Rplots.pdf"))
  srv <- package_session_server(s, dir, "graphics", "plot")
  res <- mcp_call(srv, "plot", list(x = list(3, 1, 2)))
  expect_length(res$content, 1L)
  expect_identical(res$content[[1]]$mime_type, "image/png")
  img <- png::readPNG(jsonlite::base64_dec(res$content[[1]]$data))
  expect_identical(dim(img)[1:2], c(480L, 640L))
  expect_true(any(img[, , 1:3] < 0.5))
  # The user's device is current again, got nothing, and no file was left.
  r_run(s, 'cat(dev.cur(), file = "%s/after"); dev.off()')
  expect_identical(readLines(file.path(s$files, "after"), warn = FALSE),
                   readLines(file.path(s$files, "before"), warn = FALSE))
  expect_false(file.exists(file.path(s$files, "users.png")))
  expect_identical(file.exists(file.path(wd, "Rplots.pdf")), rplots_before)
})

test_that("R10.11: with allow_code = FALSE a package tool runs in the server, and the session refuses one sent to it", {
  skip_if_no_live()
  dir <- private_dir()
  s <- start_r(dir)
  open_session(s)
  srv <- package_session_server(s, dir, "stats", "median")
  res <- mcp_call(srv, "median", list(x = list(3, 1, 2)))
  expect_identical(res$content[[1]]$text, "2")
  expect_match(res$content[[2]]$text, paste0("ran in the server's own R process, not in the R session ", s$pid))
  # The session ran nothing.
  expect_false(grepl("[mcplite] median", screen(s), fixed = TRUE))

  # Sent straight to the session's socket, past the server's routing: refused.
  conn <- engine_live_connect(dir, s$pid, 5)
  withr::defer(engine_live_disconnect(conn))
  tool <- package_tools("stats", include = "median", quiet = TRUE)[[1]]
  body <- serialize(list(fun = tool, args = list(x = c(3, 1, 2))), NULL)
  out <- engine_live_call(conn, '{"kind":"tool","tool":"median"}', body, 10)
  expect_identical(out$status, "done")
  header <- jsonlite::fromJSON(out$header)
  expect_identical(header$status, "refused")
  expect_match(header$message, "does not run package functions")
  wait_until(function() grepl("[mcplite] median(x = c(3, 1, 2)) refused", screen(s), fixed = TRUE), "the console line")

  # With code allowed, package tools run in the session as other tools do.
  r_run(s, "close(h); h <- mcplite::mcp_session(allow_code = TRUE)")
  expect_match(select(srv, s$pid), "run_r_code is allowed")
  res <- mcp_call(srv, "median", list(x = list(5, 4, 6)))
  expect_identical(text_of(res), "5")
  wait_until(function() grepl("[mcplite] median(x = list(5L, 4L, 6L)) (", screen(s), fixed = TRUE), paste("the console line:", screen(s)))
})

test_that("N7.6: a live-session server runs its package tools in a confined worker, whatever the session allows", {
  skip_if_no_live()
  skip_if_not(identical(Sys.info()[["sysname"]], "Linux"), "Linux only")
  skip_if(!is.null(engine_confine_available()), "the kernel cannot confine")
  dir <- private_dir()
  s <- start_r(dir)
  # The user allows code: the package tools still never reach the session.
  open_session(s, "allow_code = TRUE")
  token <- paste0("canary-", paste(sample(letters, 16, TRUE), collapse = ""))
  script <- file.path(s$files, "mixed.R")
  # The classifier is bypassed on purpose (allow): only the worker's
  # confinement stands between the package tool and the secret.
  writeLines(c(
    "library(mcplite)",
    "pkg <- package_tools('base', include = c('Sys.getenv', 'Sys.getpid'), allow = 'read_secrets', quiet = TRUE)",
    "where <- tool(function() Sys.getpid(), name = 'where', description = 'The pid that ran it.')",
    "secret <- tool(function() Sys.getenv('MCPLITE_TEST_SECRET'), name = 'secret', description = 'The secret.')",
    "mcp_server(c(list(where), pkg, list(secret)), session_tools = TRUE)"
  ), script)
  srv <- mcp_connect_script(script, env = c(MCPLITE_SESSION_DIR = dir, MCPLITE_TEST_SECRET = token))
  withr::defer(mcp_close(srv))
  select(srv, "server")
  server_pid <- text_of(mcp_call(srv, "where"))
  expect_match(text_of(mcp_call(srv, "secret")), token, fixed = TRUE)
  expect_match(select(srv, s$pid), "run_r_code is allowed")
  # The server's own tools run in the session ...
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
  # ... its package tools in a worker of the server, which holds no secret.
  pid <- text_of(mcp_call(srv, "Sys.getpid"))
  expect_false(pid %in% c(s$pid, server_pid))
  res <- mcp_call(srv, "Sys.getenv", list(x = "MCPLITE_TEST_SECRET"))
  expect_identical(res$content[[1]]$text, "")
  expect_length(res$content, 1L)
  # The session ran none of them.
  r_run(s, "invisible(1)")
  expect_false(grepl("[mcplite] Sys.get", screen(s), fixed = TRUE))
  expect_true(grepl("[mcplite] where()", screen(s), fixed = TRUE))
})

# An R session opened and selected by a connected server of server_script():
# list(s, srv), both ended with the calling test.
selected_session <- function(env = parent.frame()) {
  dir <- private_dir(env)
  s <- start_r(dir, env)
  open_session(s)
  srv <- connect(dir, s$files, env = env)
  select(srv, s$pid)
  list(s = s, srv = srv)
}

test_that("R10.6: a call cancelled while it runs in the session is interrupted there, and the interrupt goes no further", {
  skip_if_no_live()
  live <- selected_session()
  s <- live$s
  srv <- live$srv
  # The client gives up after 2 s and cancels: the session's R is interrupted.
  expect_error(mcp_call(srv, "spin", timeout = 2), class = "mcplite_error_timeout")
  wait_until(function() grepl("[mcplite] spin() error (", screen(s), fixed = TRUE),
             paste("the call to be interrupted:", screen(s), paste(mcp_stderr(srv), collapse = "\n")))
  # Its clean-up ran, and the user's next command runs whole (no interrupt was left over).
  expect_identical(r_run(s, 'Sys.sleep(0.3); cat(exists("spin_cleaned_up"), file = "%s/clean")', result = "clean"),
                   "TRUE")
  expect_identical(text_of(mcp_call(srv, "where")), s$pid)
})
