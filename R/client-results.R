# What an MCP server answers, in R (RULES K6): a listed tool in R spellings,
# a tool result as an `mcplite_tool_result` of content objects, a tool error
# as a classed condition.

# A listed tool, in R spellings.
tool_definition <- function(t) {
  ann <- t[["annotations"]]
  if (is.list(ann) && length(ann) > 0L) {
    wire <- unname(annotation_keys)
    keys <- names(ann)
    hit <- match(keys, wire)
    keys[!is.na(hit)] <- names(annotation_keys)[hit[!is.na(hit)]]
    names(ann) <- keys
  }
  list(
    name = t[["name"]],
    title = t[["title"]],
    description = t[["description"]],
    input_schema = t[["inputSchema"]],
    output_schema = t[["outputSchema"]],
    annotations = ann,
    meta = t[["_meta"]]
  )
}

# A CallToolResult -> mcplite_tool_result, or a mcplite_error_tool.
call_result <- function(x, tool, value) {
  blocks <- value[["content"]]
  if (!is.list(blocks)) blocks <- list()
  content <- lapply(blocks, block_from_wire)
  is_error <- isTRUE(value[["isError"]])
  meta <- value[["_meta"]]
  if (!is.list(meta) || is.null(names(meta))) meta <- list()
  # RULES K6.1: the server's identity is the connection's (mcp_server_info()),
  # not the result's: a snapshot of a result does not change with the
  # server's version.
  meta[["io.modelcontextprotocol/serverInfo"]] <- NULL
  res <- new_tool_result(content, value[["structuredContent"]], is_error, meta)
  if (is_error) {
    texts <- vapply(content, function(b) if (identical(b$type, "text")) b$text else NA_character_, character(1))
    text <- paste(texts[!is.na(texts)], collapse = "\n")
    # RULES K6.2: the message names the tool and the server; `text` is the
    # tool's own.
    abort(
      "Tool `", tool, "` on MCP server `", x$name, "` reported an error",
      if (nzchar(text)) paste0(": ", text) else ".",
      class = error_class("tool"), fields = list(text = text, result = res, tool = tool, server = x$name)
    )
  }
  res
}

# One wire content block -> a content_*() object. Annotations or metadata
# that fail mcplite's checks are dropped (with a warning); a block of an
# unknown type becomes a text block holding its JSON.
block_from_wire <- function(b) {
  # The common case, a plain text block: what content_text(text) makes.
  if (length(b) == 2L && identical(b[["type"]], "text") && is_scalar_string(b[["text"]])) {
    return(structure(list(type = "text", text = b[["text"]], annotations = list(), meta = list()),
                     class = c("mcplite_content_text", "mcplite_content")))
  }
  build <- function(ann, meta) {
    switch(b[["type"]] %||% "",
      text = content_text(b[["text"]], ann, meta),
      image = content_image(b[["data"]], b[["mimeType"]], ann, meta),
      audio = content_audio(b[["data"]], b[["mimeType"]], ann, meta),
      resource_link = content_resource_link(
        b[["uri"]], b[["name"]], b[["title"]], b[["description"]], b[["mimeType"]],
        b[["size"]], ann, meta
      ),
      resource = {
        r <- b[["resource"]]
        content_resource(r[["uri"]], r[["text"]], r[["blob"]], r[["mimeType"]], ann, meta)
      },
      NULL
    )
  }
  ann <- wire_annotations(b[["annotations"]])
  meta <- b[["_meta"]]
  if (!is.list(meta) || is.null(names(meta))) meta <- list()
  block <- tryCatch(build(ann, meta), mcplite_error = function(e) e)
  if (inherits(block, "mcplite_error") && (length(ann) > 0L || length(meta) > 0L)) {
    first <- conditionMessage(block)
    block <- tryCatch(build(list(), list()), mcplite_error = function(e) e)
    if (!inherits(block, "mcplite_error")) {
      warn("Dropped the annotations and metadata of a content block: ", first, class = "mcplite_warning_client")
    }
  }
  if (is.null(block) || inherits(block, "mcplite_error")) {
    json <- tryCatch(fixed_json(b), error = function(e) "{}")
    warn("Kept a content block mcplite cannot represent as text: ", substr(json, 1L, 200L),
         class = "mcplite_warning_client")
    block <- content_text(json)
  }
  block
}

wire_annotations <- function(a) {
  if (!is.list(a) || length(a) == 0L || is.null(names(a))) {
    return(list())
  }
  if (is.list(a[["audience"]])) {
    a[["audience"]] <- as.character(unlist(a[["audience"]]))
  }
  names(a)[names(a) == "lastModified"] <- "last_modified"
  a
}

# RULES K6.3: mcp_call(simplify = TRUE): rows (an array of objects whose
# members are single values) become a data frame,
# an array of single values of one type a vector, with `null` as NA; named
# lists are simplified member by member. Anything else is left as it is.
simplify_structured <- function(x) {
  if (!is.list(x) || is.object(x)) {
    return(x)
  }
  if (!is.null(names(x))) {
    x[] <- lapply(x, simplify_structured)
    return(x)
  }
  if (length(x) == 0L) {
    return(x)
  }
  scalar <- function(v) is.null(v) || (is.atomic(v) && length(v) == 1L)
  if (all(vapply(x, scalar, logical(1)))) {
    return(simplify_values(x) %||% x)
  }
  is_row <- function(r) {
    is.list(r) && !is.object(r) && !is.null(names(r)) && all(vapply(r, scalar, logical(1)))
  }
  rows <- all(vapply(x, is_row, logical(1)))
  if (rows) {
    # A member a row leaves out is missing there (the encoder leaves out NA
    # members of rows, RULES J3).
    cols <- unique(unlist(lapply(x, names), use.names = FALSE))
    unique_names <- all(vapply(x, function(r) !anyDuplicated(names(r)), logical(1)))
    if (unique_names && length(cols) > 0L && all(nzchar(cols))) {
      columns <- lapply(cols, function(nm) simplify_values(lapply(x, `[[`, nm)))
      if (!any(vapply(columns, is.null, logical(1)))) {
        names(columns) <- cols
        return(as.data.frame(columns, stringsAsFactors = FALSE, optional = TRUE))
      }
    }
  }
  lapply(x, simplify_structured)
}

# A list of single values (or NULLs) of one type -> a vector with NA for
# NULL; NULL when the types differ (integers and doubles make doubles).
simplify_values <- function(values) {
  present <- Filter(Negate(is.null), values)
  if (length(present) == 0L) {
    return(rep(NA, length(values)))
  }
  types <- unique(vapply(present, typeof, ""))
  if (all(types %in% c("integer", "double"))) {
    type <- if ("double" %in% types) "double" else "integer"
  } else if (length(types) == 1L && types %in% c("logical", "character")) {
    type <- types
  } else {
    return(NULL)
  }
  out <- vector(type, length(values))
  is_null <- vapply(values, is.null, logical(1))
  out[is_null] <- NA
  out[!is_null] <- unlist(present, use.names = FALSE)
  out
}
