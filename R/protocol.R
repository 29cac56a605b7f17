# The protocol constants the engine owns (rust/engine/src/version.rs and
# codes.rs): the version lists and the JSON-RPC/MCP error codes. R spells
# none of them; it asks the engine once per session.

protocol_cache <- new.env(parent = emptyenv())

# A list: `server_versions` (discovery order), `modern`, `client_versions`
# (what `mcp_connect(protocol =)` may name), `client_accepts`, `codes` (a
# named integer vector: PARSE_ERROR, ..., HEADER_MISMATCH, ...).
protocol_constants <- function() {
  if (is.null(protocol_cache$value)) {
    protocol_cache$value <- engine_protocol()
  }
  protocol_cache$value
}

# The error code named `name` (as in rust/engine/src/codes.rs).
protocol_code <- function(name) {
  code <- protocol_constants()$codes[name]
  if (length(code) != 1L || is.na(code)) {
    abort("internal error: unknown protocol code ", name, class = error_class("internal"))
  }
  unname(code)
}
