# Type helpers: lightweight descriptions of tool arguments and output
# (RULES R2). Each helper returns a list of class
# c("mcplite_type_<kind>", "mcplite_type"). The layout is internal; the rest of
# the package reads types only through type_schema() and type_required(),
# which also accept ellmer S7 type objects (RULES E4, via R/ellmer.R).

#' Describe tool arguments and output with JSON Schema
#'
#' @description
#' These helpers build small JSON Schema descriptions for the arguments of a
#' [tool()] and for its `output_schema`:
#'
#' * `type_boolean()`, `type_integer()`, `type_number()` and `type_string()`
#'   describe a single JSON value of that type.
#' * `type_enum()` restricts a value to a fixed set of choices.
#' * `type_array()` describes a JSON array whose elements follow `items`.
#' * `type_object()` describes a JSON object with named properties.
#' * `type_from_schema()` wraps a complete JSON Schema given as JSON text, a
#'   JSON file or an R list, and advertises it exactly as supplied. Passed as
#'   `arguments` to [tool()] it becomes the whole input schema, provided its
#'   root has `type = "object"`.
#' * `type_ignore()` hides an argument from the advertised schema.
#'
#' @details
#' A schema is a description for the client, nothing more: mcplite does not
#' coerce or check the values a client sends, and it does not fill in R
#' defaults. JSON arrays arrive in the tool function as R lists. When an
#' argument is marked `required = FALSE`, the client may leave it out, so the
#' R function needs its own default for it.
#'
#' `type_ignore()` only removes the argument from the schema. If a client sends
#' a value for it anyway, the value is still passed to the function; it is not
#' a permission mechanism.
#'
#' `type_from_schema()` keeps every keyword of the schema (`$schema`, `$defs`,
#' `$ref`, `allOf`, `if`/`then`, ...) and adds nothing. Without `$schema`,
#' MCP reads a schema as JSON Schema 2020-12. JSON text is parsed without
#' simplification: objects become named lists and arrays unnamed lists. When
#' you pass an R list instead, its shape is kept as it is: write an empty JSON
#' object as a named empty list (`setNames(list(), character())`) and an empty
#' array as `list()`.
#'
#' Checking that a schema is valid JSON Schema, and that the tool's inputs
#' conform to it, is up to the tool author, as are domain validation, access
#' control, safe side effects and output limits. Structured content is
#' validated against the output schema before it is sent (see [tool()]).
#'
#' @section Values that may be null:
#' `required = FALSE` lets a property be *left out*; `nullable = TRUE` lets
#' it be *present with the value `null`*. A nullable type is advertised as
#' `anyOf` its schema and `{"type":"null"}`, for example
#' `type_number("P-value.", nullable = TRUE)` as
#' `{"anyOf":[{"type":"number"},{"type":"null"}],"description":"P-value."}`,
#' the spelling the Python SDK (pydantic) writes for `Optional` values. (A
#' type array, `{"type":["number","null"]}`, means the same in JSON Schema,
#' but clients that map tool schemas onto a dialect with a single `type`
#' per schema may reject it or drop the constraint.)
#'
#' This matters most for output schemas. By default a missing number in
#' structured content is written the way `jsonlite` writes it, as the string
#' `"NA"` (see [mcplite-results]), which does not match `{"type":"number"}`:
#' the server then answers with a tool error instead of the result (a client
#' that validates results would reject the whole result). To send
#' missing values as `null` instead, set `options(mcplite.json.na = "null")`
#' at the top of the server script and declare the fields that can be
#' missing with `nullable = TRUE`:
#'
#' ```
#' options(mcplite.json.na = "null")
#' output_schema = type_object(
#'   estimate = type_number(),
#'   p_value = type_number("P-value; null when it cannot be computed.", nullable = TRUE)
#' )
#' ```
#'
#' Nullable types can be used anywhere, including in `arguments`, where a
#' JSON `null` reaches the function as `NULL`. The root of an input schema is
#' always an object and never nullable; a nullable root `output_schema` is
#' advertised only to 2026-07-28 clients, since the 2025 revisions require
#' the root type to be exactly `"object"` (see [mcp_server()]).
#'
#' @param description,.description A short description of the value, or
#'   `NULL` for none.
#' @param required,.required `TRUE` if the property must be supplied, `FALSE`
#'   if it may be omitted. Only affects the parent's `required` list.
#' @param nullable,.nullable `TRUE` if the value may also be JSON `null`
#'   (see "Values that may be null"); `FALSE` (the default) if not.
#' @param values A non-empty atomic vector (character, factor, integer, double
#'   or logical) of distinct, non-missing allowed values.
#' @param items The type of the array's elements: another type helper (or an
#'   ellmer type).
#' @param ... Named type helpers, one per property of the object.
#' @param .additional_properties `TRUE` or `FALSE`: may the object carry
#'   properties that are not listed?
#' @param text A complete JSON Schema as a JSON string or as an R list.
#' @param path Path of a UTF-8 file holding a complete JSON Schema as JSON.
#'   Give exactly one of `text` and `path`.
#'
#' @return A lightweight mcplite type object (class `"mcplite_type"`), to be
#'   used in `arguments`, `items`, `type_object()` or `output_schema`.
#'
#' @seealso [tool()]
#' @examples
#' type_string("A label.")
#'
#' type_enum(c("low", "high"), description = "Priority.")
#'
#' type_array(type_integer(), description = "Integer values.")
#'
#' # A number that may be null, e.g. a statistic that cannot always be computed.
#' type_number("P-value.", nullable = TRUE)
#'
#' type_object(
#'   .description = "A labeled score.",
#'   label = type_string(),
#'   score = type_number(required = FALSE)
#' )
#'
#' type_from_schema(list(
#'   type = "string",
#'   minLength = 1
#' ))
#'
#' type_from_schema('{"type": "object", "properties": {"q": {"type": "string"}}}')
#' @name tool-types
NULL

new_type <- function(kind, fields) {
  structure(fields, class = c(paste0("mcplite_type_", kind), "mcplite_type"))
}

scalar_type <- function(kind, description, required, nullable) {
  check_string(description, allow_null = TRUE)
  check_bool(required)
  check_bool(nullable)
  new_type(kind, list(kind = kind, description = description, required = required,
                      nullable = nullable))
}

#' @rdname tool-types
#' @export
type_boolean <- function(description = NULL, required = TRUE, nullable = FALSE) {
  scalar_type("boolean", description, required, nullable)
}

#' @rdname tool-types
#' @export
type_integer <- function(description = NULL, required = TRUE, nullable = FALSE) {
  scalar_type("integer", description, required, nullable)
}

#' @rdname tool-types
#' @export
type_number <- function(description = NULL, required = TRUE, nullable = FALSE) {
  scalar_type("number", description, required, nullable)
}

#' @rdname tool-types
#' @export
type_string <- function(description = NULL, required = TRUE, nullable = FALSE) {
  scalar_type("string", description, required, nullable)
}

#' @rdname tool-types
#' @export
type_enum <- function(values, description = NULL, required = TRUE, nullable = FALSE) {
  check_required(values, "a non-empty atomic vector of allowed values.")
  enum <- check_enum_values(values)
  check_string(description, allow_null = TRUE)
  check_bool(required)
  check_bool(nullable)
  new_type("enum", list(
    kind = "enum", values = enum$values, value_type = enum$type,
    description = description, required = required, nullable = nullable
  ))
}

# Returns list(values = unnamed atomic vector, type = JSON type name).
check_enum_values <- function(values, arg = "values") {
  if (is.factor(values)) {
    values <- as.character(values)
  }
  ok_type <- is.atomic(values) && !is.object(values) &&
    typeof(values) %in% c("character", "integer", "double", "logical")
  if (!ok_type) {
    abort_arg(
      "`", arg, "` must be a character, factor, integer, double or logical vector, not ",
      describe(values), "."
    )
  }
  if (length(values) == 0L) {
    abort_arg("`", arg, "` must contain at least one value.")
  }
  if (anyNA(values)) {
    abort_arg("`", arg, "` must not contain missing values (NA or NaN).")
  }
  if (is.double(values) && !all(is.finite(values))) {
    abort_arg("`", arg, "` must contain finite numbers only.")
  }
  if (anyDuplicated(values)) {
    abort_arg("`", arg, "` must not contain duplicates; `", format(values[anyDuplicated(values)]),
              "` appears more than once.")
  }
  type <- switch(typeof(values),
    character = "string", integer = "integer", double = "number", logical = "boolean"
  )
  list(values = unname(values), type = type)
}

#' @rdname tool-types
#' @export
type_array <- function(items, description = NULL, required = TRUE, nullable = FALSE) {
  check_required(items, "a type helper describing the array's elements.")
  if (!is_type(items)) {
    abort_arg("`items` must be a type helper such as type_string() or an ellmer type, not ",
              describe(items), ".")
  }
  check_string(description, allow_null = TRUE)
  check_bool(required)
  check_bool(nullable)
  # Computing the schema now surfaces problems with ellmer items eagerly.
  type_schema(items, "items")
  new_type("array", list(kind = "array", items = items, description = description,
                         required = required, nullable = nullable))
}

#' @rdname tool-types
#' @export
type_object <- function(.description = NULL, ..., .required = TRUE,
                        .additional_properties = FALSE, .nullable = FALSE) {
  check_string(.description, allow_null = TRUE)
  properties <- list(...)
  check_properties(properties, "...")
  check_bool(.required)
  check_bool(.additional_properties)
  check_bool(.nullable)
  x <- new_type("object", list(
    kind = "object", properties = properties, description = .description,
    required = .required, additional_properties = .additional_properties,
    nullable = .nullable
  ))
  type_schema(x, "...")
  x
}

# `properties` is a list of types, empty or uniquely and non-emptily named.
check_properties <- function(properties, arg) {
  if (length(properties) == 0L) {
    return(invisible(properties))
  }
  nms <- names(properties)
  if (is.null(nms) || anyNA(nms) || !all(nzchar(nms))) {
    abort_arg("Every element of `", arg, "` must be named (the property name).")
  }
  if (anyDuplicated(nms)) {
    abort_arg("The names in `", arg, "` must be unique; `", nms[anyDuplicated(nms)],
              "` is used more than once.")
  }
  for (nm in nms) {
    el <- properties[[nm]]
    if (!is_type(el)) {
      abort_arg("Every element of `", arg, "` must be a type helper such as type_string() ",
                "or an ellmer type; `", arg, "$", nm, "` is ", describe(el), ".")
    }
  }
  invisible(properties)
}

#' @rdname tool-types
#' @export
type_from_schema <- function(text = NULL, path = NULL) {
  if (is.null(text) == is.null(path)) {
    abort_arg("Supply exactly one of `text` and `path`.")
  }
  # JSON text is read as the server reads it, with a UTF-8 character type:
  # in the C locale a UTF-8 script's strings would otherwise be mangled.
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  if (!is.null(path)) {
    check_string(path, what = "a single string (a file path)")
    json <- read_schema_file(path)
    schema <- parse_schema_json(json, "path")
    arg <- "path"
  } else if (is_scalar_string(text)) {
    schema <- parse_schema_json(text, "text")
    arg <- "text"
  } else if (is.list(text) && !is.object(text)) {
    schema <- text
    arg <- "text"
  } else {
    abort_arg("`text` must be a JSON string or an unclassed R list, not ", describe(text), ".")
  }
  check_schema_object(schema, arg)
  new_type("from_schema", list(kind = "from_schema", schema = schema, required = TRUE))
}

read_schema_file <- function(path) {
  reason <- NULL
  lines <- withCallingHandlers(
    tryCatch(
      readLines(path, encoding = "UTF-8", warn = FALSE),
      error = function(e) {
        reason <<- paste(c(reason, conditionMessage(e)), collapse = "; ")
        NULL
      }
    ),
    warning = function(w) {
      reason <<- paste(c(reason, conditionMessage(w)), collapse = "; ")
      invokeRestart("muffleWarning")
    }
  )
  if (is.null(lines)) {
    abort_arg("`path` could not be read: ", reason %||% "unknown error", ".")
  }
  if (length(lines) > 0L) {
    lines[1L] <- sub("^\ufeff", "", lines[1L])
  }
  if (!all(validUTF8(lines))) {
    abort_arg("`path` could not be read: the file is not valid UTF-8.")
  }
  paste(lines, collapse = "\n")
}

# Parse JSON text with the RULES J6 rules (json_decode(), the reader of tool
# arguments), the error naming `arg`.
parse_schema_json <- function(json, arg) {
  json <- enc2utf8(json)
  if (!validUTF8(json)) {
    abort_arg("`", arg, "` is not valid UTF-8.")
  }
  tryCatch(
    json_decode(json),
    mcplite_error_json = function(e) {
      abort_arg("`", arg, "` could not be parsed as JSON: ", conditionMessage(e), ".")
    }
  )
}

# A JSON object: a named list (unique, non-empty names) or a named empty list.
is_json_object <- function(x) {
  if (!is.list(x) || is.object(x)) {
    return(FALSE)
  }
  if (length(x) == 0L) {
    return(!is.null(names(x)))
  }
  is_named_list(x, empty_ok = FALSE)
}

# A complete schema: a JSON object, fixed-encodable, with no functions,
# environments or classed lists anywhere inside.
check_schema_object <- function(schema, arg) {
  if (!is_json_object(schema)) {
    abort_arg("`", arg, "` must describe a JSON object (a named list, or {}), not ",
              describe_json_shape(schema), ".")
  }
  # The quick walk builds no path strings; the path is looked for only when
  # something is wrong (tool() and type_from_schema() both run this check).
  bad <- if (!all_plain_json(schema)) find_unencodable(schema)
  if (!is.null(bad)) {
    abort_arg("`", arg, "` must contain only plain JSON values; ", bad, ".")
  }
  tryCatch(
    fixed_json(schema),
    error = function(e) {
      abort_arg("`", arg, "` cannot be encoded as JSON: ", conditionMessage(e))
    }
  )
  invisible(schema)
}

describe_json_shape <- function(x) {
  if (is.list(x) && !is.object(x)) {
    if (length(x) == 0L) {
      return("an unnamed empty list (a JSON array)")
    }
    if (is.null(names(x))) {
      return("an unnamed list (a JSON array)")
    }
    return("a list with missing or duplicated names")
  }
  describe(x)
}

# Walk a value; return a description of the first function, environment,
# classed list or other non-data object found, or NULL.
# TRUE when `x` holds nothing find_unencodable() would report.
all_plain_json <- function(x) {
  if (is.list(x)) {
    if (is.object(x)) {
      return(FALSE)
    }
    for (el in x) {
      if (!all_plain_json(el)) {
        return(FALSE)
      }
    }
    return(TRUE)
  }
  !(is.function(x) || is.environment(x) || isS4(x) ||
    typeof(x) %in% c("S4", "object", "externalptr", "symbol", "language",
                     "closure", "builtin", "special", "promise"))
}

find_unencodable <- function(x, path = "") {
  here <- if (nzchar(path)) paste0("`", path, "`") else "the root"
  if (is.function(x)) {
    return(paste0(here, " is a function"))
  }
  if (is.environment(x)) {
    return(paste0(here, " is an environment"))
  }
  if (isS4(x) || typeof(x) %in% c("S4", "object", "externalptr", "symbol", "language",
                                  "closure", "builtin", "special", "promise")) {
    return(paste0(here, " is not a JSON value (", class(x)[1L], ")"))
  }
  if (is.list(x)) {
    if (is.object(x)) {
      return(paste0(here, " is a list of class <", class(x)[1L], ">"))
    }
    nms <- names(x)
    for (i in seq_along(x)) {
      key <- if (!is.null(nms) && !is.na(nms[i]) && nzchar(nms[i])) {
        paste0("$", nms[i])
      } else {
        paste0("[[", i, "]]")
      }
      res <- find_unencodable(x[[i]], paste0(path, key))
      if (!is.null(res)) {
        return(res)
      }
    }
  }
  NULL
}

#' @rdname tool-types
#' @export
type_ignore <- function() {
  new_type("ignore", list(kind = "ignore", required = FALSE))
}

# ---------------------------------------------------------------------------
# Internal interface used by tool(), type_array(), type_object() and
# R/ellmer.R.

is_type <- function(x) {
  inherits(x, "mcplite_type") || inherits(x, "ellmer::Type")
}

is_ignored_type <- function(x) {
  inherits(x, "mcplite_type_ignore") || inherits(x, "ellmer::TypeIgnore")
}

# The JSON Schema of a type as an R list ready for fixed_json(), or NULL for
# an ignored type. `where` names the place of the type in error messages.
# Arrays in schemas (enum, required) are unnamed lists so that they encode as
# JSON arrays at any length.
type_schema <- function(x, where) {
  if (inherits(x, "ellmer::Type")) {
    if (inherits(x, "ellmer::TypeIgnore")) {
      return(NULL)
    }
    if (!exists("ellmer_type_schema", mode = "function")) {
      abort_arg("`", where, "` is an ellmer type, but ellmer types are not supported yet.")
    }
    return(ellmer_type_schema(x, where))
  }
  if (!inherits(x, "mcplite_type") || !is.list(x)) {
    abort_arg("`", where, "` must be a type helper such as type_string() or an ellmer type, not ",
              describe(x), ".")
  }
  kind <- x[["kind"]]
  if (!is_scalar_string(kind) || !inherits(x, paste0("mcplite_type_", kind))) {
    abort_arg("`", where, "` is a damaged mcplite type object; create it with a type_*() helper.")
  }
  # A nullable type also admits JSON null: {"anyOf":[<schema>,{"type":"null"}]}
  # with the description beside the anyOf (RULES R2.3: the anyOf spelling, not a
  # type array, is the portable one).
  nullable <- x[["nullable"]]
  if (!is.null(nullable) && !is_true_false(nullable)) {
    abort_arg("`", where, "$nullable` must be TRUE or FALSE.")
  }
  nullable <- isTRUE(nullable)
  describe_last <- function(schema) {
    if (nullable) {
      schema <- list(anyOf = list(schema, list(type = "null")))
    }
    d <- x[["description"]]
    check_string(d, allow_null = TRUE, arg = paste0(where, "$description"))
    if (!is.null(d)) {
      schema$description <- d
    }
    schema
  }
  switch(kind,
    boolean = ,
    integer = ,
    number = ,
    string = describe_last(list(type = kind)),
    enum = {
      enum <- check_enum_values(x[["values"]], paste0(where, "$values"))
      describe_last(list(type = enum$type, enum = as.list(enum$values)))
    },
    array = {
      items <- type_schema(x[["items"]], paste0(where, "$items"))
      describe_last(if (is.null(items)) list(type = "array") else list(type = "array", items = items))
    },
    object = {
      ap <- x[["additional_properties"]]
      if (!is_true_false(ap)) {
        abort_arg("`", where, "$additional_properties` must be TRUE or FALSE.")
      }
      describe_last(object_schema(x[["properties"]], where, additional_properties = ap))
    },
    from_schema = {
      schema <- x[["schema"]]
      check_schema_object(schema, where)
      schema
    },
    ignore = NULL,
    abort_arg("`", where, "` is a damaged mcplite type object; create it with a type_*() helper.")
  )
}

# Whether a type is listed in its parent's `required` array.
type_required <- function(x) {
  if (inherits(x, "ellmer::Type")) {
    if (inherits(x, "ellmer::TypeIgnore")) {
      return(FALSE)
    }
    if (!exists("ellmer_type_required", mode = "function")) {
      abort("ellmer types are not supported yet.")
    }
    return(isTRUE(ellmer_type_required(x)))
  }
  if (inherits(x, "mcplite_type_from_schema")) {
    return(TRUE)
  }
  isTRUE(x[["required"]])
}

# {"type":"object","properties":{...},"required":[...],"additionalProperties":ap}
# with `required` omitted when empty. `where` is used for property errors.
object_schema <- function(properties, where, additional_properties = FALSE,
                          prop_where = function(nm) paste0(where, "$", nm)) {
  props <- structure(list(), names = character())
  required <- character()
  for (nm in names(properties)) {
    el <- properties[[nm]]
    s <- type_schema(el, prop_where(nm))
    if (is.null(s)) {
      next
    }
    props[[nm]] <- s
    if (type_required(el)) {
      required <- c(required, nm)
    }
  }
  schema <- list(type = "object", properties = props)
  if (length(required) > 0L) {
    schema$required <- as.list(required)
  }
  schema$additionalProperties <- additional_properties
  schema
}

#' @export
print.mcplite_type <- function(x, ...) {
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  kind <- x[["kind"]]
  label <- if (identical(kind, "from_schema")) "schema" else kind
  cat("<mcplite type: ", label, ">", sep = "")
  if (!identical(kind, "ignore") && !identical(kind, "from_schema")) {
    cat(if (isTRUE(x[["required"]])) " required" else " optional")
    if (isTRUE(x[["nullable"]])) cat(", nullable")
  }
  cat("\n")
  schema <- tryCatch(type_schema(x, "x"), error = function(e) NULL)
  if (!is.null(schema)) {
    cat(fixed_json(schema), "\n", sep = "")
  } else if (identical(kind, "ignore")) {
    cat("(omitted from the schema)\n")
  }
  invisible(x)
}
