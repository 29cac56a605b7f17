# Content-block constructors (RULES R3). A block is a list of class
# c("mcplite_content_<type>", "mcplite_content") with fields `type`, the
# type's fields (NULL when unset), `annotations` and `meta`. The R side uses
# snake_case; the bridge writes the camelCase wire names.

#' Build MCP content blocks
#'
#' @description
#' These constructors make the content blocks that [tool_result()] accepts,
#' and nothing else does:
#'
#' * `content_text()`: plain text.
#' * `content_image()` and `content_audio()`: base64-encoded binary data with
#'   its MIME type.
#' * `content_resource_link()`: a link to a resource identified by a URI.
#' * `content_resource()`: an embedded resource carrying its own text or
#'   base64 `blob`.
#'
#' Arguments use snake_case (`mime_type`, `last_modified`, `meta`); the MCP
#' wire names (`mimeType`, `lastModified`, `_meta`) are produced only when the
#' result is sent.
#'
#' @details
#' The constructors only check and store what they are given. They do not
#' read files, download URLs, guess MIME types, or encode, decode or check
#' base64: `data` and `blob` must already be base64 strings. Getting the data,
#' the MIME type and the URI right, and deciding what may be shared and how
#' large it may be, is up to the tool author. [content_plot()],
#' [content_image_file()] and [content_audio_file()] do the reading and
#' encoding for plots and files and return these same blocks.
#'
#' mcplite serves tools only. A resource link just passes on the URI you
#' supply; mcplite does not make it readable and does not implement
#' `resources/read`. An embedded resource is self-contained.
#'
#' Content `annotations` may contain `audience` (a character vector of
#' `"user"` and/or `"assistant"`), `priority` (a number from 0 to 1) and
#' `last_modified` (a timestamp string, sent as `lastModified`), plus any
#' extension fields, which are sent unchanged. `meta` is a named list of
#' extra metadata sent as `_meta`; `NULL` values in it are sent as JSON
#' `null`.
#'
#' @param text For `content_text()`, the text (a single string; `""` is
#'   allowed). For `content_resource()`, the resource's text, or `NULL` when
#'   `blob` is given.
#' @param data A single string of base64-encoded image or audio data.
#' @param mime_type The MIME type, such as `"image/png"`: a non-empty string
#'   (optional for resource links and resources).
#' @param uri The resource URI: a non-empty string.
#' @param name The resource link's name: a non-empty string.
#' @param title,description Optional strings describing the linked resource.
#' @param size Optional size of the linked resource in bytes: a whole,
#'   non-negative number.
#' @param blob The resource's base64-encoded binary content, or `NULL` when
#'   `text` is given. Exactly one of `text` and `blob` must be supplied.
#' @param annotations A named list of content annotations (see Details).
#' @param meta A named list of block metadata. For `content_resource()` it
#'   belongs to the outer content block.
#'
#' @return A validated content block (class `"mcplite_content"`) for use in
#'   [tool_result()].
#'
#' @seealso [tool_result()]; [content-files] for plots and files.
#' @examples
#' content_text("The answer is 42.")
#'
#' content_text(
#'   "Shown to the user only.",
#'   annotations = list(audience = "user", priority = 0.9)
#' )
#'
#' # A 1x1 transparent PNG, already base64-encoded.
#' png <- paste0(
#'   "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
#' )
#' content_image(png, "image/png")
#'
#' content_resource_link(
#'   "file:///project/report.csv",
#'   name = "report.csv",
#'   mime_type = "text/csv",
#'   size = 2048
#' )
#'
#' content_resource(
#'   "memo://notes/1",
#'   text = "Remember the milk.",
#'   mime_type = "text/plain",
#'   meta = list(source = "notes")
#' )
#' @name content-blocks
NULL

#' @rdname content-blocks
#' @export
content_text <- function(text, annotations = list(), meta = list()) {
  if (missing(text)) text <- NULL
  make_block("text", list(text = text), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_image <- function(data, mime_type, annotations = list(), meta = list()) {
  if (missing(data)) data <- NULL
  if (missing(mime_type)) mime_type <- NULL
  make_block("image", list(data = data, mime_type = mime_type), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_audio <- function(data, mime_type, annotations = list(), meta = list()) {
  if (missing(data)) data <- NULL
  if (missing(mime_type)) mime_type <- NULL
  make_block("audio", list(data = data, mime_type = mime_type), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_resource_link <- function(uri, name, title = NULL, description = NULL,
                                  mime_type = NULL, size = NULL,
                                  annotations = list(), meta = list()) {
  if (missing(uri)) uri <- NULL
  if (missing(name)) name <- NULL
  make_block("resource_link", list(
    uri = uri, name = name, title = title, description = description,
    mime_type = mime_type, size = size
  ), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_resource <- function(uri, text = NULL, blob = NULL, mime_type = NULL,
                             annotations = list(), meta = list()) {
  if (missing(uri)) uri <- NULL
  make_block("resource", list(uri = uri, text = text, blob = blob, mime_type = mime_type),
             annotations, meta)
}

# The fields of each block type, in stored order.
content_fields <- list(
  text = "text",
  image = c("data", "mime_type"),
  audio = c("data", "mime_type"),
  resource_link = c("uri", "name", "title", "description", "mime_type", "size"),
  resource = c("uri", "text", "blob", "mime_type")
)

# Check the fields (R3.2, in order), annotations (R3.3) and meta (R3.4), and
# build the block.
make_block <- function(type, fields, annotations, meta) {
  check_content_fields(type, fields)
  annotations <- check_content_annotations(annotations)
  meta <- check_meta(meta)
  structure(
    c(list(type = type), fields, list(annotations = annotations, meta = meta)),
    class = c(paste0("mcplite_content_", type), "mcplite_content")
  )
}

# A field of a block (RULES R3.2): a string without a class, "" allowed unless
# `nonempty`.
check_string_field <- function(x, arg, nonempty = FALSE, null_ok = FALSE, call = caller_env()) {
  check_string(x, allow_null = null_ok, allow_empty = !nonempty, allow_class = FALSE,
               what = if (nonempty) "a non-empty string", arg = arg, call = call)
}

check_content_fields <- function(type, f) {
  switch(type,
    text = check_string_field(f$text, "text"),
    image = ,
    audio = {
      check_string_field(f$data, "data")
      check_string_field(f$mime_type, "mime_type", nonempty = TRUE)
    },
    resource_link = {
      check_string_field(f$uri, "uri", nonempty = TRUE)
      check_string_field(f$name, "name", nonempty = TRUE)
      check_string_field(f$title, "title", null_ok = TRUE)
      check_string_field(f$description, "description", null_ok = TRUE)
      check_string_field(f$mime_type, "mime_type", nonempty = TRUE, null_ok = TRUE)
      check_number_whole(f$size, min = 0, allow_null = TRUE, what = "a whole, non-negative, finite number of bytes",
                         arg = "size")
    },
    resource = {
      check_string_field(f$uri, "uri", nonempty = TRUE)
      check_string_field(f$mime_type, "mime_type", nonempty = TRUE, null_ok = TRUE)
      if (is.null(f$text) == is.null(f$blob)) {
        abort_arg("Supply exactly one of `text` and `blob` for an embedded resource.")
      }
      if (!is.null(f$text)) {
        check_string_field(f$text, "text")
      } else {
        check_string_field(f$blob, "blob")
      }
    },
    abort("Unknown content block type \"", type, "\".")
  )
  invisible(f)
}

# R3.3: returns the annotations with `audience` stored as I(<character>).
check_content_annotations <- function(annotations, arg = "annotations") {
  if (!is_named_list(annotations)) {
    abort_arg("`", arg, "` must be a named list with unique, non-empty names, not ",
              describe_json_shape(annotations), ".")
  }
  if (length(annotations) == 0L) {
    return(list())
  }
  keys <- names(annotations)
  if ("lastModified" %in% keys) {
    abort_arg("`", arg, "$lastModified` uses the wire spelling; write `last_modified` instead.")
  }
  for (key in keys) {
    v <- annotations[[key]]
    field <- paste0("`", arg, "$", key, "`")
    if (key == "audience") {
      vals <- if (inherits(v, "AsIs") && identical(class(v), "AsIs")) unclass(v) else v
      ok <- is.character(vals) && !is.object(vals) && length(vals) >= 1L && !anyNA(vals) &&
        all(vals %in% c("user", "assistant"))
      if (!ok) {
        abort_arg(field, " must be a non-empty character vector of \"user\" and/or \"assistant\", not ",
                  describe(v), ".")
      }
      annotations[["audience"]] <- I(unname(as.character(vals)))
    } else if (key == "priority") {
      ok <- is.numeric(v) && !is.object(v) && length(v) == 1L && !is.na(v) && is.finite(v) &&
        v >= 0 && v <= 1
      if (!ok) {
        abort_arg(field, " must be a finite number between 0 and 1, not ", describe(v), ".")
      }
    } else if (key == "last_modified") {
      if (!is_scalar_string(v) || is.object(v)) {
        abort_arg(field, " must be a single string (an ISO 8601 timestamp), not ", describe(v), ".")
      }
    } else {
      value_json(v, field, arg)
    }
  }
  annotations
}

# R3.4: a named list (empty allowed) whose values are fixed-encodable; NULL
# values are allowed.
check_meta <- function(meta, arg = "meta") {
  if (!is_named_list(meta)) {
    abort_arg("`", arg, "` must be a named list with unique, non-empty names, not ",
              describe_json_shape(meta), ".")
  }
  if (length(meta) == 0L) {
    return(list())
  }
  for (key in names(meta)) {
    value_json(meta[[key]], paste0("`", arg, "$", key, "`"), arg)
  }
  meta
}

# Re-validate a block against R3 (used by tool_result() and
# normalize_result()). Returns the rebuilt block.
validate_block <- function(b) {
  if (!inherits(b, "mcplite_content") || !is.list(b) || typeof(b) != "list") {
    abort_arg("it is ", describe(b), ", not a block made by a content_*() constructor")
  }
  type <- b[["type"]]
  if (!is_scalar_string(type) || is.null(content_fields[[type]])) {
    abort_arg("its `type` is not one of ", paste0("\"", names(content_fields), "\"", collapse = ", "))
  }
  expected_class <- c(paste0("mcplite_content_", type), "mcplite_content")
  if (!identical(class(b), expected_class)) {
    abort_arg("its class does not match its type \"", type, "\"")
  }
  fields <- content_fields[[type]]
  if (!identical(names(b), c("type", fields, "annotations", "meta"))) {
    abort_arg("a \"", type, "\" block must have exactly the fields ",
              paste0("`", c("type", fields, "annotations", "meta"), "`", collapse = ", "))
  }
  make_block(type, unclass(b)[fields], b[["annotations"]], b[["meta"]])
}

# Lines describing a block, for print methods.
format_block <- function(x, indent = "") {
  type <- x[["type"]]
  field <- function(nm) x[[nm]]
  shorten <- function(s, n = 200L) {
    if (nchar(s, type = "chars") > n) paste0(substr(s, 1L, n), "...") else s
  }
  head <- switch(type,
    text = "text",
    image = ,
    audio = paste0(type, " (", field("mime_type"), ", ",
                   nchar(field("data"), type = "chars"), " base64 characters)"),
    resource_link = paste0("resource link ", field("uri")),
    resource = paste0("embedded resource ", field("uri")),
    paste0(type)
  )
  lines <- head
  if (identical(type, "text")) {
    lines <- c(lines, paste0("  ", strsplit(shorten(field("text")), "\n", fixed = TRUE)[[1]]))
    if (!nzchar(field("text"))) lines <- c(lines, "  (empty)")
  }
  if (identical(type, "resource_link")) {
    for (nm in c("name", "title", "description", "mime_type", "size")) {
      v <- field(nm)
      if (!is.null(v)) lines <- c(lines, paste0("  ", nm, ": ", format(v, scientific = FALSE)))
    }
  }
  if (identical(type, "resource")) {
    if (!is.null(field("mime_type"))) lines <- c(lines, paste0("  mime_type: ", field("mime_type")))
    if (!is.null(field("text"))) {
      lines <- c(lines, "  text:", paste0("    ", strsplit(shorten(field("text")), "\n", fixed = TRUE)[[1]]))
    } else {
      lines <- c(lines, paste0("  blob: ", nchar(field("blob"), type = "chars"), " base64 characters"))
    }
  }
  members <- function(label, l) {
    if (length(l) == 0L) return(character())
    vals <- vapply(seq_along(l), function(i) {
      v <- l[[i]]
      if (is.null(v)) "null" else tryCatch(fixed_json(v), error = function(e) "<unencodable>")
    }, character(1))
    paste0("  ", label, ": ", paste0(names(l), " = ", vals, collapse = ", "))
  }
  lines <- c(lines, members("annotations", x[["annotations"]]), members("meta", x[["meta"]]))
  paste0(indent, lines)
}

#' @export
print.mcplite_content <- function(x, ...) {
  lines <- tryCatch(format_block(x), error = function(e) paste0("(invalid block: ", conditionMessage(e), ")"))
  cat("<mcplite content: ", lines[1L], ">\n", sep = "")
  if (length(lines) > 1L) cat(paste0(lines[-1L], "\n"), sep = "")
  invisible(x)
}
