# Soak server (bench/soak/run.sh): the tools the soak driver exercises, over
# stdio or, with MCPLITE_TRANSPORT=http, over HTTP. Every answer is checked
# by the driver, so each tool's result is a function of its arguments.
library(mcplite)

tools <- list(
  tool(function(x, y) x + y, name = "add", description = "Add two numbers.",
       arguments = list(x = type_number("A number."), y = type_number("A number."))),
  tool(function(text, times) strrep(text, times), name = "repeat_text",
       description = "The text repeated.",
       arguments = list(text = type_string("Text."), times = type_integer("How many times."))),
  tool(function(why) stop(why), name = "fail", description = "Always fails with `why`.",
       arguments = list(why = type_string("The error message."))),
  tool(function(n) {
    warning("careful")
    message("note")
    seq_len(n)
  }, name = "noisy", description = "1..n, with a warning and a message.",
  arguments = list(n = type_integer("How many."))),
  tool(function(steps, pause) {
    for (i in seq_len(steps)) {
      Sys.sleep(pause)
      mcp_progress(i, total = steps, message = paste("step", i))
    }
    steps
  }, name = "steps", description = "Reports progress `steps` times, `pause` seconds apart.",
  arguments = list(steps = type_integer("Steps."), pause = type_number("Seconds per step."))),
  tool(function(rows) data.frame(i = seq_len(rows), sq = seq_len(rows)^2),
       name = "table", description = "A data frame of `rows` rows.",
       arguments = list(rows = type_integer("Rows.")))
)

mcp_server(tools)
