# Server for the wire check in README.md (beside this file): tools whose
# results use every projection-sensitive feature.
#   Rscript --vanilla wire-server.R < in.jsonl > out.jsonl
library(mcplite)
tools <- list(
  tool(function(text) text, "Echo.", name = "echo", arguments = list(text = type_string()),
       annotations = list(title = "Echo", read_only_hint = TRUE)),
  tool(function(x, y) x + y, "Add.", name = "add", arguments = list(x = type_number(), y = type_number()),
       output_schema = type_object(sum = type_number())),
  tool(function() tool_result(
    content = list(
      content_text("t", annotations = list(priority = 0.5, last_modified = "2025-01-01"), meta = list(k = 1)),
      content_image("AA==", "image/png"),
      content_audio("AA==", "audio/wav"),
      content_resource_link("file:///a", "a", title = "A", size = 3),
      content_resource("mem:1", text = "x", mime_type = "text/plain")),
    structured_content = list(a = 1, b = "x"), meta = list(m = TRUE)), "Blocks.", name = "blocks"),
  tool(function() tool_result(structured_content = list(1, 2, 3)), "Array.", name = "arr"),
  tool(function() data.frame(a = 1:3, b = c("x", "y", "z")), "Frame.", name = "frame"),
  tool(function() stop("boom \"q\"\nline"), "Fails.", name = "fail"),
  tool(function(...) length(list(...)), "Counts.", name = "count")
)
mcp_server(tools, instructions = "Line one\nline \"two\" </script> \u00e9")
