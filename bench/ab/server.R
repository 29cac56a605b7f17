# The server of bench/ab/run.py: one `add` tool, in the server's R or (with
# BENCH_WORKERS above 0) in that many worker processes.
library(mcplite)
add <- tool(function(x, y) x + y, name = "add", description = "Add two numbers.",
  arguments = list(x = type_number(), y = type_number()))
workers <- as.integer(Sys.getenv("BENCH_WORKERS", "0"))
if (workers > 0) mcp_server(list(add), workers = workers) else mcp_server(list(add))
