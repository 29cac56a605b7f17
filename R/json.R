# JSON encodings of R values (SPEC J1).
#
# Payload encoding reproduces jsonlite::toJSON() with the payload options;
# fixed encoding is used for protocol fields, schemas, annotations and
# metadata and never reads the options.
#
# NOTE: these are the first, jsonlite-backed versions; the Rust encoder
# replaces them (same signatures).

# Read and validate the payload options (SPEC R6). Returns a list with
# auto_unbox, null, na (NULL when unset) and digits (NULL when unset).
payload_options <- function() {
  null <- getOption("mcplite.json.null", "null")
  if (!(is_scalar_string(null) && null %in% c("null", "list"))) {
    abort("Option `mcplite.json.null` must be \"null\" or \"list\", not ", describe(null), ".")
  }
  na <- getOption("mcplite.json.na")
  if (!is.null(na) && !(is_scalar_string(na) && na %in% c("null", "string"))) {
    abort("Option `mcplite.json.na` must be unset (NULL), \"null\" or \"string\", not ", describe(na), ".")
  }
  auto_unbox <- getOption("mcplite.json.auto_unbox", TRUE)
  if (!is_true_false(auto_unbox)) {
    abort("Option `mcplite.json.auto_unbox` must be TRUE or FALSE, not ", describe(auto_unbox), ".")
  }
  digits <- getOption("mcplite.json.digits")
  if (!is.null(digits) && !valid_digits(digits)) {
    abort(
      "Option `mcplite.json.digits` must be unset (NULL), a whole number >= 0, ",
      "NA (maximum precision) or I(n) with a whole number n >= 1, not ", describe(digits), "."
    )
  }
  list(auto_unbox = auto_unbox, null = null, na = na, digits = digits)
}

valid_digits <- function(d) {
  if (length(d) != 1L) {
    return(FALSE)
  }
  if (inherits(d, "AsIs")) {
    v <- unclass(d)
    return(is.numeric(v) && !is.na(v) && is.finite(v) && v == round(v) && v >= 1)
  }
  if (is.logical(d)) {
    return(is.na(d))
  }
  is.numeric(d) && !is.na(d) && is.finite(d) && d == round(d) && d >= 0
}

check_payload_options <- function() {
  payload_options()
  invisible(TRUE)
}

# Unexported: the payload encoder with explicit arguments (SPEC J2.2).
json_encode <- function(x, auto_unbox = TRUE, null = "null", na, digits) {
  args <- list(x, auto_unbox = auto_unbox, null = null)
  if (!missing(na)) args$na <- na
  if (!missing(digits)) args$digits <- digits
  as.character(do.call(jsonlite::toJSON, args))
}

# Payload JSON of `x` with the current options.
payload_json <- function(x) {
  o <- payload_options()
  args <- list(x, auto_unbox = o$auto_unbox, null = o$null)
  if (!is.null(o$na)) args$na <- o$na
  if (!is.null(o$digits)) args$digits <- o$digits
  as.character(do.call(jsonlite::toJSON, args))
}

# Fixed JSON of `x` (SPEC J1.2, J5).
fixed_json <- function(x) {
  as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", digits = NA))
}
