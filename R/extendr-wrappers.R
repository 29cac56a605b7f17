# Wrappers for the Rust entry points (rust/mcplite-r/src/lib.rs,
# encode/mod.rs and decode.rs; mcp_trace_context() calls its own). Hand-written: each is one `.Call()` whose
# value goes through bridge_value() (R/conditions.R), which raises the error
# an entry point returns as a classed R condition.

engine_serve <- function(spec, version, instructions, progress_interval) {
  bridge_value(.Call(wrap__engine_serve, spec, version, instructions, progress_interval))
}

engine_handler_new <- function(spec, version, instructions) {
  bridge_value(.Call(wrap__engine_handler_new, spec, version, instructions))
}

engine_handler_handle <- function(session, spec, line) {
  bridge_value(.Call(wrap__engine_handler_handle, session, spec, line))
}

json_encode_impl <- function(x, auto_unbox, null, na, digits) {
  bridge_value(.Call(wrap__json_encode_impl, x, auto_unbox, null, na, digits))
}

json_encode_raw_impl <- function(x, auto_unbox, null, na, digits) {
  bridge_value(.Call(wrap__json_encode_raw_impl, x, auto_unbox, null, na, digits))
}

payload_json_impl <- function(x) bridge_value(.Call(wrap__payload_json_impl, x))

fixed_json_impl <- function(x) bridge_value(.Call(wrap__fixed_json_impl, x))

payload_options_check_impl <- function() bridge_value(.Call(wrap__payload_options_check_impl))

json_flavor_impl <- function(version) .Call(wrap__json_flavor_impl, version)

json_decode_impl <- function(text) bridge_value(.Call(wrap__json_decode_impl, text))

engine_serve_http <- function(spec, version, instructions, opts) {
  bridge_value(.Call(wrap__engine_serve_http, spec, version, instructions, opts))
}

engine_protocol <- function() bridge_value(.Call(wrap__engine_protocol))
