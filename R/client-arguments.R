# The arguments of an MCP client's tools/call (RULES K5): checked, shaped by
# the tool's input schema from the server's listing and written as JSON.

check_arguments <- function(arguments) {
  if (!is.list(arguments) || is.object(arguments)) {
    abort_arg("`arguments` must be a named list of argument values, not ", describe(arguments), ".")
  }
  if (length(arguments) > 0L && !is_named_list(arguments, empty_ok = FALSE)) {
    abort_arg("`arguments` must have unique, non-empty names (one per tool argument).")
  }
  invisible(arguments)
}

# Named list -> the JSON object of a tools/call, shaped by the tool's input
# schema when there is one (RULES K5).
arguments_json <- function(arguments, schema = NULL) {
  if (length(arguments) == 0L) {
    return("{}")
  }
  if (is.list(schema)) {
    arguments <- shape_arguments(arguments, schema)
  }
  tryCatch(
    payload_json_impl(arguments, FALSE),
    mcplite_error = function(e) {
      abort("`arguments` cannot be converted to JSON: ", conditionMessage(e),
            class = setdiff(class(e), c("mcplite_error", "error", "condition")))
    }
  )
}

# RULES K5.2. The JSON types a schema (a list) allows, NULL when it does not
# say, looking through `anyOf`/`oneOf` branches; `nullable: true` and an
# `enum` holding null allow null. Called for every argument of every call:
# kept to a few primitive operations in the common case.
schema_types <- function(schema) {
  type <- schema[["type"]]
  types <- if (is.character(type)) type else if (is.list(type)) as.character(unlist(type, use.names = FALSE))
  if (!is.null(schema[["anyOf"]]) || !is.null(schema[["oneOf"]])) {
    for (b in c(schema[["anyOf"]], schema[["oneOf"]])) {
      if (is.list(b)) types <- c(types, schema_types(b))
    }
  }
  if (isTRUE(schema[["nullable"]])) {
    types <- c(types, "null")
  }
  enum <- schema[["enum"]]
  if (is.list(enum) && any(vapply(enum, is.null, TRUE))) {
    types <- c(types, "null")
  }
  types
}

# The first subschema (the schema itself, or an `anyOf`/`oneOf` branch)
# that allows `type`.
schema_branch <- function(schema, type) {
  if (any(unlist(schema[["type"]], use.names = FALSE) == type)) {
    return(schema)
  }
  for (b in c(schema[["anyOf"]], schema[["oneOf"]])) {
    if (is.list(b) && any(schema_types(b) == type)) return(schema_branch(b, type))
  }
  NULL
}

# Does the JSON type of a length-one atomic value (not NA) fit `types`?
scalar_fits <- function(value, types) {
  if (is.character(value)) return(any(types == "string"))
  if (is.logical(value)) return(any(types == "boolean"))
  any(types == "number") || (any(types == "integer") && (is.integer(value) || value == trunc(value)))
}

# Each named element of `value` shaped by its property's schema (exact
# names, RULES section 0).
shape_arguments <- function(value, schema) {
  props <- schema[["properties"]]
  extra <- schema[["additionalProperties"]]
  if (!is.list(props) && !is.list(extra)) {
    return(value)
  }
  nms <- names(value)
  for (i in seq_along(value)) {
    sub <- if (is.list(props)) props[[nms[[i]]]]
    if (is.null(sub) && is.list(extra)) sub <- extra
    v <- value[[i]]
    if (is.list(sub) && !is.null(v)) {
      shaped <- shape_value(v, sub)
      if (!identical(shaped, v)) value[i] <- list(shaped)
    }
  }
  value
}

# One R value shaped by its schema: a length-one vector where only an array
# fits becomes an array (I()), an empty list where an object fits `{}`, a
# single NA where null fits a logical NA (null), NA elements of a vector
# whose items may be null become nulls; objects and arrays of lists are
# shaped inside. Classed values (factors, dates, I(), data frames) are left
# to the encoder.
shape_value <- function(value, schema) {
  if (is.object(value)) {
    return(value)
  }
  types <- schema_types(schema)
  if (is.null(types)) {
    return(value)
  }
  if (is.atomic(value)) {
    if (length(value) == 1L && is.na(value) && any(types == "null")) {
      return(NA)
    }
    if (!(any(types == "array")) || is.null(value)) {
      return(value)
    }
    if (anyNA(value)) {
      items <- schema_branch(schema, "array")[["items"]]
      if (is.list(items) && any(schema_types(items) == "null")) {
        return(lapply(value, function(v) if (is.na(v)) NA else v))
      }
    }
    if (length(value) == 1L && !(!is.na(value) && scalar_fits(value, types))) {
      return(I(value))
    }
    return(value)
  }
  if (is.list(value)) {
    if (length(value) == 0L && any(types == "object") && !(any(types == "array"))) {
      return(structure(list(), names = character()))
    }
    if (!is.null(names(value)) && any(types == "object")) {
      return(shape_arguments(value, schema_branch(schema, "object")))
    }
    if (is.null(names(value)) && any(types == "array")) {
      items <- schema_branch(schema, "array")[["items"]]
      if (is.list(items)) {
        value <- lapply(value, function(v) if (is.null(v)) v else shape_value(v, items))
      }
    }
  }
  value
}
