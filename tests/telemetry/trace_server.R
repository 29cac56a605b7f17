# A stdio server for the tracing end-to-end tests (tests/telemetry).
# Tracing is configured by the environment the test starts it with.
library(mcplite)

echo <- tool(
  function(text) paste("echo:", text),
  name = "echo",
  description = "Echo the text back.",
  arguments = list(text = type_string("Text to echo."))
)

child_traceparent <- tool(
  function() {
    # A child process started by the tool with mcp_trace_env() in its
    # environment: prints its TRACEPARENT.
    e <- mcp_trace_env()
    out <- system2("printenv", "TRACEPARENT", env = sprintf("%s=%s", names(e), shQuote(e)), stdout = TRUE)
    paste(c(out, mcp_trace_context()[["traceparent"]]), collapse = " ")
  },
  name = "child_traceparent",
  description = "Report the TRACEPARENT a child process sees, then mcp_trace_context()."
)

fails <- tool(
  function(text) stop("condition text ", text),
  name = "fails",
  description = "Always fails.",
  arguments = list(text = type_string("Anything."))
)

chatty <- tool(
  function() {
    cat("tool output on stdout\n")
    print(1:3)
    "done"
  },
  name = "chatty",
  description = "Prints to stdout while running."
)

child_env <- tool(
  function() {
    # What a child process started with mcp_trace_env() sees, what
    # mcp_trace_context() says, and the server's own TRACEPARENT (unchanged).
    e <- mcp_trace_env()
    env <- function(v) {
      system2("sh", c("-c", shQuote(paste("printenv", v, "|| true"))), env = sprintf("%s=%s", names(e), shQuote(e)), stdout = TRUE)
    }
    jsonlite::toJSON(list(
      TRACEPARENT = env("TRACEPARENT"), BAGGAGE = env("BAGGAGE"),
      ctx_baggage = unname(mcp_trace_context()["baggage"]),
      own_TRACEPARENT = Sys.getenv("TRACEPARENT")
    ), auto_unbox = TRUE)
  },
  name = "child_env",
  description = "Report the trace variables a child process sees."
)

halting <- tool(
  function() {
    # One printed line in two pieces with a pause between them, as R's
    # print() writes a line in pieces (RULES T8, `stderr`).
    # (On stderr, where it goes over stdio anyway, RULES S1, and where
    # span lines go over HTTP too.)
    cat("first half,", file = stderr())
    Sys.sleep(1)
    cat(" second half\n", file = stderr())
    "printed"
  },
  name = "halting",
  description = "Prints one line in two pieces, a second apart."
)

mcp_server(list(echo, child_traceparent, fails, chatty, child_env, halting))
