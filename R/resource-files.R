#' Serve the files under a directory as resources
#'
#' @description
#' `resource_files()` makes a [resource()] of each file under `root`, for
#' the `resources` argument of [mcp_server()]: reports, data files, figures
#' and scripts a client lists and attaches to a conversation. Each file is
#' read when `resource_files()` is called; the resources hold what the files
#' held then (call it again, and restart the server, to serve new files).
#'
#' A file's URI is its `file://` URI: the absolute path of `root` (links
#' in it resolved) and the file's path under it, each segment
#' percent-encoded (`file:///home/me/project/report.md`); its name is that
#' path relative to `root`. Its MIME type comes from its extension when that
#' names a text format (`.csv` `"text/csv"`, `.md` `"text/markdown"`, `.R`
#' `"text/x-r"`, `.json`, `.html`, `.txt`, ...) and the file is UTF-8 text;
#' else from its first bytes (images and audio, as [content_image_file()]
#' tells them); else from its extension; else it is `"text/plain"` when it
#' is UTF-8 without NUL bytes and `"application/octet-stream"` otherwise.
#' Text is sent as text, anything else as binary.
#'
#' @section What is served:
#' Only files under `root` are served, read through their real path:
#' a symbolic link to a file is followed only when its target is itself
#' under `root` and not hidden (a link to `~/.ssh/id_rsa`, to `/etc/passwd`
#' or to `.env` is left out), a link to a directory is not entered (so
#' there are no loops and no file is listed twice), hidden files and directories (names starting with `.`, such
#' as `.env`, `.git` or `.Renviron`) are left out without a word unless
#' `hidden = TRUE`, as `ls` leaves them out, and so are a file larger than
#' `max_size`, a file whose name is not UTF-8 and one whose URI would be
#' longer than 2048 bytes. A message names those (the first ten) and why.
#' Nothing is read when a client reads a resource: a model that picks a URI
#' only picks among these files.
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
  found <- list_root_files(top, recursive, hidden)
  rel <- found$rel
  left_out <- found$left_out
  if (!is.null(pattern)) {
    keep <- grepl(pattern, rel, perl = TRUE)
    rel <- rel[keep]
    found$real <- found$real[keep]
  }
  out <- list()
  for (i in seq_along(rel)) {
    why <- resource_file_refusal(rel[[i]], found$real[[i]], top, hidden, max_size)
    if (!is.null(why)) {
      left_out <- c(left_out, paste0(rel[[i]], " (", why, ")"))
      next
    }
    out[[length(out) + 1L]] <- resource_of_file(file.path(top, rel[[i]]), found$real[[i]], rel[[i]])
  }
  if (length(left_out) > 0L && !quiet) {
    message("resource_files() left out ", length(left_out), " file", if (length(left_out) > 1L) "s",
            ": ", paste(utils::head(left_out, 10L), collapse = ", "),
            if (length(left_out) > 10L) paste0(" and ", length(left_out) - 10L, " more"), ".")
  }
  names(out) <- vapply(out, function(x) x$uri, "")
  out
}

# The files under `top` (RULES U6.1): list(rel = paths relative to `top`,
# sorted; real = their real paths; left_out = "<rel>/ (<why>)" for the
# directories not entered). Links to directories are never entered (no
# loop, no tree outside the root walked, no file listed twice); a link to a
# file is listed, and resource_file_refusal() checks where it leads. Hidden
# entries are skipped unless `hidden`.
list_root_files <- function(top, recursive, hidden) {
  rel <- character()
  real <- character()
  left_out <- character()
  queue <- ""
  while (length(queue) > 0L) {
    dir <- queue[[1L]]
    queue <- queue[-1L]
    entries <- sort(list.files(file.path(top, dir), all.files = hidden, no.. = TRUE), method = "radix")
    if (!hidden) entries <- entries[!startsWith(entries, ".")]
    for (e in entries) {
      r <- if (nzchar(dir)) paste(dir, e, sep = "/") else e
      if (!validUTF8(e)) {
        # R cannot make a path of it (file.path() fails) nor a resource's name.
        left_out <- c(left_out, paste0(encodeString(r), " (a name that is not UTF-8)"))
        next
      }
      target <- normalizePath(file.path(top, r), winslash = "/", mustWork = FALSE)
      if (dir.exists(target)) {
        if (!recursive) next
        if (nzchar(Sys.readlink(file.path(top, r)))) {
          left_out <- c(left_out, paste0(r, "/ (a link to a directory)"))
        } else {
          queue <- c(queue, r)
        }
        next
      }
      rel <- c(rel, r)
      real <- c(real, target)
    }
  }
  o <- order(rel, method = "radix")
  list(rel = rel[o], real = real[o], left_out = left_out)
}

under_root <- function(real, top) startsWith(real, paste0(sub("/$", "", top), "/"))

# Why the file `rel` (real path `real`) is not served (RULES U6.1), or NULL:
# its real path is outside `top` or hidden, it is no regular file, too
# large, unreadable, or its name cannot be a resource's.
resource_file_refusal <- function(rel, real, top, hidden, max_size) {
  if (!under_root(real, top)) {
    return("a link to outside the root")
  }
  if (!hidden && grepl("(^|/)\\.", substring(real, nchar(sub("/$", "", top)) + 2L))) {
    return("a link to a hidden file")
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
  if (nchar(file_uri(file.path(top, rel)), type = "bytes") > 2048L) {
    return("a URI longer than 2048 bytes")
  }
  NULL
}

# The resource of one file, read through its real path: text or binary,
# its MIME type from the extension when that names a text type and the
# bytes are text, else from the first bytes (images and audio), else from
# the extension (see resource_files()).
resource_of_file <- function(path, real, rel) {
  size <- file.size(real)
  bytes <- if (size > 0) readBin(real, "raw", size) else raw()
  text <- !any(bytes == as.raw(0L)) && validUTF8(rawToChar(bytes))
  ext <- file_extension(path)
  by_ext <- unname(text_extensions[ext])
  media <- unname(c(media_extensions$image, media_extensions$audio)[ext])
  sniffed <- sniff_media(bytes)
  mime <- if (!is.na(by_ext) && text) {
    by_ext
  } else if (!is.null(sniffed)) {
    sniffed$mime
  } else if (!is.na(by_ext)) {
    by_ext
  } else if (!is.na(media)) {
    media
  } else if (text) {
    "text/plain"
  } else {
    "application/octet-stream"
  }
  as_text <- text && (startsWith(mime, "text/") || mime %in% text_mime_types)
  resource(file_uri(path), if (as_text) rawToChar(bytes) else bytes, name = rel, mime_type = mime)
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
