#' Define a resource: data a client can list, read and attach
#'
#' A resource is data an MCP client can offer its user or model as context:
#' a data set, a codebook, a report, a figure. Clients list resources and
#' read them by URI (Claude Code attaches one with `@`). Give resources to
#' [mcp_server()] or [mcp_handler()] with their `resources` argument.
#'
#' `resource()` has one URI. `resource_template()` has a URI template
#' (RFC 6570: `{name}` takes a value without `/`, `{+name}` one that may
#' hold `/`) and answers every URI that matches it; each `{{name}}` in its
#' text is replaced by the value the URI gave (percent escapes decoded).
#' A client can complete a template's variables from the values of a
#' [type_enum()] given in `arguments`.
#'
#' The content is taken when the resource is defined: nothing is read and no
#' R code runs when a client reads it, so a model that picks the URI only
#' ever changes which text it gets (and a template's values only change the
#' text where its placeholders are). Resources stay as given unless the
#' server lets its tools change them (`resource_changes = TRUE`, see
#' [mcp_resource_set()]); clients that subscribed then hear of it.
#'
#' @param uri The resource's URI, with a scheme: `"data://penguins"`,
#'   `"file:///home/me/report.md"`, `"docs://codebook"`.
#' @param uri_template The template's URI template, with at least one
#'   `{name}` or `{+name}` variable: `"data://{name}/summary"`.
#' @param content What the resource holds:
#'   * a single string: text (`mime_type` `"text/plain"` unless given);
#'   * a raw vector: binary data (`"application/octet-stream"`), e.g.
#'     `readBin(path, "raw", file.size(path))`;
#'   * a data frame: CSV text without row names (`"text/csv"`);
#'   * a block made by [content_text()], [content_image()] or
#'     [content_audio()] (or [content_image_file()] and friends): its text,
#'     or its data with its MIME type;
#'   * any other R value: JSON, encoded as tool results are
#'     (`"application/json"`).
#' @param name A short name for the resource (programs use it, clients may
#'   show it). `NULL` takes the last part of the URI.
#' @param description `NULL` or a sentence saying what the resource holds,
#'   for the user and the model.
#' @param mime_type `NULL` (the default for the content, see above) or the
#'   MIME type of the content, such as `"text/markdown"`.
#' @param title `NULL` or a human-readable name for user interfaces.
#' @param arguments `NULL` or a named list of [type_string()] or
#'   [type_enum()] (of strings) values, one per template variable: their
#'   descriptions, and for a `type_enum()` the values a client offers as
#'   the user types (`completion/complete`). They do not restrict the URIs
#'   the template answers.
#' @return An object of class `mcplite_resource` or
#'   `mcplite_resource_template`.
#' @seealso [mcp_server()], the "Write tools" guide (`vignette("write-tools")`);
#'   RULES section 17 in the sources.
#' @export
#' @examples
#' codebook <- resource("docs://penguins/codebook",
#'   "species: penguin species\nbill_length_mm: bill length in millimetres",
#'   description = "What each column of the penguins data means."
#' )
#' sample_rows <- resource("data://mtcars/head", head(mtcars),
#'   description = "The first rows of mtcars, as CSV."
#' )
#' summary_of <- resource_template("data://{name}/columns",
#'   "The columns of {{name}} are described in its help page: ?{{name}}",
#'   name = "columns",
#'   arguments = list(name = type_enum(c("mtcars", "iris"), "A data set."))
#' )
#' codebook
#' summary_of
#' # Served beside tools: mcp_server(tools, resources = list(...)); in process:
#' echo <- tool(function(x) x, name = "echo", description = "Echo.",
#'   arguments = list(x = type_string()))
#' handler <- mcp_handler(list(echo), resources = list(codebook, sample_rows, summary_of))
resource <- function(uri, content, name = NULL, description = NULL, mime_type = NULL, title = NULL) {
  check_uri_text(uri)
  if (!grepl("^[A-Za-z][A-Za-z0-9+.-]*:", uri)) {
    abort_arg("`uri` must start with a scheme such as \"data:\" or \"file:\", not \"", uri, "\".")
  }
  check_required(content, "a string, a raw vector, a data frame, a content block or an R value.")
  body <- resource_body(content, mime_type)
  structure(
    c(list(uri = uri, name = resource_name(name, uri)), resource_labels(description, title), body),
    class = "mcplite_resource"
  )
}

#' @rdname resource
#' @export
resource_template <- function(uri_template, content, name = NULL, description = NULL, mime_type = NULL,
                              title = NULL, arguments = NULL) {
  check_uri_text(uri_template)
  variables <- uri_template_variables(uri_template)
  check_required(content, "a string, a raw vector, a data frame, a content block or an R value.")
  body <- resource_body(content, mime_type)
  args <- prompt_arguments(arguments, what = "template variables")
  unknown <- setdiff(names(args), variables)
  if (length(unknown)) {
    abort_arg("`arguments` names \"", unknown[[1]], "\", which is not a variable of `uri_template` (",
              paste0("\"", variables, "\"", collapse = ", "), ").")
  }
  structure(
    c(list(uri_template = uri_template, name = resource_name(name, uri_template)),
      resource_labels(description, title), body, list(variables = variables, arguments = args)),
    class = "mcplite_resource_template"
  )
}

#' @export
print.mcplite_resource <- function(x, ...) {
  cat("<mcplite_resource> ", x$uri, " (", x$mime_type, ", ", x$size, " bytes)\n", sep = "")
  if (!is.null(x$description)) cat(x$description, "\n", sep = "")
  invisible(x)
}

#' @export
print.mcplite_resource_template <- function(x, ...) {
  cat("<mcplite_resource_template> ", x$uri_template, " (", x$mime_type, ")\n", sep = "")
  cat("Variables: ", paste(x$variables, collapse = ", "), "\n", sep = "")
  if (!is.null(x$description)) cat(x$description, "\n", sep = "")
  invisible(x)
}

# A URI or URI template: a non-empty string without spaces or control
# characters, at most 2048 bytes (longer URIs are never matched, RULES U2.2).
check_uri_text <- function(x, arg = caller_arg(x), call = caller_env()) {
  check_string(x, allow_empty = FALSE, arg = arg, call = call)
  if (grepl("[[:space:][:cntrl:]]", x) || nchar(x, type = "bytes") > 2048L) {
    abort_arg("`", arg, "` must not hold spaces or control characters and must be at most 2048 bytes.",
              call = call)
  }
  invisible(x)
}

# The variables of a URI template, in order (the engine parses it, RULES
# U1.3), or an argument error saying what is wrong with it.
uri_template_variables <- function(x, arg = caller_arg(x), call = caller_env()) {
  tryCatch(engine_uri_template_variables(x), mcplite_error_argument = function(e) {
    abort_arg("`", arg, "` is not a URI template this server can match: ", conditionMessage(e), ".", call = call)
  })
}

# The name of a resource: given, or the last part of its URI.
resource_name <- function(name, uri, call = caller_env()) {
  check_string(name, allow_null = TRUE, allow_empty = FALSE, call = call)
  if (!is.null(name)) {
    return(name)
  }
  last <- sub("^.*[/:]", "", sub("[/]+$", "", uri))
  if (nzchar(last)) last else uri
}

resource_labels <- function(description, title, call = caller_env()) {
  check_string(description, allow_null = TRUE, call = call)
  check_string(title, allow_null = TRUE, call = call)
  list(description = description, title = title)
}

# The content of a resource as the engine holds it (RULES U2.1): `kind`
# ("text" or "blob"), `body` (the text, or base64), `mime_type` and `size`
# (bytes before base64).
resource_body <- function(content, mime_type, call = caller_env()) {
  check_string(mime_type, allow_null = TRUE, call = call)
  if (!is.null(mime_type) && !grepl("^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+( *;.*)?$", mime_type)) {
    abort_arg("`mime_type` must be a MIME type such as \"text/markdown\", not \"", mime_type, "\".", call = call)
  }
  text <- function(x, default) {
    if (is.na(x) || !validUTF8(x)) {
      abort_arg("`content` must be UTF-8 text, not NA or bytes in another encoding.", call = call)
    }
    x <- enc2utf8(x)
    list(kind = "text", body = x, mime_type = mime_type %||% default, size = nchar(x, type = "bytes"))
  }
  blob <- function(bytes, default) {
    list(kind = "blob", body = base64_plain(bytes), mime_type = mime_type %||% default, size = length(bytes))
  }
  if (is_scalar_string(content) || (is.character(content) && length(content) == 1L && is.na(content))) {
    return(text(content, "text/plain"))
  }
  if (is.raw(content)) {
    return(blob(content, "application/octet-stream"))
  }
  if (is.data.frame(content)) {
    con <- textConnection(NULL, "w", local = TRUE)
    utils::write.csv(content, con, row.names = FALSE, fileEncoding = "UTF-8")
    csv <- paste0(paste(textConnectionValue(con), collapse = "\n"), "\n")
    close(con)
    return(text(csv, "text/csv"))
  }
  if (inherits(content, "mcplite_content_text")) {
    return(text(content$text, "text/plain"))
  }
  if (inherits(content, c("mcplite_content_image", "mcplite_content_audio"))) {
    bytes <- jsonlite::base64_dec(content$data)
    return(list(kind = "blob", body = content$data, mime_type = mime_type %||% content$mime_type,
                size = length(bytes)))
  }
  if (inherits(content, "mcplite_content") || is.function(content) || is.environment(content)) {
    abort_arg("`content` must be a string, a raw vector, a data frame, a text, image or audio block, or an ",
              "R value that can be written as JSON, not ", describe(content), ".", call = call)
  }
  json <- tryCatch(payload_json(content), mcplite_error_json = function(e) {
    abort_arg("`content` cannot be written as JSON: ", conditionMessage(e), call = call)
  })
  text(json, "application/json")
}

is_mcplite_resource <- function(x) inherits(x, c("mcplite_resource", "mcplite_resource_template"))

# The resources of mcp_server(resources = ) as the bridge reads them (RULES
# section 17): `resources` and `templates`, each a list of plain lists.
resource_specs <- function(resources, call = caller_env()) {
  if (is.null(resources)) {
    return(NULL)
  }
  if (is_mcplite_resource(resources)) {
    resources <- list(resources)
  }
  if (!is.list(resources) || is.object(resources) || !all(vapply(resources, is_mcplite_resource, TRUE))) {
    abort_arg("`resources` must be a resource made by `resource()` or `resource_template()` or a list of them, ",
              "not ", describe(resources), ".", call = call)
  }
  fixed <- Filter(function(r) inherits(r, "mcplite_resource"), resources)
  templates <- Filter(function(r) inherits(r, "mcplite_resource_template"), resources)
  for (key in list(list(fixed, "uri", "URIs"), list(templates, "uri_template", "URI templates"))) {
    ids <- vapply(key[[1]], function(r) r[[key[[2]]]], "")
    if (anyDuplicated(ids)) {
      abort_arg("`resources` must have unique ", key[[3]], "; repeated: \"", ids[duplicated(ids)][[1]], "\".",
                call = call)
    }
  }
  common <- function(r) {
    list(name = r$name, title = r$title %||% "", description = r$description %||% "",
         mime_type = r$mime_type, kind = r$kind, body = r$body)
  }
  list(
    resources = lapply(fixed, function(r) c(list(uri = r$uri, size = as.double(r$size)), common(r))),
    templates = lapply(templates, function(t) {
      args <- t$arguments
      c(list(uri_template = t$uri_template), common(t), list(
        var_names = t$variables,
        var_descriptions = vapply(t$variables, function(v) args[[v]]$description %||% "", "", USE.NAMES = FALSE),
        var_values = lapply(t$variables, function(v) as.character(args[[v]]$values %||% character()))
      ))
    })
  )
}
