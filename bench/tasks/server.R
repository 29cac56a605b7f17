# The server of bench/tasks/run.py: two tools that may run as tasks (RULES
# section 19) on one worker process: `echo` (returns its argument at once) and
# `wait` (sleeps `s` seconds, so that its task stays `working`).
library(mcplite)
echo <- tool(function(x) x, name = "echo", description = "Return x.",
             arguments = list(x = type_number()), task = "optional")
wait <- tool(function(s) { Sys.sleep(s); "woke" }, name = "wait", description = "Sleep s seconds.",
             arguments = list(s = type_number()), task = "optional")
mcp_server(list(echo, wait), workers = 1, tasks = task_options(poll_interval = 0.05))
