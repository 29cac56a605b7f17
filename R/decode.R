# JSON to R values (RULES J6), and the typed R values made from them.
#
# JSON text becomes R values in one place, the bridge's decoder
# (rust/mcplite-r/src/decode.rs): tool arguments, client results and the
# JSON text read here (json_decode()) follow the same mapping. The helpers
# below turn such values into typed vectors for package tools (RULES R8.3)
# and ellmer tools (RULES E8), which differ only where the rules say so.

# The R value of JSON text (RULES J6.1). An error of class
# mcplite_error_json says why text that is not one JSON value, or that holds
# U+0000 (J6.2), cannot be read.
json_decode <- function(text) {
  json_decode_impl(enc2utf8(text))
}

# The R type of a JSON type, NULL for types without one.
json_r_type <- function(type) {
  switch(type,
    boolean = "logical",
    integer = "integer",
    number = "double",
    string = "character",
    NULL
  )
}

# The NA of a JSON type (NULL for types without one).
json_na <- function(type) {
  r_type <- json_r_type(type)
  if (is.null(r_type)) NULL else vector(r_type, 1L)[NA_integer_]
}

# A JSON array (a list of scalars, or an atomic vector) as an atomic vector
# of the JSON type `type` ("boolean", "integer", "number" or "string"):
# `null` elements become NA, integers and doubles are converted to each
# other. An element that does not fit the type (another type, a fraction or
# a number beyond R's integers for "integer", anything but a scalar):
# with `lenient = FALSE` (package tools, RULES R8.3) the value is returned
# unchanged, for the function to report; with `lenient = TRUE` (ellmer,
# RULES E8) it becomes NA, a double becomes an integer by truncation and a
# longer element gives its first value. A value that is no array is
# returned unchanged.
as_atomic <- function(value, type, lenient = FALSE) {
  r_type <- json_r_type(type)
  if (is.null(r_type) || is.object(value) || !(is.list(value) || is.atomic(value)) || is.null(value)) {
    return(value)
  }
  na <- json_na(type)
  one <- function(e) {
    if (is.null(e)) {
      return(na)
    }
    if (!is.atomic(e) || is.object(e) || (length(e) != 1L && !(lenient && length(e) > 1L))) {
      return(NULL)
    }
    v <- e[[1L]]
    t <- typeof(v)
    if (t == r_type) {
      return(v)
    }
    if (r_type == "double" && t == "integer") {
      return(as.double(v))
    }
    if (r_type == "integer" && t == "double" && is.finite(v) && abs(v) <= .Machine$integer.max &&
          (lenient || v == trunc(v))) {
      return(as.integer(v))
    }
    NULL
  }
  out <- vector(r_type, length(value))
  for (i in seq_along(value)) {
    v <- one(value[[i]])
    if (is.null(v)) {
      if (!lenient) {
        return(value)
      }
      v <- na
    }
    out[[i]] <- v
  }
  out
}

# jsonlite-style simplification of a decoded JSON value (RULES R8.3, for
# values without a type): arrays of scalars of one kind (integers and
# doubles together) become atomic vectors, arrays of objects with scalar
# members data frames; objects are simplified member by member. With
# `matrix = TRUE` (the schema names a matrix), an array of such arrays of
# one length becomes a matrix (one row each); otherwise it stays a list of
# vectors, which is what kruskal.test(x =), boxplot(x =) and
# data.table::transpose(l =) take.
simplify_json <- function(value, matrix = FALSE) {
  if (!is.list(value) || is.object(value) || length(value) == 0L) {
    return(value)
  }
  if (!is.null(names(value))) {
    for (i in seq_along(value)) {
      if (!is.null(value[[i]])) value[[i]] <- simplify_json(value[[i]])
    }
    return(value)
  }
  scalar <- function(v) is.null(v) || (is.atomic(v) && length(v) == 1L)
  if (all(vapply(value, scalar, logical(1)))) {
    kinds <- setdiff(vapply(value, function(v) if (is.null(v)) "null" else typeof(v), ""), "null")
    kinds <- unique(kinds)
    type <- if (length(kinds) == 2L && all(kinds %in% c("integer", "double"))) {
      "number"
    } else if (length(kinds) == 1L) {
      switch(kinds, logical = "boolean", integer = "integer", double = "number", character = "string", NULL)
    }
    return(if (is.null(type)) value else as_atomic(value, type))
  }
  is_record <- function(v) {
    is.list(v) && !is.null(names(v)) && length(v) > 0L && all(vapply(v, scalar, logical(1)))
  }
  if (all(vapply(value, is_record, logical(1)))) {
    cols <- unique(unlist(lapply(value, names), use.names = FALSE))
    columns <- lapply(cols, function(col) {
      simplify_json(lapply(value, function(r) r[[col]]))
    })
    if (all(vapply(columns, is.atomic, logical(1)))) {
      names(columns) <- cols
      return(as.data.frame(columns, stringsAsFactors = FALSE, check.names = FALSE,
                           optional = TRUE))
    }
  }
  rows <- lapply(value, function(v) if (is.null(v)) v else simplify_json(v))
  if (!matrix) {
    return(rows)
  }
  # Arrays of one length and kind of scalar: a matrix, one row per array, as
  # jsonlite simplifies them (RULES R8.3).
  vector_row <- function(r) is.atomic(r) && !is.null(r) && is.null(dim(r)) && length(r) > 0L
  if (all(vapply(rows, vector_row, NA)) && length(unique(lengths(rows))) == 1L) {
    types <- unique(vapply(rows, typeof, ""))
    if (length(types) == 1L || all(types %in% c("integer", "double"))) {
      return(do.call(rbind, unname(rows)))
    }
  }
  rows
}
