# Helpers of the package_tools() tests (test-package-*.R).

# tools/call through the engine; returns the parsed result.
call_tool <- function(session, name, args = structure(list(), names = character())) {
  line <- mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = name, arguments = args, `_meta` = modern_meta())
  ))
  jsonlite::parse_json(line, simplifyVector = FALSE)$result
}

input_schema <- function(x) jsonlite::parse_json(tool_spec(x)$input_schema, simplifyVector = FALSE)

# The text a hand-written tool returning `value` sends (the server's ordinary
# conversion of the value of a direct call).
direct_text <- function(value) {
  direct <- tool(function() value, "Direct call.", name = "direct")
  call_tool(mcp_handler(direct), "direct")$content[[1]]$text
}

stats_tools <- function(...) package_tools("stats", quiet = TRUE, ...)

# The value of `expr` and every message it emitted (muffled).
with_messages <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}
