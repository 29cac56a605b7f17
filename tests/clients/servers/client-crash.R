# Test server for the client: its `crash` tool writes to stderr and makes R
# exit with status 3 in the middle of the call.
library(mcplite)
crash <- tool(
  function() {
    message("crash: giving up")
    quit(save = "no", status = 3)
  },
  "Exit in the middle of the call.",
  name = "crash"
)
mcp_server(crash)
