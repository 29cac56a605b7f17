# A proxy server for the client tests: serves its own `hello` tool plus every
# tool of the server script named by its first argument, renamed `up_<name>`.
#   Rscript --vanilla client-proxy.R /path/to/upstream-server.R
library(mcplite)

upstream <- mcp_connect_script(commandArgs(trailingOnly = TRUE)[[1]])
hello <- tool(
  function(who) paste0("Hello, ", who, "!"),
  "Greet someone.",
  name = "hello",
  arguments = list(who = type_string())
)
mcp_server(c(list(hello), mcp_tools(upstream, prefix = "up_")))
