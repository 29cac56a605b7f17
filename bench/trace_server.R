# Server for bench/trace_overhead.py: one trivial tool.
library(mcplite)
mcp_server(list(tool(function(x) x, name = "echo", description = "Echo.",
                     arguments = list(x = type_number("A number.")))))
