#' Change the server's resources from a tool
#'
#' A tool can add, replace and remove the resources its server offers (see
#' [resource()]): a tool that appends to a notes file updates `notes://all`,
#' a tool that fits a model publishes `report://latest`. Clients that
#' subscribed to a resource hear that it changed
#' (`notifications/resources/updated`) and read it again; clients that
#' follow the list hear when resources come, go or change what the list says
#' of them (`notifications/resources/list_changed`).
#'
#' `mcp_resource_set()` adds the resource, or replaces the one with the same
#' URI. `mcp_resource_remove()` removes the resource with that URI (nothing
#' happens when there is none). A URI that only a [resource_template()]
#' matches can be set: the resource is read from then on instead of the
#' template's text.
#'
#' The changes of a call take effect together when the tool returns, before
#' the client gets the call's result, so a client that reads the resource
#' after the result sees the new content. A tool that fails with an R error
#' changes nothing. Over HTTP, a legacy session hears of changes on its
#' `GET` stream and a 2026-07-28 client on its `subscriptions/listen`
#' stream; over standard input and output, on the connection.
#'
#' Only the tools of a server that allows it can change its resources:
#' `mcp_server(resources = , resource_changes = TRUE)` (or `mcp_handler()`),
#' with at least one resource. By default resources stay as given, so that a
#' model that calls tools cannot change what other clients read. With worker
#' processes the changes travel with the result and are made by the server;
#' confined workers (`confine = TRUE`) never change resources. Resources live in the server process: behind a load
#' balancer with several replicas, a change made by one replica is not seen
#' by the others (serve changing resources from one replica).
#'
#' @param x A resource made by [resource()].
#' @param uri The URI of the resource to remove.
#' @return `x` or `uri`, invisibly. An error of class `mcplite_error_resources`
#'   when no tool of a server that allows changes is running (called at the
#'   console, or by a server without `resource_changes = TRUE`).
#' @seealso [resource()], [mcp_server()], the "Write tools" guide
#'   (`vignette("write-tools")`); RULES U3 in the sources.
#' @export
#' @examples
#' notes <- character()
#' add_note <- tool(
#'   function(text) {
#'     notes <<- c(notes, text)
#'     mcp_resource_set(resource("notes://all", paste(notes, collapse = "\n"),
#'       description = "Every note so far."))
#'     sprintf("%d notes", length(notes))
#'   },
#'   name = "add_note", description = "Add a note.",
#'   arguments = list(text = type_string("The note."))
#' )
#' handler <- mcp_handler(list(add_note), resources = resource("notes://all", ""),
#'   resource_changes = TRUE)
#' init <- '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",
#'   "capabilities":{},"clientInfo":{"name":"example","version":"1"}}}'
#' invisible(mcp_handle(handler, init))
#' invisible(mcp_handle(handler, paste0('{"jsonrpc":"2.0","id":1,"method":"tools/call",',
#'   '"params":{"name":"add_note","arguments":{"text":"buy milk"}}}')))
#' mcp_handle(handler,
#'   '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"notes://all"}}')
mcp_resource_set <- function(x) {
  if (!inherits(x, "mcplite_resource")) {
    abort_arg("`x` must be a resource made by `resource()`, not ", describe(x), ".")
  }
  if (!resource_change_set(resource_specs(list(x)))) {
    abort_no_resources("mcp_resource_set")
  }
  invisible(x)
}

#' @rdname mcp_resource_set
#' @export
mcp_resource_remove <- function(uri) {
  check_uri_text(uri)
  if (!resource_change_remove(uri)) {
    abort_no_resources("mcp_resource_remove")
  }
  invisible(uri)
}

abort_no_resources <- function(fun, call = parent.frame()) {
  abort(
    "`", fun, "()` changes the resources of a running server: call it from a tool of a server that ",
    "lets its tools change them (`mcp_server(resources = , resource_changes = TRUE)` or `mcp_handler()`, ",
    "with at least one resource).",
    class = "mcplite_error_resources", call = call
  )
}

# `resource_changes` of mcp_server() and mcp_handler(), checked: TRUE when the
# tools may change the resources (RULES U3.2), which needs a server that
# offers resources (U1.1).
resource_changes_option <- function(resource_changes, specs, call = caller_env()) {
  check_bool(resource_changes, call = call)
  resource_changes && length(specs$resources) + length(specs$templates) > 0L
}
