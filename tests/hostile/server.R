# Server for the hostile stdio suite (tests/hostile/hostile.py):
#   Rscript --vanilla server.R
# Tools that misbehave in every way issue 8 lists: errors, warnings,
# messages, printing, child processes, reading stdin, sleeping (for SIGINT),
# infinite recursion, unencodable return values, quitting, huge results.
library(mcplite)

t <- function(fun, name, description, arguments = list()) {
  tool(fun, name = name, description = description, arguments = arguments)
}
opt_int <- function() type_integer(required = FALSE)

tools <- list(
  t(function(text) text, "echo", "Return the text.", list(text = type_string())),
  t(function(x, y) x + y, "add", "Add two numbers.", list(x = type_number(), y = type_number())),
  t(function(i) if (i %% 7 == 0) stop("flaky failure ", i) else i * 2, "flaky",
    "Fails for multiples of 7.", list(i = type_integer())),
  t(function() stop("boom \"quoted\"\nsecond line"), "stopper", "Calls stop()."),
  t(function() { warning("careful: a warning"); "warned" }, "warner", "Calls warning()."),
  t(function() { message("a message for stderr"); "messaged" }, "messenger", "Calls message()."),
  t(function() { print(1:3); cat("cat output\n"); print(mtcars[1:2, 1:3]); "printed" },
    "printer", "Prints to stdout."),
  t(function() {
    system("echo from-system-child")
    system2("sh", c("-c", shQuote("echo from-system2-child; echo child-stderr >&2")))
    "ran children"
  }, "shell", "Runs child processes that write to stdout."),
  t(function() {
    a <- readline("prompt> ")
    b <- readLines(stdin(), n = 1L)
    sprintf("readline=[%s] readLines=%d", a, length(b))
  }, "reader", "Reads stdin."),
  t(function(seconds = 60) {
    message("sleepy: started")
    Sys.sleep(seconds)
    "slept"
  }, "sleepy", "Sleeps.", list(seconds = type_number(required = FALSE))),
  t(function() { f <- function(n) f(n + 1); f(0) }, "recurse_r", "Infinite R recursion."),
  t(function() {
    options(expressions = 500000)
    f <- function(n) f(n + 1)
    f(0)
  }, "recurse_c", "Infinite recursion up to the C stack limit."),
  t(function() new.env(), "environment", "Returns an environment."),
  t(function() function(x) x, "closure", "Returns a function."),
  t(function() methods::new("externalptr"), "xptr", "Returns an external pointer."),
  t(function(status = 3L) quit(save = "no", status = status), "quitter", "Calls quit().",
    list(status = opt_int())),
  t(function(mb = 100L) strrep("x", mb * 1000000L), "big_result", "Returns a string of `mb` MB.",
    list(mb = opt_int())),
  t(function(text) nchar(text, type = "bytes"), "size_of", "Byte length of a string.",
    list(text = type_string())),
  # Takes any arguments: an open schema (RULES L6.7 checks nothing).
  t(function(...) length(list(...)), "count_args", "Counts its arguments.",
    type_from_schema('{"type":"object"}'))
)

mcp_server(tools, instructions = "Hostile test server.")
