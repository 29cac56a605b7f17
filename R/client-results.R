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
  res <- new_tool_result(content, value[["structuredContent"]], is_error, meta)
  if (is_error) {
    texts <- vapply(content, function(b) if (identical(b$type, "text")) b$text else NA_character_, character(1))
    text <- paste(texts[!is.na(texts)], collapse = "\n")
    abort(
      if (nzchar(text)) text else paste0("Tool `", tool, "` on MCP server `", x$name, "` reported an error."),
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
