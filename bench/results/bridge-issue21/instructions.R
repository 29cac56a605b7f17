# Instructions per tools/call through the bridge, without stdio: run under
# callgrind twice with different N and divide the difference by the
# difference of N (R's start-up cancels out). Deterministic, unlike wall or
# CPU time on a shared machine. See README.md beside this file.
#   N=500  R -d "valgrind --tool=callgrind --callgrind-out-file=/dev/null" --vanilla --no-echo -f instructions.R
#   N=2500 R -d "valgrind --tool=callgrind --callgrind-out-file=/dev/null" --vanilla --no-echo -f instructions.R
# With HANDLE=1 the calls go through mcp_handle() (the R wrappers included).
suppressMessages(library(mcplite))
add <- tool(function(x, y) x + y, name = "add", description = "Add.",
  arguments = list(x = type_number(), y = type_number()))
s <- mcp_handler(add)
msg <- paste0(
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":2},',
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
)
n <- as.integer(Sys.getenv("N"))
if (identical(Sys.getenv("HANDLE"), "1")) {
  for (i in seq_len(n)) mcp_handle(s, msg)
} else {
  old <- options(warn = 1, show.error.messages = FALSE)
  f <- getNativeSymbolInfo("wrap__engine_handler_handle", "mcplite")
  for (i in seq_len(n)) .Call(f, s$ptr, s$spec, msg)
}
