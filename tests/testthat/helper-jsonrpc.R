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

# The `_meta` of a modern (2026-07-28) request, as an R list, with a progress
# token when `token` is given.
modern_meta <- function(token = NULL) {
  meta <- list(
    "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" = structure(list(), names = character())
  )
  if (!is.null(token)) meta$progressToken <- token
  meta
}

# A `tools/call` line without the modern claim: `arguments` is JSON text (no
# member when NULL), `token` a progress token as JSON text.
call_line <- function(id, name, arguments = NULL, token = NULL) {
  args <- if (is.null(arguments)) "" else paste0(',"arguments":', arguments)
  meta <- if (is.null(token)) "" else sprintf(',"_meta":{"progressToken":%s}', token)
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s"%s%s}}', id, name, args, meta)
}
