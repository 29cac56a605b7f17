# package_tools(), the arguments a client sends: JSON values made into the R
# values the function takes (vectors, matrices, time series, formulas).

# -- converting JSON values ------------------------------------------------------

# A function turning the parsed JSON value of an argument into the R value
# for the schema's type.
schema_converter <- function(schema) {
  type <- schema$type
  if (identical(type, "array")) {
    item <- schema$items$type
    if (is_scalar_string(item) && item %in% c("boolean", "integer", "number", "string")) {
      return(function(value) as_atomic(value, item))
    }
  }
  if (is_scalar_string(type) && type %in% c("boolean", "integer", "number", "string")) {
    return(function(value) as_atomic(value, type))
  }
  if (identical(schema[names(schema) != "description"], series_schema)) {
    return(series_from_json)
  }
  # An array of arrays becomes a matrix only where the schema names one
  # (RULES R8.3): untyped, it may be a list of samples (kruskal.test(x =)).
  is_matrix <- function(s) {
    is.list(s) && identical(s$type, "array") && is.list(s$items) && identical(s$items$type, "array")
  }
  if (is_matrix(schema) || any(vapply(schema$anyOf %||% list(), is_matrix, NA))) {
    return(function(value) simplify_json(value, matrix = TRUE))
  }
  simplify_json
}

# A time series from an array of values, or from an object with `data` and
# optionally `frequency` and `start` (series_schema); other values are
# simplified as untyped ones, for the function to report.
series_from_json <- function(value) {
  if (!is.list(value) || is.null(names(value)) || !"data" %in% names(value)) {
    return(simplify_json(value))
  }
  # `[[` matches names exactly (`$` would take "start_date" for "start").
  data <- as_atomic(value[["data"]], "number")
  frequency <- value[["frequency"]] %||% 1
  start <- value[["start"]] %||% 1
  if (!all(names(value) %in% c("data", "frequency", "start")) ||
      !is.numeric(data) || !is.numeric(frequency) || length(frequency) != 1L || !is.finite(frequency) ||
      frequency <= 0 || !is.numeric(start <- as_atomic(start, "number")) || !length(start) %in% 1:2) {
    abort("a time series is {\"data\": [numbers], \"frequency\": a positive number, ",
          "\"start\": a number or [unit, period]}")
  }
  stats::ts(data, start = start, frequency = frequency)
}

# A formula from its text: the string must parse to a single `~` call. The
# call is turned into a formula without evaluating any of its terms. A model
# function evaluates the terms later, so (RULES R8.8) the functions a term may
# call are limited to formula operators and arithmetic, and the formula's
# environment reaches R's attached packages but not the global environment.
formula_from_json <- function(value) {
  if (!is_scalar_string(value)) {
    abort("a formula must be given as a single string such as \"y ~ x\"")
  }
  expr <- tryCatch(str2lang(value), error = function(e) NULL)
  if (!is.call(expr) || !identical(expr[[1L]], as.name("~"))) {
    abort("\"", value, "\" is not a formula such as \"y ~ x\"")
  }
  bad <- setdiff(formula_calls(expr), formula_functions)
  if (length(bad) > 0L) {
    abort("the formula \"", value, "\" calls ", paste0(bad, "()", collapse = ", "),
          ", which a formula may not; it may call ", paste0(formula_functions[-1L], collapse = " "))
  }
  env <- if ("package:stats" %in% search()) as.environment("package:stats") else baseenv()
  stats::as.formula(expr, env = new.env(parent = env))
}

formula_functions <- c(
  "~", "+", "-", "*", "/", "^", ":", "%in%", "|", "(", "I", "log", "log2", "log10", "log1p", "exp",
  "expm1", "sqrt", "abs", "sin", "cos", "tan", "poly", "offset", "factor", "as.factor", "ordered",
  "as.numeric", "as.integer", "scale", "cut", "Error"
)

# The names of the functions a formula's terms call.
formula_calls <- function(e) {
  if (!is.call(e)) {
    return(character())
  }
  head <- e[[1L]]
  out <- if (is.symbol(head)) as.character(head) else c("(computed)", formula_calls(head))
  for (i in seq_along(e)[-1L]) out <- c(out, formula_calls(e[[i]]))
  unique(out)
}
