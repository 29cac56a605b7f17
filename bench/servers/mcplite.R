# Benchmark server: mcplite. Run as `Rscript --vanilla bench/servers/mcplite.R`
# (with R_LIBS pointing at the library where mcplite is installed).
# Same tools as every benchmarked server, see bench/README.md.
# BENCH_TOOLS=1 serves only `add`; otherwise the 54-tool set.
library(mcplite)

add <- tool(
  function(x, y) x + y,
  name = "add",
  description = "Add two numbers.",
  arguments = list(x = type_number("First number."), y = type_number("Second number."))
)
tools <- list(add)

if (!identical(Sys.getenv("BENCH_TOOLS"), "1")) {
  cache <- new.env()
  big_text <- function() {
    if (is.null(cache$text)) cache$text <- strrep("abcdefghij", 1e6)
    cache$text
  }
  frame <- function() {
    if (is.null(cache$frame)) {
      i <- seq_len(1e5)
      cache$frame <- data.frame(
        id = i, value = i + 0.5, label = paste0("r", i), flag = i %% 2 == 0,
        group = rep_len(c("a", "b", "c", "d", "e"), length(i))
      )
    }
    tool_result(structured_content = list(rows = cache$frame))
  }
  # BENCH_FRAME_SCHEMA=1 declares the frame's output schema, so that its
  # structured content is validated before it is sent (RULES J4.6; the
  # benchmark's servers do not declare one unless asked).
  frame_schema <- if (identical(Sys.getenv("BENCH_FRAME_SCHEMA"), "1")) {
    type_object(rows = type_array(type_object(
      id = type_integer(), value = type_number(), label = type_string(), flag = type_boolean(),
      group = type_enum(c("a", "b", "c", "d", "e"))
    )))
  }
  extra_args <- list(
    a = type_string("A string."), b = type_integer("An integer."), c = type_number("A number."),
    d = type_boolean("A flag."), e = type_enum(c("red", "green", "blue"), "A colour.")
  )
  extras <- lapply(1:50, function(i) {
    nn <- sprintf("%02d", i)
    tool(function(a, b, c, d, e) "ok", name = paste0("tool_", nn),
         description = paste0("Extra tool ", nn, " with five typed arguments."),
         arguments = extra_args)
  })
  tools <- c(tools, list(
    tool(function(text) nchar(text), name = "text_length",
         description = "Return the number of characters in a text.",
         arguments = list(text = type_string("Any text."))),
    tool(big_text, description = "Return a 10 MB text."),
    tool(frame, description = "Return a 100,000 x 5 data frame as structured content.",
         output_schema = frame_schema)
  ), extras)
}

# The HTTP workloads (bench/http/) add a tool that sleeps for `s` seconds.
if (identical(Sys.getenv("BENCH_NAP"), "1")) {
  tools <- c(tools, list(tool(function(s) {
    Sys.sleep(s)
    "rested"
  }, name = "nap", description = "Sleep for s seconds.", arguments = list(s = type_number("Seconds.")))))
}

# MCPLITE_TRANSPORT=http (and MCPLITE_PORT) serve the same tools over HTTP.
mcp_server(tools)
