# ellmer compatibility (RULES section 9).
#
# Entry points used elsewhere: ellmer_tool_spec() (server_spec() and
# tool_spec()), ellmer_type_schema()/ellmer_type_required() (type_schema() and
# type_required() in R/types.R) and ellmer_normalize_result(), to which
# normalize_result() (R/tool-result.R) hands every returned value that is not
# an mcplite tool result.
#
# ellmer and S7 are never loaded. ellmer objects are S7 objects: a ToolDef is
# the wrapped function with attributes, the types and content objects are
# attribute-only objects of type "S4" that cannot be subset. So every field is
# read with attr(x, "<field>", exact = TRUE) and classes are tested with
# inherits(); `@`, `$`, `[[`, str(), deparse() and S7 functions are never used
# on them (RULES E1). An attribute whose value is NULL is simply absent.

ellmer_attr <- function(x, field) attr(x, field, exact = TRUE)

is_ellmer_type <- function(x) inherits(x, "ellmer::Type")

is_ellmer_content <- function(x) inherits(x, "ellmer::Content")

# Class of an ellmer object for messages, e.g. "ellmer::TypeBasic".
ellmer_class <- function(x) class(x)[1L]

# ---------------------------------------------------------------------------
# Types -> JSON Schema (RULES E4)

# The JSON Schema of an ellmer type as an R list ready for fixed_json(), or
# NULL for `TypeIgnore`. Arrays (`enum`, `required`) are unnamed lists and
# empty objects named empty lists, so they keep their JSON shape at any
# length. `where` names the place of the type in error messages.
ellmer_type_schema <- function(x, where) {
  if (!is_ellmer_type(x)) {
    abort_arg("`", where, "` must be an ellmer type, not ", describe(x), ".")
  }
  if (inherits(x, "ellmer::TypeIgnore")) {
    return(NULL)
  }
  if (inherits(x, "ellmer::TypeJsonSchema")) {
    json <- ellmer_attr(x, "json")
    if (!is_named_list(json)) {
      abort_arg(
        "`", where, "` is an ellmer JSON Schema type whose `json` is not a JSON object ",
        "(a named list); it is ", describe(json), "."
      )
    }
    check_fixed_encodable(json, where)
    return(json)
  }
  d <- ellmer_description(x, where)
  if (inherits(x, "ellmer::TypeBasic")) {
    type <- ellmer_attr(x, "type")
    if (!(is_scalar_string(type) && type %in% c("boolean", "integer", "number", "string"))) {
      abort_arg(
        "`", where, "` is an ellmer basic type whose `type` must be \"boolean\", ",
        "\"integer\", \"number\" or \"string\", not ", describe(type), "."
      )
    }
    return(list(type = type, description = d))
  }
  if (inherits(x, "ellmer::TypeEnum")) {
    values <- ellmer_attr(x, "values")
    if (!is.character(values) || is.object(values) || length(values) == 0L || anyNA(values)) {
      abort_arg(
        "`", where, "` is an ellmer enum type whose `values` must be a non-empty ",
        "character vector without NA, not ", describe(values), "."
      )
    }
    return(list(type = "string", description = d, enum = as.list(unname(values))))
  }
  if (inherits(x, "ellmer::TypeArray")) {
    items <- ellmer_attr(x, "items")
    if (!is_ellmer_type(items)) {
      abort_arg(
        "`", where, "` is an ellmer array type whose `items` must be an ellmer type, not ",
        describe(items), "."
      )
    }
    s <- ellmer_type_schema(items, paste0(where, "$items"))
    out <- list(type = "array", description = d)
    if (!is.null(s)) {
      out$items <- s
    }
    return(out)
  }
  if (inherits(x, "ellmer::TypeObject")) {
    props <- ellmer_properties(x, where)
    ap <- ellmer_attr(x, "additional_properties")
    if (!is_true_false(ap)) {
      abort_arg(
        "`", where, "` is an ellmer object type whose `additional_properties` must be ",
        "TRUE or FALSE, not ", describe(ap), "."
      )
    }
    schemas <- structure(list(), names = character())
    required <- list()
    for (nm in names(props)) {
      s <- ellmer_type_schema(props[[nm]], paste0(where, "$", nm))
      if (is.null(s)) {
        next
      }
      schemas[[nm]] <- s
      if (ellmer_type_required(props[[nm]])) {
        required[[length(required) + 1L]] <- nm
      }
    }
    return(list(
      type = "object", description = d, properties = schemas,
      required = required, additionalProperties = ap
    ))
  }
  abort_arg(
    "`", where, "` is an ellmer type of class <", ellmer_class(x), ">, which mcplite ",
    "cannot turn into a JSON Schema; use a basic, enum, array, object, JSON Schema ",
    "or ignore type."
  )
}

# Whether an ellmer type is listed in its parent's `required` array.
ellmer_type_required <- function(x) {
  if (inherits(x, "ellmer::TypeIgnore")) {
    return(FALSE)
  }
  isTRUE(ellmer_attr(x, "required"))
}

# `description` attribute or "" when absent (ellmer writes "" for undescribed
# nodes).
ellmer_description <- function(x, where) {
  d <- ellmer_attr(x, "description")
  if (is.null(d)) {
    return("")
  }
  check_string(d, allow_null = TRUE, arg = paste0(where, "$description"))
  d
}

# The `properties` of an ellmer TypeObject: a (possibly empty) list of types
# with unique, non-empty names.
ellmer_properties <- function(x, where = "arguments") {
  props <- ellmer_attr(x, "properties")
  if (is.null(props)) {
    return(structure(list(), names = character()))
  }
  if (!is.list(props) || is.object(props)) {
    abort_arg(
      "`", where, "` is an ellmer object type whose `properties` must be a list of ",
      "ellmer types, not ", describe(props), "."
    )
  }
  if (length(props) == 0L) {
    return(structure(list(), names = character()))
  }
  if (!is_named_list(props)) {
    abort_arg(
      "`", where, "` is an ellmer object type whose `properties` must have unique, ",
      "non-empty names."
    )
  }
  for (nm in names(props)) {
    if (!is_ellmer_type(props[[nm]])) {
      abort_arg("`", where, "$", nm, "` must be an ellmer type, not ", describe(props[[nm]]), ".")
    }
  }
  props
}

check_fixed_encodable <- function(x, where) {
  tryCatch(
    fixed_json(x),
    error = function(e) {
      abort_arg("`", where, "` cannot be encoded as JSON: ", conditionMessage(e))
    }
  )
}

# ---------------------------------------------------------------------------
# Tool definitions (RULES E2, E3, E5, E6, E8)

# The tool spec of an `ellmer::ToolDef` (layout in CONTRACTS.md). Validation
# errors are `mcplite_error`s naming the field; server_spec() adds the tool's
# position.
ellmer_tool_spec <- function(x) {
  if (!(is.function(x) && inherits(x, "ellmer::ToolDef"))) {
    abort_arg("Expected an `ellmer::tool()` definition (`ellmer::ToolDef`), not ", describe(x), ".")
  }
  name <- ellmer_attr(x, "name")
  check_tool_name(name)
  description <- ellmer_attr(x, "description")
  check_string(description)
  arguments <- ellmer_attr(x, "arguments")
  if (!inherits(arguments, "ellmer::TypeObject")) {
    abort_arg(
      "`arguments` must be an ellmer object type (`ellmer::TypeObject`), not ",
      describe(arguments), "."
    )
  }
  schema <- ellmer_type_schema(arguments, "arguments")
  # RULES E5: at the root only, drop the description and empty members.
  schema[["description"]] <- NULL
  if (length(schema[["properties"]]) == 0L) {
    schema[["properties"]] <- NULL
  }
  if (length(schema[["required"]]) == 0L) {
    schema[["required"]] <- NULL
  }
  annotations <- ellmer_annotations(ellmer_attr(x, "annotations"))
  convert <- isTRUE(ellmer_attr(x, "convert"))
  list(
    name = name,
    description = description,
    input_schema = check_fixed_encodable(schema, "arguments"),
    annotations = annotations,
    output_schema = NULL,
    fun = if (convert) ellmer_converting_fun(x, arguments) else x
  )
}

# RULES E6: ellmer keeps `list()` for "no annotations", otherwise the named
# list from tool_annotations(); mapped exactly like tool(annotations =).
ellmer_annotations <- function(annotations) {
  if (is.null(annotations) || (is.list(annotations) && !is.object(annotations) &&
    length(annotations) == 0L)) {
    return(character())
  }
  map_annotations(annotations, "annotations")
}

# The function the server calls for a `convert = TRUE` tool: converts the
# parsed JSON arguments the way ellmer does, then calls the tool.
ellmer_converting_fun <- function(x, arguments) {
  force(x)
  force(arguments)
  function(...) {
    do.call(x, ellmer_convert_args(list(...), arguments))
  }
}

# RULES E8: arguments (a list as parsed from JSON) -> the list ellmer passes to
# the tool.
ellmer_convert_args <- function(args, arguments) {
  props <- ellmer_properties(arguments)
  supplied <- names(args)
  if (is.null(supplied)) {
    supplied <- rep("", length(args))
  }
  unknown <- unique(supplied[!supplied %in% names(props)])
  if (length(unknown) > 0L) {
    accepted <- if (length(props) == 0L) "none" else paste(names(props), collapse = ", ")
    abort(
      "Unused argument", if (length(unknown) > 1L) "s", ": ",
      paste0("`", unknown, "`", collapse = ", "), ". Accepted arguments: ", accepted, "."
    )
  }
  out <- lapply(names(props), function(nm) {
    value <- if (nm %in% supplied) args[[nm]] else NULL
    ellmer_convert(value, props[[nm]])
  })
  names(out) <- names(props)
  out[!vapply(out, is.null, logical(1))]
}

# Convert one value (NULL when absent) by its ellmer type.
ellmer_convert <- function(x, type) {
  if (is.null(x) && !ellmer_type_required(type)) {
    return(NULL)
  }
  if (inherits(type, "ellmer::TypeArray")) {
    return(ellmer_convert_array(x, ellmer_attr(type, "items")))
  }
  if (inherits(type, "ellmer::TypeObject")) {
    return(ellmer_convert_object(x, type))
  }
  if (inherits(type, "ellmer::TypeBasic")) {
    if (is.null(x)) {
      return(json_na(ellmer_attr(type, "type")))
    }
    if (is_plain_list(x) && length(x) == 1L) {
      return(x[[1L]])
    }
    return(x)
  }
  if (inherits(type, "ellmer::TypeEnum")) {
    if (is.null(x)) {
      return(NA_character_)
    }
    return(as.character(x))
  }
  x
}

is_plain_list <- function(x) is.list(x) && !is.object(x)

# A JSON array (NULL when absent) whose items have the ellmer type `items`.
ellmer_convert_array <- function(x, items) {
  if (is.null(x)) {
    x <- list()
  } else if (!is.list(x)) {
    x <- as.list(x)
  }
  if (inherits(items, "ellmer::TypeBasic")) {
    return(as_atomic(x, ellmer_attr(items, "type"), lenient = TRUE))
  }
  if (inherits(items, "ellmer::TypeEnum")) {
    labels <- vapply(x, function(e) {
      if (is.atomic(e) && length(e) == 1L && !is.na(e)) as.character(e) else NA_character_
    }, character(1), USE.NAMES = FALSE)
    return(factor(labels, levels = unique(ellmer_attr(items, "values"))))
  }
  if (inherits(items, "ellmer::TypeArray")) {
    return(lapply(unname(x), ellmer_convert, type = items))
  }
  if (inherits(items, "ellmer::TypeObject")) {
    if (isTRUE(ellmer_attr(items, "additional_properties"))) {
      return(lapply(unname(x), ellmer_convert, type = items))
    }
    return(ellmer_data_frame(x, items))
  }
  x
}

# An array of objects -> one column per declared property: a tibble when
# tibble is installed, else a base data frame.
ellmer_data_frame <- function(x, items) {
  props <- ellmer_properties(items)
  cols <- lapply(names(props), function(nm) {
    vals <- lapply(x, function(row) {
      if (is_plain_list(row) && nm %in% names(row)) row[[nm]] else NULL
    })
    ellmer_convert_array(vals, props[[nm]])
  })
  names(cols) <- names(props)
  ellmer_frame(cols, length(x), tibble = requireNamespace("tibble", quietly = TRUE))
}

ellmer_frame <- function(cols, n, tibble) {
  if (tibble) {
    tibble::new_tibble(cols, nrow = n)
  } else {
    list2DF(cols, nrow = n)
  }
}

# An object -> named list of its declared properties (converted), plus the
# extra members when additional properties are allowed. A value that is not
# a JSON object is passed on unchanged.
ellmer_convert_object <- function(x, type) {
  if (!is.null(x) && !is_plain_list(x)) {
    return(x)
  }
  props <- ellmer_properties(type)
  present <- names(x)
  out <- lapply(names(props), function(nm) {
    ellmer_convert(if (nm %in% present) x[[nm]] else NULL, props[[nm]])
  })
  names(out) <- names(props)
  if (isTRUE(ellmer_attr(type, "additional_properties")) && length(x) > 0L && !is.null(present)) {
    extra <- x[!present %in% names(props) & nzchar(present)]
    out <- c(out, extra)
  }
  out
}

# ---------------------------------------------------------------------------
# Results (RULES E9)

# An ellmer value returned by a tool -> an `mcplite_tool_result`, or an
# `mcplite_error` whose message becomes the contained tool error.
ellmer_normalize_result <- function(x) {
  if (inherits(x, "ellmer::ContentToolResult")) {
    error <- ellmer_attr(x, "error")
    if (!is.null(error)) {
      abort(ellmer_error_text(error))
    }
    x <- ellmer_attr(x, "value")
    if (inherits(x, "mcplite_tool_result")) {
      return(normalize_result(x))
    }
  }
  if (is_ellmer_content(x)) {
    return(tool_result(content = list(ellmer_content_block(x))))
  }
  if (is_plain_list(x) && length(x) > 0L && any(vapply(x, is_ellmer_content, logical(1)))) {
    blocks <- lapply(seq_along(x), function(i) ellmer_content_block(x[[i]], i))
    return(tool_result(content = blocks))
  }
  if (any(startsWith(class(x), "ellmer::"))) {
    abort(
      "The tool returned an `", ellmer_class(x), "` object, which is not a result ",
      "mcplite can send. Return an ordinary R value, ellmer text or inline image ",
      "content, or `tool_result()`."
    )
  }
  ordinary_result(x)
}

# Text of a ContentToolResult's `error`.
ellmer_error_text <- function(error) {
  if (inherits(error, "condition")) {
    return(conditionMessage(error))
  }
  text <- tryCatch(as.character(error), error = function(e) character())
  if (length(text) == 0L || is.na(text[[1L]])) {
    return("The tool reported an error.")
  }
  text[[1L]]
}

# One supported ellmer content object -> an mcplite content block.
ellmer_content_block <- function(x, i = NULL) {
  where <- if (is.null(i)) "" else paste0(" (element ", i, " of the returned list)")
  if (!is_ellmer_content(x)) {
    abort(
      "The tool returned a list mixing ellmer content with other values: element ", i,
      " is ", describe(x), ". Return only `ellmer::ContentText` and ",
      "`ellmer::ContentImageInline` objects, or build a `tool_result()`."
    )
  }
  convert <- function(expr) {
    tryCatch(expr, mcplite_error = function(e) {
      abort(
        "The tool's `", ellmer_class(x), "`", where, " could not be converted: ",
        conditionMessage(e)
      )
    })
  }
  if (inherits(x, "ellmer::ContentText")) {
    return(convert(content_text(ellmer_attr(x, "text"))))
  }
  if (inherits(x, "ellmer::ContentImageInline")) {
    return(convert(content_image(ellmer_attr(x, "data"), ellmer_attr(x, "type"))))
  }
  abort(
    "The tool returned `", ellmer_class(x), "` content", where, ", which mcplite does not ",
    "convert automatically. Return `tool_result()` with the matching constructor instead: ",
    "`content_text()`, `content_image()`, `content_audio()`, `content_resource_link()` ",
    "or `content_resource()`."
  )
}

# RULES J3 for a value reached through a ContentToolResult: one text block.
ordinary_result <- function(x) {
  text <- if (is.character(x)) {
    s <- enc2utf8(as.vector(x))
    s[is.na(s)] <- "NA"
    paste(s, collapse = "\n")
  } else if (is.null(x)) {
    "{}"
  } else if (is_plain_list(x) && length(x) == 0L && is.null(names(x))) {
    "[]"
  } else {
    tryCatch(
      payload_json(x),
      error = function(e) {
        abort("The tool's return value could not be converted to JSON: ", conditionMessage(e))
      }
    )
  }
  tool_result(content = list(content_text(text)))
}
