# JSON encodings of R values (RULES J1, J2, J5, R6).
#
# Both encodings are implemented in Rust (rust/mcplite-r/src/encode): the
# payload encoding reproduces the installed jsonlite::toJSON() byte for byte
# with the payload options; the fixed encoding is used for protocol fields,
# schemas, annotations and metadata and never reads the options. The
# wrappers (R/bridge-wrappers.R) raise the encoder's errors: class
# mcplite_error_json (and mcplite_json_error) for values that cannot be
# converted, mcplite_error_option for invalid options (see ?mcplite_error).

# Read and validate the payload options (RULES R6). Returns a list with
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

# Error (class mcplite_error_option) naming the offending option when one of
# the four mcplite.json.* options is invalid; invisible TRUE otherwise.
check_payload_options <- function() {
  payload_options_check_impl()
  invisible(TRUE)
}

# Unexported: the payload encoder with explicit arguments (RULES J2.2).
# `na` missing = unset (jsonlite's per-class defaults); `digits` missing =
# jsonlite's default (4 decimal places); `digits` also accepts NA and I(n).
json_encode <- function(x, auto_unbox = TRUE, null = "null", na, digits) {
  na <- if (missing(na)) NULL else na
  digits <- if (missing(digits)) NULL else digits
  json_encode_impl(x, auto_unbox, null, na, digits)
}

# Payload JSON of `x` with the current options (errors if unencodable or if
# an option is invalid). With `na_null`, missing values are `null` unless
# `mcplite.json.na` is set (package tools' results, RULES R8.5).
payload_json <- function(x, na_null = FALSE) {
  payload_json_impl(x, na_null)
}

# Fixed JSON of `x` (RULES J1.2, J5).
fixed_json <- function(x) {
  fixed_json_impl(x)
}

# The jsonlite release whose output the encoder reproduces ("V1_8_4", ...);
# with `version`, pretend that jsonlite version is installed (tests only).
json_flavor <- function(version = NULL) {
  json_flavor_impl(version)
}

# Unexported: json_encode() returning the UTF-8 bytes as a raw vector, the
# form the server writes (no R string is built). For tests and benchmarks.
json_encode_raw <- function(x, auto_unbox = TRUE, null = "null", na, digits) {
  na <- if (missing(na)) NULL else na
  digits <- if (missing(digits)) NULL else digits
  json_encode_raw_impl(x, auto_unbox, null, na, digits)
}
