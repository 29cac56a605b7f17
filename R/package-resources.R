#' Serve an installed package's help pages and vignettes as resources
#'
#' @description
#' `package_resources()` makes a [resource()] of each help page and each
#' vignette of an installed package, for the `resources` argument of
#' [mcp_server()]. A client lists them and its user attaches one to a
#' conversation (in Claude Code with `@`), so the model reads the page of a
#' function before calling it as a tool made by [package_tools()].
#'
#' * A help page has the URI `r-help://<package>/<topic>`, where `<topic>`
#'   is the page's name (its `\name`, with each character other than a
#'   letter, digit, `-`, `.`, `_` or `~` percent-encoded:
#'   `r-help://base/row%2Bcolnames`), and holds the page as plain text, as
#'   `?topic` prints it (`"text/plain"`). Its name is the page's name and
#'   its title the page's title. A page that documents several functions is
#'   one resource (`?"%in%"` is the page `r-help://base/match`).
#' * A vignette has the URI `r-vignette://<package>/<name>` and holds its
#'   source as installed: R Markdown or Quarto (`"text/markdown"`),
#'   Sweave/LaTeX (`"text/x-tex"`), anything else as `"text/plain"`. A
#'   vignette installed without its source, or whose source is not UTF-8,
#'   is left out.
#'
#' @section What runs, and when:
#' The pages are rendered once, when `package_resources()` is called (by
#' R's own `tools::Rd2txt()`), and cached like [package_tools()]' help
#' pages: later servers read the cache. Code a help page would run when
#' rendered (`\Sexpr[stage=render]`) is never run: it is shown as written.
#' Nothing is read and no R code runs when a client reads a resource (see
#' [resource()]).
#'
#' @param package The name of an installed package, such as `"stats"`.
#' @param help `TRUE` (default) to offer the help pages, `FALSE` not to.
#' @param vignettes `TRUE` (default) to offer the vignettes, `FALSE` not to.
#' @param topics `NULL` (default) for every help page, or a character vector
#'   of topics (function names or other aliases, as `?` takes them): the
#'   pages that document them.
#' @inheritParams package_tools
#' @return A list of resources made by [resource()], named by URI: help
#'   pages in the order of their names, then vignettes.
#' @seealso [package_tools()], [resource()], [mcp_read_resource()] to read
#'   one as a client.
#' @export
#' @examples
#' pages <- package_resources("stats", topics = c("lm", "t.test"), cache = FALSE)
#' names(pages)
#' pages[["r-help://stats/lm"]]
#' # In a server script:
#' # mcp_server(package_tools("stats"), resources = package_resources("stats"))
#' # As a client, in process:
#' client <- mcp_connect(tools = mcp_handler(list(), resources = pages))
#' cat(substr(mcp_read_resource(client, "r-help://stats/t.test")[[1]]$text, 1, 160))
#' mcp_close(client)
package_resources <- function(package, help = TRUE, vignettes = TRUE, topics = NULL, cache = TRUE) {
  check_required(package, "the name of an installed package, e.g. \"stats\".")
  path <- check_installed_package(package)
  check_bool(help)
  check_bool(vignettes)
  check_character(topics, allow_null = TRUE)
  if (!isTRUE(cache) && !isFALSE(cache)) {
    check_string(cache, allow_empty = FALSE, what = "TRUE, FALSE or the path of a directory")
  }
  pages <- if (help) help_page_resources(package, path, topics, cache) else list()
  docs <- if (vignettes) vignette_resources(package, path) else list()
  out <- c(pages, docs)
  names(out) <- vapply(out, function(r) r$uri, "")
  out
}

# The URI path segment of a topic or vignette name: RFC 3986 unreserved
# characters as they are, every other byte percent-encoded.
uri_segment <- function(x) {
  bytes <- charToRaw(enc2utf8(x))
  keep <- bytes %in% charToRaw("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-")
  parts <- sprintf("%%%02X", as.integer(bytes))
  parts[keep] <- vapply(bytes[keep], rawToChar, "")
  paste0(parts, collapse = "")
}

# One resource per help page (RULES U5.1): the text is rendered by
# help_page_texts(), cached per installed package.
help_page_resources <- function(package, path, topics, cache) {
  pages <- help_page_texts(package, path, cache, topics)
  if (!is.null(pages$error)) {
    abort_arg("`package` \"", package, "\" has no help pages to serve: ", pages$error, ".", call = caller_env(2))
  }
  keep <- names(pages$pages)
  if (!is.null(topics)) {
    files <- unname(pages$aliases[topics])
    if (anyNA(files)) {
      abort_arg("`topics` names \"", topics[is.na(files)][[1L]], "\", which no help page of ", package,
                " documents.", call = caller_env(2))
    }
    keep <- intersect(keep, unique(files))
  }
  out <- lapply(pages$pages[keep], function(p) {
    resource(paste0("r-help://", package, "/", uri_segment(p$name)), p$text, name = p$name,
             title = if (nzchar(p$title)) p$title, mime_type = "text/plain",
             description = paste0("The R help page ?", p$name, " of package ", package, "."))
  })
  out[order(vapply(out, function(r) r$name, ""), method = "radix")]
}

# Every help page of the package as text: list(pages = list(<Rd file> =
# list(name, title, text)), aliases = c(alias = <Rd file>), error = NULL or
# why there are none, key). Cached in memory and on disk as package_docs() is.
help_page_texts <- function(package, path, cache, topics = NULL) {
  key <- docs_cache_key(package, path, "help-text")
  slot <- paste(package, "help-text", sep = "\r")
  dir <- if (!isFALSE(cache)) docs_cache_dir(cache)
  file <- if (!is.null(dir)) file.path(dir, paste0("help-", package, ".rds"))
  entry <- if (!isFALSE(cache)) docs_memory[[slot]]
  if ((!is.list(entry) || !identical(entry$key, key)) && !is.null(file) && file.exists(file)) {
    entry <- tryCatch(readRDS(file), error = function(e) NULL)
  }
  if (is.list(entry) && identical(entry$key, key)) {
    return(entry)
  }
  if (isFALSE(cache) && !is.null(topics)) {
    # Nothing to keep: only the pages asked for are rendered.
    return(render_help_texts(package, path, topics))
  }
  entry <- render_help_texts(package, path)
  entry$key <- key
  if (!isFALSE(cache)) {
    docs_memory[[slot]] <- entry
    if (!is.null(dir) && is.null(entry$error)) write_cache_file(entry, dir, file)
  }
  entry
}

render_help_texts <- function(package, path, topics = NULL) {
  index <- read_help_index(path)
  if (!is.null(index$error)) {
    return(list(pages = list(), aliases = character(), error = index$error))
  }
  db <- tryCatch(suppressWarnings(tools::Rd_db(package, lib.loc = dirname(path))), error = function(e) e)
  if (inherits(db, "error")) {
    return(list(pages = list(), aliases = character(),
                error = paste0("its help pages could not be read: ", conditionMessage(db))))
  }
  names(db) <- sub("\\.[Rr]d$", "", names(db))
  if (!is.null(topics)) {
    db <- db[intersect(names(db), unname(index$aliases[topics]))]
  }
  out <- tempfile("rd-", fileext = ".txt")
  on.exit(unlink(out), add = TRUE)
  pages <- lapply(db, function(rd) {
    tryCatch({
      # stages = character(): a \Sexpr[stage=render] is shown, never run.
      suppressWarnings(tools::Rd2txt(rd, out = out, package = package, stages = character(),
                                     outputEncoding = "UTF-8",
                                     options = list(underline_titles = FALSE)))
      text <- paste(readLines(out, encoding = "UTF-8", warn = FALSE), collapse = "\n")
      list(name = rd_field(rd, "\\name"), title = rd_field(rd, "\\title"), text = paste0(text, "\n"))
    }, error = function(e) NULL)
  })
  pages <- Filter(function(p) !is.null(p) && nzchar(p$name), pages)
  aliases <- if (is.null(topics)) index$aliases[index$aliases %in% names(pages)] else index$aliases
  list(pages = pages, aliases = aliases, error = NULL)
}

# The plain text of a top-level Rd section such as \name or \title.
rd_field <- function(rd, tag) {
  tags <- vapply(rd, function(s) attr(s, "Rd_tag") %||% "", "")
  i <- which(tags == tag)
  if (length(i) == 0L) {
    return("")
  }
  text <- paste(unlist(rd[[i[[1L]]]], use.names = FALSE), collapse = "")
  trimws(gsub("[[:space:]]+", " ", text))
}

# One resource per vignette whose source is installed (RULES U5.1).
vignette_resources <- function(package, path) {
  info <- tryCatch(tools::getVignetteInfo(package, lib.loc = dirname(path)), error = function(e) NULL)
  if (is.null(info) || nrow(info) == 0L) {
    return(list())
  }
  out <- lapply(seq_len(nrow(info)), function(i) {
    file <- file.path(info[i, "Dir"], "doc", info[i, "File"])
    if (!nzchar(info[i, "File"]) || !file.exists(file)) {
      return(NULL)
    }
    text <- tryCatch(paste0(paste(readLines(file, encoding = "UTF-8", warn = FALSE), collapse = "\n"), "\n"),
                     error = function(e) NULL)
    if (is.null(text) || !validUTF8(text)) {
      return(NULL)
    }
    name <- tools::file_path_sans_ext(info[i, "File"])
    title <- unname(info[i, "Title"])
    mime <- if (grepl("\\.([Rr]?md|qmd)$", file)) {
      "text/markdown"
    } else if (grepl("\\.([Rr]nw|[Ss]nw|tex)$", file)) {
      "text/x-tex"
    } else {
      "text/plain"
    }
    resource(paste0("r-vignette://", package, "/", uri_segment(name)), text, name = name,
             title = if (nzchar(title)) title, mime_type = mime,
             description = paste0("The source of the vignette \"", title, "\" of package ", package, "."))
  })
  Filter(Negate(is.null), out)
}
