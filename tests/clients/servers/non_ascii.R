# Non-ASCII text written literally in a UTF-8 server script: a description,
# a returned string and an error message. MCP clients start servers with a
# minimal environment (no LANG/LC_*), so R runs in the C locale here.
library(mcplite)

greet <- tool(
  function(name) paste0("Grüße, ", name, " ✓"),
  name = "greet",
  description = "Sagt Grüß Gott ✓",
  arguments = list(name = type_string("Wer?"))
)

fail_accent <- tool(
  function() stop("échec ✗"),
  name = "fail_accent",
  description = "Fails with a non-ASCII message."
)

mcp_server(list(greet, fail_accent))
