# Wrappers for the Rust entry points in rust/mcplite-r/src/lib.rs.
# Hand-written: each is a one-line `.Call()`.

engine_is_serving <- function() .Call(wrap__engine_is_serving)

engine_serve <- function(spec, version, instructions) {
  .Call(wrap__engine_serve, spec, version, instructions)
}

engine_session_new <- function(spec, version, instructions) {
  .Call(wrap__engine_session_new, spec, version, instructions)
}

engine_session_handle <- function(session, spec, line) {
  .Call(wrap__engine_session_handle, session, spec, line)
}
