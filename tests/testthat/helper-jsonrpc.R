# JSON-RPC lines for the tests that talk to a server in process or over stdio.

# A modern (2026-07-28) `tools/call` line: `name` (a string), `arguments_json`
# (JSON text), `meta` (more members of `_meta` as JSON text that starts with a
# comma, or "").
modern_call <- function(name, arguments_json = "{}", id = 2, meta = "") {
  sprintf(
    paste0(
      '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%s,"arguments":%s,',
      '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
      '"io.modelcontextprotocol/clientCapabilities":{}%s}}}'
    ),
    id, jsonlite::toJSON(name, auto_unbox = TRUE), arguments_json, meta
  )
}
