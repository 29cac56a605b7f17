# An example mcplite server. Clients start it with
#   Rscript --vanilla /absolute/path/to/server.R
# Nothing may be printed to stdout before mcp_server() takes over.
library(mcplite)

add_numbers <- tool(
  function(x, y) {
    x + y
  },
  name = "add_numbers",
  description = "Add two numbers and return the result.",
  arguments = list(
    x = type_number("First number."),
    y = type_number("Second number.")
  ),
  annotations = list(title = "Add", read_only_hint = TRUE)
)

mean_sd <- tool(
  function(values) {
    v <- unlist(values)
    tool_result(structured_content = list(mean = mean(v), sd = sd(v)))
  },
  name = "mean_sd",
  description = "Mean and standard deviation of a list of numbers.",
  arguments = list(
    values = type_array(type_number(), description = "The numbers.")
  ),
  output_schema = type_object(
    mean = type_number("Arithmetic mean."),
    sd = type_number("Sample standard deviation.")
  )
)

mcp_server(list(add_numbers, mean_sd), instructions = "Arithmetic helpers.")
