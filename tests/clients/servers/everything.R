# Test server shared by the end-to-end (testthat/processx), schema (Python
# jsonschema) and real-client (Python and TypeScript SDK) tests.
#   Rscript --vanilla everything.R
# It exercises every result shape mcplite can produce: ordinary values, tool
# errors, structured content with and without output schemas (object and
# non-object), every content type with annotations and metadata, forged
# results, plus tools that misbehave with stdout/stdin or run for a long time.
# Nothing may be written to stdout before mcp_server() takes over.
library(mcplite)

# Tests that count server processes (e.g. a client probing on a sibling process)
# set MCPLITE_TEST_SPAWN_LOG; each process appends its pid.
spawn_log <- Sys.getenv("MCPLITE_TEST_SPAWN_LOG")
if (nzchar(spawn_log)) cat(Sys.getpid(), "\n", file = spawn_log, append = TRUE, sep = "")

png_1px <- "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
wav_stub <- "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA="

echo <- tool(
  function(text) text,
  name = "echo",
  description = "Return the text unchanged.",
  arguments = list(text = type_string("Text to return.")),
  annotations = list(title = "Echo", read_only_hint = TRUE, idempotent_hint = TRUE)
)

add <- tool(
  function(x, y) x + y,
  name = "add",
  description = "Add two numbers.",
  arguments = list(x = type_number("First number."), y = type_number("Second number."))
)

fail <- tool(
  function(message) stop(message),
  name = "fail",
  description = "Always fails with the given message (an R error inside the tool).",
  arguments = list(message = type_string("Error message.")),
  annotations = list(destructive_hint = FALSE, open_world_hint = FALSE, `x-vendor` = "kept")
)

flagged_error <- tool(
  function() tool_result(content_text("The file does not exist."), is_error = TRUE),
  name = "flagged_error",
  description = "Returns a tool result marked as an error."
)

stats <- tool(
  function(values) {
    v <- unlist(values)
    # One value has no sample standard deviation: null, as the schema allows
    # (a nullable type, spelled anyOf: the MCP Inspector finds nothing to flag).
    tool_result(structured_content = list(mean = mean(v), sd = if (length(v) > 1L) sd(v), n = length(v)))
  },
  name = "stats",
  description = "Mean, standard deviation and count of numbers (structured output).",
  arguments = list(values = type_array(type_number(), description = "The numbers.")),
  output_schema = type_object(
    mean = type_number("Arithmetic mean."),
    sd = type_number("Sample standard deviation (null for fewer than two values).", nullable = TRUE),
    n = type_integer("Count.")
  )
)

describe_point <- tool(
  function(x, y) {
    tool_result(structured_content = list(x = x, y = y, label = paste0("(", x, ", ", y, ")")))
  },
  name = "describe_point",
  description = "Structured content without an output schema.",
  arguments = list(x = type_number(), y = type_number())
)

series <- tool(
  function(n = 3L) tool_result(structured_content = seq_len(n)),
  name = "series",
  description = "Structured content that is an array, with an array output schema.",
  arguments = list(n = type_integer("Length.", required = FALSE)),
  output_schema = type_from_schema('{"type":"array","items":{"type":"integer"}}')
)

greeting <- tool(
  function() tool_result(structured_content = "hello"),
  name = "greeting",
  description = "Structured content that is a JSON string, no output schema."
)

all_content <- tool(
  function() {
    tool_result(
      content = list(
        content_text(
          "All content types follow.",
          annotations = list(audience = "user", priority = 0.5, last_modified = "2025-01-01T00:00:00Z"),
          meta = list(source = "test")
        ),
        content_image(png_1px, "image/png", annotations = list(audience = c("user", "assistant"))),
        content_audio(wav_stub, "audio/wav"),
        content_resource_link(
          "file:///tmp/report.csv", "report.csv",
          title = "Report", description = "A CSV report.", mime_type = "text/csv", size = 42
        ),
        content_resource("file:///tmp/notes.txt", text = "Some notes.", mime_type = "text/plain"),
        content_resource("file:///tmp/blob.bin", blob = "AAEC", mime_type = "application/octet-stream",
                         meta = list(origin = "memory"))
      ),
      structured_content = list(count = 6L),
      meta = list(request_kind = "demo")
    )
  },
  name = "all_content",
  description = "Every content type, with annotations and metadata."
)

basic_content <- tool(
  function() {
    tool_result(
      content = list(
        content_text("Text, image and embedded resources.",
                     annotations = list(priority = 1, last_modified = "2025-06-01T12:00:00Z")),
        content_image(png_1px, "image/png"),
        content_resource("mem://greeting", text = "hi"),
        content_resource("mem://bytes", blob = "AAEC")
      ),
      meta = list(note = "basic")
    )
  },
  name = "basic_content",
  description = "Content types every protocol version supports."
)

table <- tool(
  function() data.frame(x = 1:2, y = c("a", "b")),
  name = "table",
  description = "Returns a data frame (an ordinary value)."
)

nothing <- tool(
  function() NULL,
  name = "nothing",
  description = "Returns NULL."
)

forged <- tool(
  function() structure(list(content = list(list(type = "text"))), class = "mcplite_tool_result"),
  name = "forged",
  description = "Returns an invalid hand-made result object."
)

noisy <- tool(
  function() {
    cat("stray-cat\n")
    print("stray-print")
    message("stray-message")
    writeLines("stray-writeLines")
    cat("stray-stdout-connection\n", file = stdout())
    system("echo stray-system")
    system2("printf", "'stray-printf\\n'")
    warning("stray-warning")
    "quiet"
  },
  name = "noisy",
  description = "Writes to stdout in every way R can, then returns 'quiet'."
)

reader <- tool(
  function() {
    a <- readline("prompt> ")
    b <- readLines(stdin(), n = 5L, warn = FALSE)
    con <- file("stdin")
    on.exit(close(con))
    c <- readLines(con, n = 5L, warn = FALSE)
    paste0("readline=[", a, "] stdin=", length(b), " file=", length(c))
  },
  name = "reader",
  description = "Tries to read standard input."
)

sleepy <- tool(
  function(seconds) {
    message("sleepy: started")
    Sys.sleep(seconds)
    "woke up"
  },
  name = "sleepy",
  description = "Sleeps for the given number of seconds.",
  arguments = list(seconds = type_number("Seconds to sleep."))
)

search <- tool(
  function(query, limit = 2L, options = list(), mode = "fast") {
    hits <- paste0(query, "-", seq_len(limit))
    if (isTRUE(options[["upper"]])) hits <- toupper(hits)
    hits
  },
  name = "search",
  description = "A complete input schema given with type_from_schema().",
  arguments = type_from_schema('{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
      "query": {"type": "string", "minLength": 1},
      "limit": {"type": "integer", "minimum": 1, "maximum": 10},
      "options": {"$ref": "#/$defs/options"},
      "mode": {"type": "string", "enum": ["fast", "exact"]}
    },
    "required": ["query"],
    "$defs": {"options": {"type": "object", "properties": {"upper": {"type": "boolean"}}}}
  }')
)

mcp_server(
  list(
    echo, add, fail, flagged_error, stats, describe_point, series, greeting,
    all_content, basic_content, table, nothing, forged, noisy, reader, sleepy,
    search
  ),
  instructions = "Test server for mcplite client tests."
)
