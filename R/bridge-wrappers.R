# Wrappers for the Rust entry points (rust/mcplite-r/src/lib.rs,
# encode/mod.rs, decode.rs and client.rs; mcp_trace_context() and mcp_progress()
# call their own). Hand-written: each is one `.Call()` whose
# value goes through bridge_value() (R/conditions.R), which raises the error
# an entry point returns as a classed R condition. Not named
# extendr-wrappers.R, the file rextendr::document() writes (its wrappers
# would drop that conversion); tests/suites/10-lint.sh checks that the
# wrappers here match the functions the bridge's extendr_module! exports.

engine_serve <- function(spec, version, instructions, progress_interval, workers = NULL) {
  bridge_value(.Call(wrap__engine_serve, spec, version, instructions, progress_interval, workers))
}

engine_worker <- function(spec, progress_interval) {
  bridge_value(.Call(wrap__engine_worker, spec, progress_interval))
}

engine_confine <- function(read, write, memory, file_size) {
  bridge_value(.Call(wrap__engine_confine, read, write, memory, file_size))
}

engine_confine_available <- function() {
  bridge_value(.Call(wrap__engine_confine_available))
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

payload_json_impl <- function(x, na_null) bridge_value(.Call(wrap__payload_json_impl, x, na_null))

fixed_json_impl <- function(x) bridge_value(.Call(wrap__fixed_json_impl, x))

payload_options_check_impl <- function() bridge_value(.Call(wrap__payload_options_check_impl))

json_flavor_impl <- function(version) .Call(wrap__json_flavor_impl, version)

json_decode_impl <- function(text) bridge_value(.Call(wrap__json_decode_impl, text))

engine_serve_http <- function(spec, version, instructions, opts, progress_interval, workers = NULL) {
  bridge_value(.Call(wrap__engine_serve_http, spec, version, instructions, opts, progress_interval, workers))
}

engine_protocol <- function() bridge_value(.Call(wrap__engine_protocol))

engine_uri_template_variables <- function(template) {
  bridge_value(.Call(wrap__engine_uri_template_variables, template))
}

# The MCP client (rust/mcplite-r/src/client.rs, RULES section 13).

client_connect_stdio <- function(program, args, env, cwd, protocol, timeout, probe_timeout, max_line,
                                 client_version, capabilities, log_level, name) {
  bridge_value(.Call(wrap__client_connect_stdio, program, args, env, cwd, protocol, timeout,
                     probe_timeout, max_line, client_version, capabilities, log_level, name))
}

client_connect_memory <- function(spec, server_version, instructions, protocol, timeout, progress_interval,
                                  client_version, name) {
  bridge_value(.Call(wrap__client_connect_memory, spec, server_version, instructions, protocol, timeout,
                     progress_interval, client_version, name))
}

client_connect_http <- function(url, values, names, protocol, timeout, probe_timeout, max_message,
                                client_version, capabilities, log_level, ca_file, oauth, name) {
  bridge_value(.Call(wrap__client_connect_http, url, values, names, protocol, timeout, probe_timeout,
                     max_message, client_version, capabilities, log_level, ca_file, oauth, name))
}

client_info <- function(ptr) bridge_value(.Call(wrap__client_info, ptr))

client_check_open <- function(ptr) bridge_value(.Call(wrap__client_check_open, ptr))

client_list_tools <- function(ptr, timeout) bridge_value(.Call(wrap__client_list_tools, ptr, timeout))

client_list <- function(ptr, method, key, timeout) bridge_value(.Call(wrap__client_list, ptr, method, key, timeout))

client_read_resource <- function(ptr, uri, timeout) bridge_value(.Call(wrap__client_read_resource, ptr, uri, timeout))

client_get_prompt <- function(ptr, name, arguments, timeout) {
  bridge_value(.Call(wrap__client_get_prompt, ptr, name, arguments, timeout))
}

client_input_schema <- function(ptr, name, timeout) {
  bridge_value(.Call(wrap__client_input_schema, ptr, name, timeout))
}

client_call <- function(ptr, name, arguments, progress, timeout, max_time, task) {
  bridge_value(.Call(wrap__client_call, ptr, name, arguments, progress, timeout, max_time, task))
}

client_task <- function(ptr, method, task_id, responses, timeout) {
  bridge_value(.Call(wrap__client_task, ptr, method, task_id, responses, timeout))
}

client_wait <- function(ptr, id) bridge_value(.Call(wrap__client_wait, ptr, id))
client_answer <- function(ptr, id, reply, result, code, message) {
  bridge_value(.Call(wrap__client_answer, ptr, id, reply, result, code, message))
}
client_retry <- function(ptr, id, responses) bridge_value(.Call(wrap__client_retry, ptr, id, responses))

client_cancel <- function(ptr, id, reason) bridge_value(.Call(wrap__client_cancel, ptr, id, reason))

client_close <- function(ptr) bridge_value(.Call(wrap__client_close, ptr))

client_stderr <- function(ptr) bridge_value(.Call(wrap__client_stderr, ptr))

progress_listening <- function() bridge_value(.Call(wrap__client_progress_listening))

# Live sessions (rust/mcplite-r/src/live.rs; R/live-session.R, R/live-server.R).

engine_live_dirs <- function() {
  bridge_value(.Call(wrap__live_dirs))
}

engine_live_open <- function(id, info, wd, runner) {
  bridge_value(.Call(wrap__live_open, id, info, wd, runner))
}

engine_live_close <- function() {
  bridge_value(.Call(wrap__live_close))
}

engine_live_socket <- function() {
  bridge_value(.Call(wrap__live_socket))
}

engine_live_touch <- function(wd) {
  bridge_value(.Call(wrap__live_touch, wd))
}

engine_live_list <- function(dir, timeout) {
  bridge_value(.Call(wrap__live_list, dir, timeout))
}

engine_live_connect <- function(dir, id, timeout) {
  bridge_value(.Call(wrap__live_connect, dir, id, timeout))
}

engine_live_disconnect <- function(conn) {
  bridge_value(.Call(wrap__live_disconnect, conn))
}

engine_live_info <- function(conn, timeout) {
  bridge_value(.Call(wrap__live_info, conn, timeout))
}

engine_live_call <- function(conn, fields, body, wait) {
  bridge_value(.Call(wrap__live_call, conn, fields, body, wait))
}

log_wanted <- function(level) bridge_value(.Call(wrap__log_wanted, level))

log_running <- function(level, logger, data) bridge_value(.Call(wrap__log_running, level, logger, data))

resource_change_set <- function(spec) bridge_value(.Call(wrap__resource_change_set, spec))

resource_change_remove <- function(uri) bridge_value(.Call(wrap__resource_change_remove, uri))

ask_running <- function(kind, params, timeout) bridge_value(.Call(wrap__ask_running, kind, params, timeout))
