# Internal helpers shared by the whole package.

# abort(), the helper that raises mcplite's errors, is in R/conditions.R; the
# argument checks (check_*(), is_scalar_string(), ...) are in R/check.R.

# An empty symbol: the value of a formal argument without a default, or of an
# empty argument in a call (`x[, 1]`).
is_missing_arg <- function(x) is.symbol(x) && identical(as.character(x), "")

# What was supplied, in words, for error messages ("`text` must be a single
# string, not <describe(x)>."). Missing values and short scalars are shown as
# they would be typed in R (`NA`, `NA_character_`, the string "abc", the
# number 1.5); other objects by their type or class.
describe <- function(x) {
  if (is.null(x)) {
    return("`NULL`")
  }
  if (is.function(x)) {
    if (inherits(x, "mcplite_tool")) {
      return("an mcplite tool")
    }
    return(if (is.primitive(x)) "a primitive function" else "a function")
  }
  if (inherits(x, "mcplite_type")) {
    kind <- if (is.list(x)) x[["kind"]] else NULL
    if (is_scalar_string(kind)) {
      return(paste0("a type_", kind, "() helper"))
    }
    return("a damaged mcplite type object")
  }
  if (inherits(x, "mcplite_content")) {
    type <- if (is.list(x)) x[["type"]] else NULL
    if (is_scalar_string(type)) {
      return(paste0("a content_", type, "() block"))
    }
    return("a damaged mcplite content block")
  }
  if (inherits(x, "mcplite_tool_result")) {
    return("a tool_result()")
  }
  if (is.environment(x)) {
    return("an environment")
  }
  if (is.symbol(x)) {
    return(paste0("the symbol `", as.character(x), "`"))
  }
  if (is.call(x)) {
    return("a call")
  }
  if (isS4(x)) {
    return(paste0("an S4 object of class <", class(x)[1L], ">"))
  }
  if (is.data.frame(x)) {
    return("a data frame")
  }
  if (is.factor(x)) {
    return(if (length(x) == 1L) "a factor of length 1" else "a factor")
  }
  if (is.object(x)) {
    return(paste0("an object of class <", paste(class(x), collapse = "/"), ">"))
  }
  if (is.list(x)) {
    return(if (length(x) == 0L) "an empty list" else paste0("a list of length ", length(x)))
  }
  if (is.atomic(x)) {
    return(describe_atomic(x))
  }
  paste0("an object of type ", typeof(x))
}

describe_atomic <- function(x) {
  type <- typeof(x)
  noun <- switch(type,
    logical = "logical",
    integer = "integer",
    double = "double",
    complex = "complex",
    character = "character",
    raw = "raw",
    type
  )
  if (!is.null(dim(x))) {
    shape <- if (length(dim(x)) == 2L) "matrix" else "array"
    return(paste0(article(noun), " ", noun, " ", shape, " (", paste(dim(x), collapse = " x "), ")"))
  }
  n <- length(x)
  if (n == 0L) {
    return(paste0("an empty ", noun, " vector (`", type_literal(type), "(0)`)"))
  }
  if (n > 1L) {
    return(paste0(article(noun), " ", noun, " vector of length ", n))
  }
  if (is.na(x) && !is.nan(x)) {
    return(paste0("`", na_literal(type), "`"))
  }
  switch(type,
    logical = paste0("`", if (x) "TRUE" else "FALSE", "`"),
    integer = paste0("the integer ", format(x)),
    double = if (is.finite(x)) {
      paste0("the number ", format(x, digits = 15))
    } else {
      paste0("`", format(x), "`")
    },
    character = describe_string(x),
    complex = paste0("the complex number ", format(x)),
    paste0(article(noun), " ", noun, " value")
  )
}

describe_string <- function(x) {
  if (!nzchar(x)) {
    return("the empty string \"\"")
  }
  shown <- x
  if (isTRUE(nchar(x, type = "chars", allowNA = TRUE) > 40L)) {
    shown <- paste0(substr(x, 1L, 37L), "...")
  }
  paste0("the string ", encodeString(shown, quote = "\""))
}

na_literal <- function(type) {
  switch(type,
    logical = "NA",
    integer = "NA_integer_",
    double = "NA_real_",
    character = "NA_character_",
    complex = "NA_complex_",
    "NA"
  )
}

type_literal <- function(type) {
  if (type == "double") "numeric" else type
}

article <- function(word) {
  if (grepl("^[aeiou]", word)) "an" else "a"
}

# "a", "a and b", "a, b and c".
and_list <- function(x, and = "and") {
  if (length(x) <= 1L) {
    return(paste(x, collapse = ""))
  }
  paste0(paste(x[-length(x)], collapse = ", "), " ", and, " ", x[[length(x)]])
}

# "a", "a or b", "a, b or c".
or_list <- function(x) and_list(x, "or")

`%||%` <- function(x, y) if (is.null(x)) y else x
