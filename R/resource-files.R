#' Serve the files under a directory as resources
#'
#' @description
#' `resource_files()` makes a [resource()] of each file under `root`, for
#' the `resources` argument of [mcp_server()]: reports, data files, figures
#' and scripts a client lists and attaches to a conversation. Each file is
#' read when `resource_files()` is called; the resources hold what the files
#' held then (call it again, and restart the server, to serve new files).
#'
#' A file's URI is its `file://` URI (`file:///home/me/project/report.md`,
#' each path segment percent-encoded), its name its path relative to `root`.
#' Its MIME type comes from its first bytes (images and audio, as
#' [content_image_file()] tells them) or its extension (`.csv`
#' `"text/csv"`, `.md` `"text/markdown"`, `.R` `"text/x-r"`, `.json`,
#' `.html`, `.txt`, ...); a file of another kind is text (`"text/plain"`)
#' when it is UTF-8 without NUL bytes, else binary
#' (`"application/octet-stream"`).
#'
#' @section What is served:
#' Only regular files under `root` are served: a symbolic link is followed
#' only when its target is itself under `root` (a link to `~/.ssh` or
#' `/etc` is left out), hidden files and directories (names starting with
#' `.`, such as `.env`, `.git` or `.Renviron`) are left out unless
#' `hidden = TRUE`, as `ls` leaves them out, and so is a file larger than
#' `max_size`. A message names each link and large file left out, and why. Nothing is read when a client reads a
#' resource: a model that picks a URI only picks among these files.
#'
#' @param root The directory whose files to serve.
#' @param pattern `NULL` for every file, or a regular expression that a
#'   file's path relative to `root` must match (`"\\.(csv|md)$"`).
#' @param recursive `TRUE` (default) to include the files of
#'   subdirectories, `FALSE` for the files directly in `root`.
#' @param hidden `TRUE` to include hidden files and directories, `FALSE`
#'   (default) to leave them out.
#' @param max_size The largest file served, in bytes (default 10 MB).
#' @param quiet `TRUE` to give no message about the files left out.
#' @return A list of resources made by [resource()], named by URI, in the
#'   order of their relative paths.
#' @seealso [resource()], [package_resources()], [mcp_read_resource()].
#' @export
#' @examples
#' root <- tempfile("project-")
#' dir.create(file.path(root, "data"), recursive = TRUE)
#' writeLines("# Findings\nThe effect is small.", file.path(root, "report.md"))
#' write.csv(head(mtcars), file.path(root, "data", "cars.csv"), row.names = FALSE)
#' writeLines("TOKEN=secret", file.path(root, ".env"))
#' files <- resource_files(root)
#' vapply(files, function(r) r$name, "")
#' files[[1]]
#' client <- mcp_connect(tools = mcp_handler(list(), resources = files))
#' cat(mcp_read_resource(client, names(files)[[2]])[[1]]$text)
#' mcp_close(client)
resource_files <- function(root, pattern = NULL, recursive = TRUE, hidden = FALSE, max_size = 10e6,
                           quiet = FALSE) {
  check_required(root, "the path of a directory, such as \"reports\".")
  check_string(root, allow_empty = FALSE, what = "the path of a directory (a single string)")
  if (!dir.exists(root)) {
    abort_arg("`root` must be an existing directory, but ", encodeString(root, quote = "\""), " is not one.")
  }
  check_regex(pattern, "pattern")
  check_bool(recursive)
  check_bool(hidden)
  check_number(max_size, min = 1, what = "a number of bytes, at least 1")
  check_bool(quiet)
  top <- normalizePath(root, winslash = "/", mustWork = TRUE)
  rel <- sort(list.files(top, recursive = recursive, all.files = hidden, no.. = TRUE, include.dirs = FALSE),
              method = "radix")
  if (!hidden) {
    rel <- rel[!grepl("(^|/)\\.", rel)]
  }
  if (!is.null(pattern)) {
    rel <- rel[grepl(pattern, rel, perl = TRUE)]
  }
  left_out <- character()
  out <- list()
  for (r in rel) {
    why <- resource_file_refusal(file.path(top, r), top, max_size)
    if (!is.null(why)) {
      left_out <- c(left_out, paste0(r, " (", why, ")"))
      next
    }
    out[[length(out) + 1L]] <- resource_of_file(file.path(top, r), r)
  }
  if (length(left_out) > 0L && !quiet) {
    message("resource_files() left out ", length(left_out), " file", if (length(left_out) > 1L) "s",
            ": ", paste(utils::head(left_out, 10L), collapse = ", "),
            if (length(left_out) > 10L) paste0(" and ", length(left_out) - 10L, " more"), ".")
  }
  names(out) <- vapply(out, function(x) x$uri, "")
  out
}

# Why the file at `path` is not served (RULES U6.1), or NULL: not a regular
# file, a link whose target is outside `top`, too large, or unreadable.
resource_file_refusal <- function(path, top, max_size) {
  real <- normalizePath(path, winslash = "/", mustWork = FALSE)
  if (!startsWith(real, paste0(sub("/$", "", top), "/"))) {
    return("a link to outside the root")
  }
  info <- file.info(real, extra_cols = FALSE)
  if (is.na(info$isdir) || info$isdir) {
    return("not a regular file")
  }
  if (info$size > max_size) {
    return(paste0(format(info$size, big.mark = ","), " bytes, more than `max_size`"))
  }
  if (file.access(real, 4L) != 0L) {
    return("not readable")
  }
  NULL
}

# The resource of one file: its bytes as text or binary (see resource_files()).
resource_of_file <- function(path, rel) {
  size <- file.size(path)
  bytes <- if (size > 0) readBin(path, "raw", size) else raw()
  sniffed <- sniff_media(bytes)
  by_ext <- text_extensions[file_extension(path)]
  mime <- if (!is.null(sniffed)) sniffed$mime else if (!is.na(by_ext)) unname(by_ext)
  text <- !any(bytes == as.raw(0L)) && validUTF8(rawToChar(bytes))
  if (is.null(mime) && !text) {
    ext <- file_extension(path)
    mime <- unname(c(media_extensions$image, media_extensions$audio)[ext])
    if (length(mime) == 0L || is.na(mime)) mime <- "application/octet-stream"
  }
  content <- if ((is.null(mime) || startsWith(mime, "text/") || mime %in% text_mime_types) && text) {
    rawToChar(bytes)
  } else {
    bytes
  }
  resource(file_uri(path), content, name = rel, mime_type = mime %||% "text/plain")
}

# A file's file:// URI: the absolute path, each segment percent-encoded
# (a Windows drive, "C:", kept as it is).
file_uri <- function(path) {
  segments <- strsplit(sub("^/", "", path), "/", fixed = TRUE)[[1]]
  encoded <- vapply(segments, uri_segment, "", USE.NAMES = FALSE)
  if (grepl("^[A-Za-z]:$", segments[[1]])) encoded[[1]] <- segments[[1]]
  paste0("file:///", paste(encoded, collapse = "/"))
}

text_extensions <- c(
  txt = "text/plain", md = "text/markdown", markdown = "text/markdown", csv = "text/csv",
  tsv = "text/tab-separated-values", json = "application/json", html = "text/html", htm = "text/html",
  xml = "application/xml", yaml = "application/yaml", yml = "application/yaml", r = "text/x-r",
  rmd = "text/markdown", qmd = "text/markdown", rd = "text/x-r-doc", tex = "text/x-tex",
  css = "text/css", js = "text/javascript", py = "text/x-python", sql = "application/sql",
  log = "text/plain", svg = "image/svg+xml"
)
text_mime_types <- c("application/json", "application/xml", "application/yaml", "application/sql",
                     "image/svg+xml")
