# tool(): an R function with MCP metadata attached (RULES R1), and the internal
# tool_spec() that the server bridge reads.

#' Define an MCP tool
#'
#' @description
#' `tool()` attaches MCP metadata (a name, a description, argument types,
#' annotations and an optional output schema) to an R function. The result is
#' still the same function: you can call it directly, and you can pass it, on
#' its own or in a list, to [mcp_server()].
#'
#' Everything is checked when `tool()` runs, so a server never fails later
#' when a client lists its tools. Error messages name the tool (by its name
#' and the start of its description), so the failing one is easy to find in
#' a script that defines many.
#'
#' @section Arguments and defaults:
#' Clients send arguments as JSON. They reach `fun` as parsed JSON: objects
#' and arrays become R lists (an array is *not* turned into an atomic vector),
#' strings, numbers and booleans become length-one vectors. A number written
#' without fraction or exponent that fits in R's integer range becomes an
#' integer (`3`, `-0`), any other a double (`3.0`, `1e2`; `Inf` beyond the
#' double range). The schema is
#' only advertised: mcplite does not coerce or check argument values, and it
#' does not supply defaults. An argument declared with `required = FALSE` may
#' be left out by the client, so give it a default in the R function.
#'
#' Arguments are matched to `fun`'s arguments by name, so every argument the
#' schema advertises must be one that `fun` can take: `tool()` fails when
#' `fun` has no argument of that name and no `...`.
#'
#' @section One call at a time:
#' A server runs its tools on R's single main thread, one call at a time, in
#' the order the requests arrive. While a tool runs, other tool calls wait
#' their turn: a tool that takes three seconds delays every call behind it by
#' three seconds. Over stdio, `tools/list` waits too (legacy `ping` and
#' cancellations do not); over HTTP, requests that run no tool are answered
#' at once. When the client gives up on a call (it cancels it, or over HTTP
#' closes the call's connection), mcplite stops the running tool the way
#' Ctrl+C stops R code (`on.exit()` handlers run) and the call gets no
#' result; see "Long-running tools" in [mcp_server()].
#'
#' So keep tools quick. Do expensive set-up once, at the top of the server
#' script; cap the amount of work an argument can ask for (rows, iterations,
#' bootstrap replicates); cache results that are requested again; and split
#' long jobs into several calls the model can make in turn.
#'
#' @section Return values:
#' Whatever `fun` returns is sent back as one text block. A character vector
#' is sent as literal text (lines joined with newlines, never parsed as JSON);
#' other values are converted to JSON. A bare list is an ordinary value, even
#' if it looks like an MCP result. To return images, several blocks,
#' structured content or result metadata, return a [tool_result()]. The exact
#' conversions and the options that tune them are described in
#' [mcplite-results].
#'
#' @section Complete schemas and structured output:
#' Instead of a list of types, `arguments` can be a single
#' [type_from_schema()] object holding the whole input schema. Its root must
#' have `type = "object"` directly; everything else in it (`$schema`, `$defs`,
#' `$ref`, `allOf`, conditionals, ...) is advertised exactly as written.
#'
#' `output_schema` announces the shape of the `structured_content` the tool
#' returns with [tool_result()]. A client whose protocol version cannot carry
#' it simply does not see it; the tool itself stays available (see
#' [mcp_server()]). Before a result is sent, its structured content is
#' validated against the output schema: a result that does not match is not
#' sent, and the client gets a tool error saying where the value differs from
#' the schema and, when the cause is a typical R one (a missing value written
#' as `"NA"`, a length-one vector), how to fix it; the first mismatch of each
#' tool is also noted on stderr. mcplite checks that schemas are JSON objects
#' that can be encoded, not that they are valid JSON Schema (a schema that is
#' not is advertised as given, and its results are not validated), and it
#' does not check inputs against the input schema: that remains the tool
#' author's job, together with domain validation, permissions and safe side
#' effects.
#'
#' @param fun The R function to expose. Primitive functions such as `sum`
#'   cannot carry metadata: wrap them, e.g. `function(x) sum(unlist(x))`.
#' @param description A single string telling the client what the tool does
#'   (may be `""`).
#' @param ... Must be empty. Argument types go in `arguments`.
#' @param arguments Either a named list with one type helper (see [tool-types]) per
#'   argument of `fun`, or a single [type_from_schema()] object giving the
#'   complete input schema. Arguments described with [type_ignore()] are left
#'   out of the schema.
#' @param name The tool name: 1 to 128 ASCII letters, digits, `_`, `.` or `-`.
#'   When `NULL` and `fun` is given as a plain variable name, that name is
#'   used.
#' @param annotations A named list of tool annotations. Use the R spellings
#'   `title`, `read_only_hint`, `destructive_hint`, `idempotent_hint` and
#'   `open_world_hint` (sent as `title`, `readOnlyHint`, `destructiveHint`,
#'   `idempotentHint` and `openWorldHint`); the hints are `TRUE` or `FALSE`.
#'   Other entries are sent unchanged.
#' @param output_schema `NULL`, or a [type_object()] or [type_from_schema()]
#'   describing the structured content the tool returns.
#'
#' @param task Whether the tool runs as a task when the server has tasks
#'   (`mcp_server(tasks = )`, see [task_options()]): `"forbidden"` (the
#'   default: never), `"optional"` (when the client asks, or allows it) or
#'   `"required"` (always; a client that cannot poll is refused). A server
#'   without tasks runs every call as usual.
#' @return `fun` itself, with class `"mcplite_tool"` added and the metadata
#'   attached. It can be called like the original function. Calling `tool()`
#'   on a tool replaces its metadata.
#'
#' @seealso [tool-types], [tool_result()], [mcp_server()], [mcplite-results]
#' @examples
#' add_numbers <- tool(
#'   function(x, y) {
#'     x + y
#'   },
#'   name = "add_numbers",
#'   description = "Add two numbers and return the result.",
#'   arguments = list(
#'     x = type_number("First number."),
#'     y = type_number("Second number.")
#'   )
#' )
#' add_numbers(2, 3)
#'
#' # The name can come from the variable holding the function.
#' greet <- function(who = "world") paste0("Hello, ", who, "!")
#' greet <- tool(
#'   greet,
#'   "Greet someone.",
#'   arguments = list(who = type_string("Who to greet.", required = FALSE)),
#'   annotations = list(title = "Greeter", read_only_hint = TRUE)
#' )
#' greet("R")
#'
#' # Structured output with an output schema.
#' stats_tool <- tool(
#'   function(x) {
#'     x <- unlist(x)
#'     tool_result(structured_content = list(mean = mean(x), n = length(x)))
#'   },
#'   name = "summary_stats",
#'   description = "Mean and count of numbers.",
#'   arguments = list(x = type_array(type_number())),
#'   output_schema = type_object(mean = type_number(), n = type_integer())
#' )
#' stats_tool(list(1, 2, 6))
#' @export
tool <- function(fun, description, ..., arguments = list(), name = NULL,
                 annotations = list(), output_schema = NULL, task = "forbidden") {
  fun_expr <- if (missing(fun)) NULL else substitute(fun)
  no_description <- missing(description)
  # Every error names the tool, so that the failing one is easy to find in a
  # script with many. The description is read only when an error is
  # reported, so the checks keep their documented order (RULES R1.2).
  tryCatch(
    new_tool(fun, fun_expr, description, ..., arguments = arguments, name = name,
             annotations = annotations, output_schema = output_schema, task = task),
    mcplite_error = function(e) {
      desc <- if (no_description) NULL else tryCatch(description, error = function(e) NULL)
      e$message <- paste0("In ", tool_context(fun_expr, desc, name), ": ", conditionMessage(e))
      raise(e)
    }
  )
}

new_tool <- function(fun, fun_expr, description, ..., arguments, name, annotations,
                     output_schema, task = "forbidden") {
  check_required(fun, "the R function to expose as a tool.")
  check_function(fun)
  if (is.primitive(fun)) {
    abort_arg(
      "`fun` is a primitive function, which cannot carry tool metadata. ",
      "Wrap it in a closure, for example `function(x) sum(unlist(x))`."
    )
  }
  check_required(description, "a single string saying what the tool does.")
  check_string(description)
  if (...length() > 0L) {
    abort_arg(
      "`...` must be empty, but ", ...length(), " extra argument",
      if (...length() > 1L) "s were" else " was", " supplied. ",
      "Describe the tool's arguments in `arguments`, ",
      "for example `arguments = list(x = type_number())`."
    )
  }
  if (is.null(name)) {
    if (!is.symbol(fun_expr)) {
      abort_arg(
        "`name` is required when `fun` is not given as a plain variable name ",
        "(for example an anonymous function or `pkg::fun`)."
      )
    }
    name <- as.character(fun_expr)
    if (!is_valid_tool_name(name)) {
      abort_arg(
        "`name` is required: the name taken from `fun` (\"", name, "\") is not a valid ",
        "tool name (1 to 128 ASCII letters, digits, `_`, `.` or `-`)."
      )
    }
  }
  # Schemas are encoded as the server will encode them: with a UTF-8
  # character type (see use_utf8_ctype()), so that non-ASCII text written in
  # a UTF-8 script comes out the same when R starts in the C locale.
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  meta <- tool_metadata(
    name = name, description = description, arguments = arguments,
    annotations = annotations, output_schema = output_schema, fun = fun
  )
  meta$checked <- validation_stamp(meta)
  # RULES V1.2: how it runs as a task (kept beside the stamp: a plain choice).
  meta$task <- check_task_support(task)
  attr(fun, "mcplite") <- meta
  class(fun) <- c("mcplite_tool", setdiff(oldClass(fun), "mcplite_tool"))
  fun
}

# How tool()'s errors name the tool: its name (given or taken from `fun`)
# and the start of its description; failing both, the expression given as
# `fun`.
tool_context <- function(fun_expr, description, name) {
  if (!is_scalar_string(name) && is.symbol(fun_expr)) {
    name <- as.character(fun_expr)
  }
  desc <- NULL
  if (is_scalar_string(description) && nzchar(description)) {
    desc <- encodeString(shorten_text(description, 50L), quote = "\"")
  }
  if (is_scalar_string(name)) {
    label <- paste0("tool ", encodeString(name, quote = "\""))
    return(if (is.null(desc)) label else paste0(label, " (", desc, ")"))
  }
  if (!is.null(desc)) {
    return(paste0("the tool described as ", desc))
  }
  if (is.null(fun_expr)) {
    return("tool()")
  }
  expr <- paste(deparse(fun_expr, width.cutoff = 60L, nlines = 1L), collapse = " ")
  paste0("tool(", shorten_text(expr, 40L), ", ...)")
}

shorten_text <- function(x, n) {
  if (isTRUE(nchar(x, type = "chars", allowNA = TRUE) > n)) {
    paste0(substr(x, 1L, n - 3L), "...")
  } else {
    x
  }
}

is_valid_tool_name <- function(name) {
  is_scalar_string(name) &&
    grepl("^[A-Za-z0-9_.-]{1,128}\\z", name, perl = TRUE, useBytes = TRUE)
}

# RULES R1.4: a scalar string of 1 to 128 ASCII letters, digits, `_`, `.`, `-`.
check_tool_name <- function(name) {
  check_string(name)
  if (!is_valid_tool_name(name)) {
    abort_arg(
      "`name` must be 1 to 128 ASCII letters, digits, `_`, `.` or `-`, not \"",
      name, "\"."
    )
  }
  invisible(name)
}

# Validate (checks 4 to 7 of RULES R1.2, plus the description) and compute
# the schemas. Returns the raw inputs and the computed R lists.
tool_metadata <- function(name, description, arguments, annotations, output_schema,
                          fun = NULL) {
  check_tool_name(name)
  check_string(description)
  input_schema <- arguments_schema(arguments)
  if (is.function(fun)) {
    check_arguments_callable(input_schema, fun)
  }
  annotations_json <- map_annotations(annotations)
  output <- output_schema_list(output_schema)
  list(
    name = name,
    description = description,
    arguments = arguments,
    annotations = annotations,
    output_schema = output_schema,
    input_schema_list = input_schema,
    annotations_json = annotations_json,
    output_schema_list = output
  )
}

# RULES R1.5: the input schema as an R list.
arguments_schema <- function(arguments) {
  if (inherits(arguments, "mcplite_type_from_schema")) {
    schema <- type_schema(arguments, "arguments")
    if (!identical(schema[["type"]], "object")) {
      abort_arg(
        "A complete input schema in `arguments` must have the root member ",
        "`type` equal to \"object\" (a root reached through `$ref`, `allOf` and ",
        "the like does not count)."
      )
    }
    return(schema)
  }
  if (is_type(arguments)) {
    abort_arg(
      "`arguments` must be a named list of type helpers or a single ",
      "type_from_schema() object, not ", type_label(arguments), ". ",
      "Wrap the argument types in `list()`, e.g. `list(x = type_number())`."
    )
  }
  if (!is.list(arguments) || is.object(arguments)) {
    abort_arg("`arguments` must be a named list of type helpers, not ", describe(arguments), ".")
  }
  if (!is_named_list(arguments)) {
    abort_arg(
      "`arguments` must be empty or have unique, non-empty names ",
      "(one per argument of `fun`)."
    )
  }
  for (nm in names(arguments)) {
    el <- arguments[[nm]]
    if (!is_type(el)) {
      abort_arg(
        "Each element of `arguments` must be a type helper such as type_string() ",
        "or an ellmer type; `arguments$", nm, "` is ", describe(el), "."
      )
    }
  }
  object_schema(arguments, "arguments", additional_properties = FALSE)
}

# Every property the input schema advertises must be an argument `fun` can
# take (a formal of that name, or `...`); otherwise each call that uses it
# would fail with "unused argument".
check_arguments_callable <- function(input_schema, fun) {
  formal_names <- names(formals(fun))
  if ("..." %in% formal_names) {
    return(invisible())
  }
  props <- input_schema[["properties"]]
  declared <- if (is.list(props)) names(props) else NULL
  unknown <- setdiff(declared[!is.na(declared) & nzchar(declared)], formal_names)
  if (length(unknown) == 0L) {
    return(invisible())
  }
  takes <- if (length(formal_names) == 0L) {
    "`fun` takes no arguments"
  } else {
    paste0("`fun` takes ", and_list(paste0("`", formal_names, "`")))
  }
  one <- length(unknown) == 1L
  abort_arg(
    "`arguments` declares ", and_list(paste0("`", unknown, "`")),
    ", which `fun` cannot take: it has no argument ",
    if (one) "of that name" else "of those names",
    " and no `...` (", takes, "). Rename ", if (one) "the argument" else "them",
    ", add ", if (one) "it" else "them", " to the function, or remove ",
    if (one) "it" else "them", " from `arguments`."
  )
}

# "a type_string() helper", "an ellmer <ellmer::TypeBasic> type", ...
type_label <- function(x) {
  if (inherits(x, "ellmer::Type")) {
    return(paste0("an ellmer <", class(x)[1L], "> type"))
  }
  describe(x)
}

annotation_keys <- c(
  title = "title",
  read_only_hint = "readOnlyHint",
  destructive_hint = "destructiveHint",
  idempotent_hint = "idempotentHint",
  open_world_hint = "openWorldHint"
)

# RULES R1.6: a named character vector of fixed-JSON texts with wire keys, in
# the original order (character(0) when empty).
map_annotations <- function(annotations, arg = "annotations") {
  if (!is_named_list(annotations)) {
    abort_arg(
      "`", arg, "` must be a named list with unique, non-empty names, not ",
      describe_json_shape(annotations), "."
    )
  }
  keys <- names(annotations)
  if (length(annotations) == 0L) {
    return(character())
  }
  for (snake in names(annotation_keys)) {
    camel <- annotation_keys[[snake]]
    if (snake != camel && snake %in% keys && camel %in% keys) {
      abort_arg(
        "`", arg, "` must not contain both `", snake, "` and `", camel,
        "`; use only `", snake, "`."
      )
    }
  }
  wire <- keys
  mapped <- keys %in% names(annotation_keys)
  wire[mapped] <- unname(annotation_keys[keys[mapped]])
  hints <- c("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
  out <- character(length(keys))
  for (i in seq_along(keys)) {
    v <- annotations[[i]]
    field <- paste0("`", arg, "$", keys[i], "`")
    if (wire[i] %in% hints && !is_true_false(v)) {
      abort_arg(field, " must be TRUE or FALSE, not ", describe(v), ".")
    }
    if (wire[i] == "title" && (!is_scalar_string(v) || is.object(v))) {
      abort_arg(field, " must be a single string, not ", describe(v), ".")
    }
    out[i] <- value_json(v, field, arg)
  }
  names(out) <- wire
  out
}

# Fixed JSON of one member value (NULL is JSON null inside an object).
value_json <- function(v, field, arg) {
  if (is.null(v)) {
    return("null")
  }
  tryCatch(
    fixed_json(v),
    error = function(e) {
      abort_arg("`", arg, "` must be encodable as JSON, but ", field, " is not: ",
                conditionMessage(e))
    }
  )
}

# RULES R1.7: the output schema as an R list, or NULL.
output_schema_list <- function(output_schema) {
  if (is.null(output_schema)) {
    return(NULL)
  }
  ok <- inherits(output_schema, "mcplite_type_object") ||
    inherits(output_schema, "mcplite_type_from_schema") ||
    inherits(output_schema, "ellmer::TypeObject") ||
    inherits(output_schema, "ellmer::TypeJsonSchema")
  if (!ok) {
    what <- if (is_type(output_schema)) type_label(output_schema) else describe(output_schema)
    abort_arg(
      "`output_schema` must be NULL, a type_object() or a type_from_schema() ",
      "(or an ellmer type_object()/type_from_schema()), not ", what, "."
    )
  }
  schema <- type_schema(output_schema, "output_schema")
  check_schema_object(schema, "output_schema")
  schema
}

# Internal contract for the server bridge (see CONTRACTS.md): validates one
# tool object and returns its listing data as JSON texts plus the function.
tool_spec <- function(x) {
  if (inherits(x, "mcplite_tool") && is.function(x)) {
    meta <- attr(x, "mcplite", exact = TRUE)
    if (!is.list(meta) || is.object(meta)) {
      abort_arg("This mcplite tool has no usable metadata; create it again with tool().")
    }
    m <- validated_metadata(meta)
    if (is.null(m)) {
      restore_locale <- use_utf8_ctype()
      on.exit(restore_locale(), add = TRUE)
      m <- tool_metadata(
        name = meta[["name"]], description = meta[["description"]],
        arguments = meta[["arguments"]], annotations = meta[["annotations"]],
        output_schema = meta[["output_schema"]], fun = x
      )
      m$input_schema_json <- fixed_json(m$input_schema_list)
      if (!is.null(m$output_schema_list)) {
        m$output_schema_json <- fixed_json(m$output_schema_list)
      }
    }
    return(list(
      name = m$name,
      description = m$description,
      input_schema = m$input_schema_json,
      annotations = m$annotations_json,
      output_schema = m$output_schema_json,
      task = meta[["task"]] %||% "forbidden",
      fun = x
    ))
  }
  if (inherits(x, "ellmer::ToolDef") && exists("ellmer_tool_spec", mode = "function")) {
    return(ellmer_tool_spec(x))
  }
  abort_arg(
    "Expected a tool created with tool() (or an ellmer::tool() definition), not ",
    describe(x), "."
  )
}

# RULES R1.8 validates a tool again when a server builds its registry. What
# tool() validated is remembered in a stamp: an environment whose parent is
# this private one (so it cannot be made without `:::`), holding a copy of
# the inputs and results of the validation and their JSON. If the metadata is
# still identical to that copy, validating it again would give the same
# result and the stored one is used; any change (a modified attribute, a
# hand-made object) means a full validation.
stamps <- new.env(parent = emptyenv())

metadata_fields <- c(
  "name", "description", "arguments", "annotations", "output_schema",
  "input_schema_list", "annotations_json", "output_schema_list"
)

validation_stamp <- function(meta) {
  stamp <- new.env(parent = stamps)
  stamp$fields <- meta[metadata_fields]
  stamp$input_schema_json <- fixed_json(meta$input_schema_list)
  stamp$output_schema_json <- if (!is.null(meta$output_schema_list)) fixed_json(meta$output_schema_list)
  stamp
}

# The validated metadata (with its JSON) when `meta` still carries a genuine,
# matching stamp; otherwise NULL.
validated_metadata <- function(meta) {
  stamp <- meta[["checked"]]
  if (!is.environment(stamp) || !identical(parent.env(stamp), stamps)) {
    return(NULL)
  }
  fields <- meta[metadata_fields]
  if (!identical(stamp$fields, fields)) {
    return(NULL)
  }
  c(fields, list(input_schema_json = stamp$input_schema_json, output_schema_json = stamp$output_schema_json))
}

#' @export
print.mcplite_tool <- function(x, ...) {
  # Printed with the character type the server uses, so that the text comes
  # out the same in the C locale as under a UTF-8 one.
  restore_locale <- use_utf8_ctype()
  on.exit(restore_locale(), add = TRUE)
  meta <- attr(x, "mcplite", exact = TRUE)
  spec <- tryCatch(tool_spec(x), error = function(e) e)
  cat("<mcplite tool> ", meta[["name"]] %||% "?", "\n", sep = "")
  if (inherits(spec, "error")) {
    cat("Invalid metadata: ", conditionMessage(spec), "\n", sep = "")
  } else {
    if (nzchar(spec$description)) {
      cat("Description: ", spec$description, "\n", sep = "")
    }
    cat("Input schema: ", spec$input_schema, "\n", sep = "")
    if (length(spec$annotations) > 0L) {
      cat("Annotations: ",
          paste0(names(spec$annotations), " = ", spec$annotations, collapse = ", "),
          "\n", sep = "")
    }
    if (!is.null(spec$output_schema)) {
      cat("Output schema: ", spec$output_schema, "\n", sep = "")
    }
  }
  f <- x
  attr(f, "mcplite") <- NULL
  class(f) <- setdiff(oldClass(f), "mcplite_tool")
  print(f, ...)
  invisible(x)
}
