# JSON encodings of R values (SPEC J1, J2, J5, R6).
#
# Both encodings are implemented in Rust (rust/mcplite-r/src/encode): the
# payload encoding reproduces the installed jsonlite::toJSON() byte for byte
# with the payload options; the fixed encoding is used for protocol fields,
# schemas, annotations and metadata and never reads the options. The Rust
# side returns either the JSON string or list(<error message>).

# Read and validate the payload options (SPEC R6). Returns a list with
# auto_unbox, null, na (NULL when unset) and digits (NULL when unset).
payload_options <- function() {
  check_payload_options()
  list(
    auto_unbox = getOption("mcplite.json.auto_unbox", TRUE),
    null = getOption("mcplite.json.null", "null"),
    na = getOption("mcplite.json.na"),
    digits = getOption("mcplite.json.digits")
  )
}

# Error (class mcplite_error) naming the offending option when one of the
# four mcplite.json.* options is invalid; invisible TRUE otherwise.
check_payload_options <- function() {
  msg <- .Call(wrap__payload_options_check_impl)
  if (!is.null(msg)) {
    abort(msg)
  }
  invisible(TRUE)
}

json_result <- function(res, what = NULL) {
  if (is.character(res)) {
    return(res)
  }
  abort(res[[1L]], class = "mcplite_json_error")
}

# Unexported: the payload encoder with explicit arguments (SPEC J2.2).
# `na` missing = unset (jsonlite's per-class defaults); `digits` missing =
# jsonlite's default (4 decimal places); `digits` also accepts NA and I(n).
json_encode <- function(x, auto_unbox = TRUE, null = "null", na, digits) {
  na <- if (missing(na)) NULL else na
  digits <- if (missing(digits)) NULL else digits
  json_result(.Call(wrap__json_encode_impl, x, auto_unbox, null, na, digits))
}

# Payload JSON of `x` with the current options (errors if unencodable or if
# an option is invalid).
payload_json <- function(x) {
  json_result(.Call(wrap__payload_json_impl, x))
}

# Fixed JSON of `x` (SPEC J1.2, J5).
fixed_json <- function(x) {
  json_result(.Call(wrap__fixed_json_impl, x))
}

# The jsonlite release whose output the encoder reproduces ("V1_8_4", ...);
# with `version`, pretend that jsonlite version is installed (tests only).
json_flavor <- function(version = NULL) {
  .Call(wrap__json_flavor_impl, version)
}

# Unexported: json_encode() returning the UTF-8 bytes as a raw vector, the
# form the server writes (no R string is built). For tests and benchmarks.
json_encode_raw <- function(x, auto_unbox = TRUE, null = "null", na, digits) {
  na <- if (missing(na)) NULL else na
  digits <- if (missing(digits)) NULL else digits
  res <- .Call(wrap__json_encode_raw_impl, x, auto_unbox, null, na, digits)
  if (is.raw(res)) res else json_result(res)
}
