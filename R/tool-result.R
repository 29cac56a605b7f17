# tool_result() (RULES R4) and the internal normalize_result() the bridge
# calls on results returned by tools (R4.4, E9).

#' Return a protocol-native MCP tool result
#'
#' @description
#' A tool normally returns an ordinary R value, which mcplite sends as one
#' text block. Returning `tool_result()` instead lets the tool choose its
#' content blocks, add structured content, mark the result as an error, or
#' attach result metadata. It is the only way to do so: bare lists, JSON
#' strings and `jsonlite` `json` objects are always treated as ordinary
#' values.
#'
#' @section Content and fallback:
#' `content` holds blocks made by the `content_*()` constructors (see
#' [content_text()]). If you give `structured_content` but no `content`,
#' `tool_result()` adds exactly one text block containing the structured
#' content as JSON. If you give `content`, it is used exactly as supplied and
#' no text is added, so make it useful on its own: a client on an older
#' protocol version may not receive the structured content at all (see
#' [mcp_server()]).
#'
#' `structured_content` is converted to JSON like [jsonlite::toJSON()] with
#' the payload options described in [mcplite-results], except that an empty
#' `list()` at the top means `{}`. Strings that look like JSON, and `json`
#' objects, stay strings. When the tool has an `output_schema`, the
#' structured content is validated against it before the result is sent (a
#' mismatch becomes a tool error that says what to fix; see [tool()]). The
#' fallback text is produced when
#' `tool_result()` runs, with the options in force at that moment.
#'
#' @section Numbers, missing values and matrices:
#' `structured_content` is written with `jsonlite`'s defaults unless you
#' change the payload options, and three of those defaults lose information
#' that statistical output needs. Check them before returning model fits,
#' tests or summaries:
#'
#' * **Numbers keep 4 decimal places**, not 4 significant digits, so small
#'   values are rounded away: a p-value of `1.08e-05` is sent as `0`, a
#'   standard error of `0.00903` as `0.009`, and
#'   `c(1.08e-05, 9.9e-06, 5.1e-05, 3.1e-11)` becomes
#'   `[0,9.9e-06,0.0001,3.1e-11]` (values below `1e-05` are written in
#'   scientific notation instead, so the rounding is not even monotonic).
#'   For statistical output set `options(mcplite.json.digits = I(6))` (six
#'   significant digits) or `options(mcplite.json.digits = NA)` (15
#'   significant digits) at the top of the server script.
#' * **Missing values in numbers are strings.** `NA_real_`, `NaN` and `Inf`
#'   are sent as `"NA"`, `"NaN"` and `"Inf"`, which do not match a
#'   `type_number()` field of the output schema: the result is not sent and
#'   the client gets a tool error instead. Set
#'   `options(mcplite.json.na = "null")` and declare such fields with
#'   `type_number(nullable = TRUE)` (see [tool-types]).
#' * **Matrices lose their row and column names**: `cor()` output becomes
#'   nested arrays of numbers. Convert named matrices with
#'   [matrix_to_list()], or return a data frame.
#'
#' @section Tool errors:
#' With `is_error = TRUE` the result is still a normal MCP tool result, but
#' flagged as a tool-level error (`isError: true`), so the model can read the
#' content and react to it.
#'
#' @param content A content block or a list of them, made with
#'   [content_text()], [content_image()], [content_audio()],
#'   [content_resource_link()] or [content_resource()]. Must not be empty.
#' @param structured_content `NULL` (none), or any R value that can be
#'   converted to JSON; normally a named list matching the tool's
#'   `output_schema`.
#' @param is_error `TRUE` or `FALSE`: is this a tool-level error?
#' @param meta A named list of result metadata, sent as `_meta`.
#'
#' @return A tool result (class `"mcplite_tool_result"`) to return from a
#'   tool function. It is a list with elements `content`,
#'   `structured_content`, `is_error` and `meta`.
#'
#' @seealso [mcplite-results], [content_text()], [content_image()],
#'   [content_audio()], [content_resource_link()], [content_resource()];
#'   [content_plot()] and [content_image_file()] to return plots and images,
#'   [matrix_to_list()] for named matrices.
#' @examples
#' tool_result(content_text("Done."))
#'
#' tool_result(
#'   content = list(
#'     content_text("Generated the plot."),
#'     content_image("base64-data", "image/png")
#'   )
#' )
#'
#' # The text fallback is generated from the structured content.
#' res <- tool_result(structured_content = list(ok = TRUE, count = 2L))
#' res$content[[1]]$text
#'
#' tool_result(content_text("The file does not exist."), is_error = TRUE)
#'
#' # Small numbers: the default 4 decimal places, then 6 significant digits.
#' p_values <- c(1.08e-05, 9.9e-06, 5.1e-05, 3.1e-11)
#' tool_result(structured_content = list(p = p_values))$content[[1]]$text
#' local({
#'   old <- options(mcplite.json.digits = I(6))
#'   on.exit(options(old))
#'   tool_result(structured_content = list(p = p_values))$content[[1]]$text
#' })
#' @export
tool_result <- function(content = list(), structured_content = NULL,
                        is_error = FALSE, meta = list()) {
  content_supplied <- !missing(content)
  check_payload_options()
  fallback <- NULL
  if (!is.null(structured_content)) {
    fallback <- structured_json(structured_content)
  }
  if (!content_supplied) {
    content <- if (is.null(fallback)) list() else list(content_text(fallback))
  } else if (inherits(content, "mcplite_content")) {
    content <- list(content)
  }
  check_bool(is_error)
  content <- check_content_list(content)
  meta <- check_meta(meta, "meta")
  new_tool_result(content, structured_content, is_error, meta)
}

new_tool_result <- function(content, structured_content, is_error, meta) {
  structure(
    list(
      content = content,
      structured_content = structured_content,
      is_error = is_error,
      meta = meta
    ),
    class = "mcplite_tool_result"
  )
}

# J4.2: the root convention. A bare empty list is {}.
structured_root <- function(x) {
  if (is.list(x) && !is.object(x)) {
    if (length(x) == 0L) {
      return(structure(list(), names = character()))
    }
    nms <- names(x)
    if (!is.null(nms) && !is_named_list(x, empty_ok = FALSE)) {
      abort_arg(
        "`structured_content` has names, so every element must have a unique, non-empty name ",
        "(a JSON object); leave all names off for a JSON array."
      )
    }
  }
  x
}

# Payload JSON of the root-normalized structured content (J4.1, J4.4).
structured_json <- function(x) {
  root <- structured_root(x)
  tryCatch(
    payload_json(root),
    error = function(e) {
      abort_arg("`structured_content` cannot be converted to JSON: ", conditionMessage(e))
    }
  )
}

check_content_list <- function(content) {
  hint <- paste0(
    "Create blocks with content_text(), content_image(), content_audio(), ",
    "content_resource_link() or content_resource()."
  )
  if (!is.list(content) || is.object(content)) {
    abort_arg("`content` must be a content block or a list of them, not ", describe(content), ". ", hint)
  }
  if (length(content) == 0L) {
    abort_arg("`content` must contain at least one content block. ", hint)
  }
  content <- unname(content)
  for (i in seq_along(content)) {
    content[[i]] <- tryCatch(
      validate_block(content[[i]]),
      mcplite_error = function(e) {
        abort_arg("Element ", i, " of `content` is not a valid content block: ",
                  sub("\\.?$", ".", conditionMessage(e)), " ", hint)
      }
    )
  }
  content
}

# Called by the bridge with a value returned by a tool that is a tool result,
# an ellmer object, or a list holding ellmer objects. Returns a re-validated
# mcplite_tool_result or raises an mcplite_error (R4.4).
normalize_result <- function(x) {
  if (inherits(x, "mcplite_tool_result")) {
    return(revalidate_tool_result(x))
  }
  if (exists("ellmer_normalize_result", mode = "function")) {
    return(ellmer_normalize_result(x))
  }
  abort("The tool returned ", describe(x), ", which mcplite cannot convert to a tool result.")
}

revalidate_tool_result <- function(x) {
  fields <- c("content", "structured_content", "is_error", "meta")
  if (!is.list(x) || typeof(x) != "list" || !identical(names(x), fields)) {
    abort(
      "The tool returned an invalid tool result: it must have exactly the fields ",
      "`content`, `structured_content`, `is_error` and `meta`. Build it with tool_result()."
    )
  }
  check_payload_options()
  structured <- x[["structured_content"]]
  if (!is.null(structured)) {
    structured_json(structured)
  }
  is_error <- x[["is_error"]]
  if (!is_true_false(is_error)) {
    abort("`is_error` must be TRUE or FALSE, not ", describe(is_error), ".")
  }
  content <- check_content_list(x[["content"]])
  meta <- check_meta(x[["meta"]], "meta")
  new_tool_result(content, structured, is_error, meta)
}

#' @export
print.mcplite_tool_result <- function(x, ...) {
  content <- x[["content"]]
  cat("<mcplite tool result", if (isTRUE(x[["is_error"]])) ": error", ">\n", sep = "")
  n <- length(content)
  cat("content: ", n, " block", if (n != 1L) "s", "\n", sep = "")
  for (i in seq_len(n)) {
    lines <- tryCatch(format_block(content[[i]]),
                      error = function(e) "(invalid block)")
    cat(paste0("  [", i, "] ", lines[1L]), "\n", sep = "")
    if (length(lines) > 1L) cat(paste0("    ", lines[-1L], "\n"), sep = "")
  }
  sc <- x[["structured_content"]]
  if (!is.null(sc)) {
    json <- tryCatch(structured_json(sc), error = function(e) "<cannot be converted to JSON>")
    cat("structured_content: ", json, "\n", sep = "")
  }
  meta <- x[["meta"]]
  if (length(meta) > 0L) {
    vals <- vapply(meta, function(v) {
      if (is.null(v)) "null" else tryCatch(fixed_json(v), error = function(e) "<unencodable>")
    }, character(1))
    cat("meta: ", paste0(names(meta), " = ", vals, collapse = ", "), "\n", sep = "")
  }
  invisible(x)
}
