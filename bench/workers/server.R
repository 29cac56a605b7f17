# Benchmark server for worker processes (issue 32, bench/workers/run.py).
# MCPLITE_WORKERS and MCPLITE_TRANSPORT come from the environment;
# MCPLITE_BENCH_CONFINE=1 confines the workers (RULES N7, bench/workers/confine.py).
#   add(x, y)   the W2 tool: a quick call
#   nap(ms)     sleeps ms milliseconds (waits, uses no CPU)
#   spin(ms)    busy loop for ms milliseconds (CPU-bound)
library(mcplite)

mcp_server(confine = Sys.getenv("MCPLITE_BENCH_CONFINE") == "1", list(
  tool(function(x, y) x + y, name = "add", description = "Add two numbers.",
    arguments = list(x = type_number(), y = type_number())),
  tool(function(ms) {
    Sys.sleep(ms / 1000)
    "slept"
  }, name = "nap", description = "Sleeps ms milliseconds.", arguments = list(ms = type_number())),
  tool(function(ms) {
    until <- proc.time()[[3]] + ms / 1000
    n <- 0
    while (proc.time()[[3]] < until) n <- n + 1
    "spun"
  }, name = "spin", description = "A busy loop of ms milliseconds.", arguments = list(ms = type_number()))
))
