#' Read a server's resources and prompts
#'
#' Beside tools, an MCP server may offer *resources* (data a client reads by
#' URI: files, tables, documents) and *prompts* (message templates with
#' arguments). These functions list and read them on a connection made by
#' [mcp_connect()], in either protocol era, over stdio, HTTP or in memory; a
#' server made with mcplite offers them with [resource()],
#' [resource_template()] and [prompt_template()].
#'
#' A server that offers none answers the listing with an error of class
#' `mcplite_error_rpc` (code -32601, "Method not found"), and so does a
#' `mcp_read_resource()` of a URI the server does not have (code -32002 or
#' -32602, "Resource not found").
#'
#' @param x A connection made by [mcp_connect()].
#' @param uri The URI of a resource (or one a template of the server matches).
#' @param name The name of a prompt.
#' @param arguments A named list of strings: the prompt's arguments.
#' @param ... Must be empty.
#' @param timeout `NULL` (the connection's) or the seconds to wait for the
#'   answer.
#' @return
#' * `mcp_list_resources()`: a list of resources named by URI, each a list
#'   with `uri`, `name`, and when the server gave them `title`,
#'   `description`, `mime_type` and `size`.
#' * `mcp_list_resource_templates()`: a list of templates named by their
#'   `uri_template`, each with `uri_template`, `name` and the same optional
#'   fields.
#' * `mcp_read_resource()`: a list of contents (usually one), each a list
#'   with `uri`, `mime_type` and either `text` (a string) or `blob` (a raw
#'   vector, decoded from base64).
#' * `mcp_list_prompts()`: a list of prompts named by name, each with `name`,
#'   `description` and `arguments` (a list of `name`, `description`,
#'   `required`).
#' * `mcp_get_prompt()`: a list with `description` and `messages`, each a
#'   list with `role` and `content` (a content block as the server sent it).
#' @seealso [mcp_connect()], [mcp_call()]; RULES K11 in the sources.
#' @export
#' @examples
#' codebook <- resource("docs://codebook", "mpg: miles per gallon", description = "Columns.")
#' review <- prompt_template("review", "Review a model.", "Review {{model}}.",
#'   arguments = list(model = type_string("The model.")))
#' echo <- tool(function(x) x, name = "echo", description = "Echo.",
#'   arguments = list(x = type_string()))
#' client <- mcp_connect(tools = mcp_handler(list(echo), resources = codebook, prompts = review))
#' names(mcp_list_resources(client))
#' mcp_read_resource(client, "docs://codebook")[[1]]$text
#' mcp_get_prompt(client, "review", list(model = "fit"))$messages[[1]]$content$text
#' mcp_close(client)
mcp_list_resources <- function(x, ..., timeout = NULL) {
  listing(x, "resources/list", "resources", "uri", ..., timeout = timeout)
}

#' @rdname mcp_list_resources
#' @export
mcp_list_resource_templates <- function(x, ..., timeout = NULL) {
  listing(x, "resources/templates/list", "resourceTemplates", "uriTemplate", ..., timeout = timeout)
}

#' @rdname mcp_list_resources
#' @export
mcp_read_resource <- function(x, uri, ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  check_string(uri, allow_empty = FALSE)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  res <- request_value(x, client_read_resource(x$ptr, uri, timeout))
  contents <- res$contents
  if (!is.list(contents)) {
    abort("MCP server `", x$name, "` answered resources/read without a `contents` array.",
          class = c("mcplite_error_connection", "mcplite_error_client"), fields = list(server = x$name))
  }
  lapply(contents, function(item) {
    out <- list(uri = item$uri, mime_type = item$mimeType)
    if (!is.null(item$blob)) {
      out$blob <- jsonlite::base64_dec(item$blob)
    } else {
      out$text <- item$text
    }
    out
  })
}

#' @rdname mcp_list_resources
#' @export
mcp_list_prompts <- function(x, ..., timeout = NULL) {
  listing(x, "prompts/list", "prompts", "name", ..., timeout = timeout)
}

#' @rdname mcp_list_resources
#' @export
mcp_get_prompt <- function(x, name, arguments = list(), ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  check_string(name, allow_empty = FALSE)
  if (!is.list(arguments) || (length(arguments) > 0L && !is_named_list(arguments)) ||
      !all(vapply(arguments, is_scalar_string, TRUE))) {
    abort_arg("`arguments` must be a named list of strings, not ", describe(arguments), ".")
  }
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  args_json <- if (length(arguments) > 0L) fixed_json(arguments)
  res <- request_value(x, client_get_prompt(x$ptr, name, args_json, timeout))
  list(description = res$description, messages = res$messages)
}

# The result of a request from its first event `ev` (RULES K12, K13.2): the
# server's questions are answered by the connection's functions (a
# 2026-07-28 server asks with `input_required`, and the request is sent
# again with the answers), its log messages relayed. If an answer fails or
# is interrupted, the request is cancelled on the server.
request_value <- function(x, ev) {
  repeat {
    if (identical(ev$status, "done")) {
      return(ev$value)
    }
    id <- ev$id
    finished <- FALSE
    on.exit(if (!finished) conn_cancel(x, id, "cancelled by the client"))
    if (identical(ev$status, "ask") || identical(ev$status, "input")) {
      ev <- answer_event(x, ev)
    } else {
      if (identical(ev$status, "log")) {
        relay_server_log(x, ev$value)
      }
      ev <- conn_wait(x, id)
    }
    finished <- TRUE
  }
}

# A listing of the server's items (every page), named by `id`, with the
# wire's camelCase member names in R's snake_case.
listing <- function(x, method, key, id, ..., timeout = NULL) {
  check_dots_empty(...)
  check_connection(x)
  timeout <- if (is.null(timeout)) x$timeout else check_seconds(timeout, "timeout")
  items <- client_list(x$ptr, method, key, timeout)
  items <- lapply(items, function(item) {
    names(item) <- gsub("([A-Z])", "_\\L\\1", names(item), perl = TRUE)
    item
  })
  names(items) <- vapply(items, function(i) as.character(i[[gsub("([A-Z])", "_\\L\\1", id, perl = TRUE)]] %||% ""),
                         character(1))
  items
}
