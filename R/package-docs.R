# Help pages of an installed package, reduced to what package_tools() needs:
# per Rd topic its title, description, value and argument descriptions as
# plain text or Markdown, plus the alias -> topic index. Parsing every help
# page of a large package and rendering it is the expensive part of building
# a package's tools, so the result is cached in memory and on disk (see
# package_docs()), together with what package_tools() inferred from each
# function (`inferred`, by `formulas` choice): both depend only on the
# installed package, which the cache key identifies.

# Bump when the rendering below changes: cached files of another version are
# ignored.
docs_cache_format <- 22L

docs_memory <- new.env(parent = emptyenv())

# The cache directory: `cache` itself when it is a path, else the option
# mcplite.cache_dir, else the user cache directory R recommends; NULL when
# caching on disk is off.
docs_cache_dir <- function(cache) {
  if (isFALSE(cache)) {
    return(NULL)
  }
  if (is.character(cache)) {
    return(cache)
  }
  dir <- getOption("mcplite.cache_dir")
  if (is_scalar_string(dir)) dir else user_cache_dir()
}

# tools::R_user_dir("mcplite", "cache") without its look at the home
# directory when a variable names the cache (R_USER_CACHE_DIR, then
# XDG_CACHE_HOME): R_user_dir() normalizes "~" first, which warns when the
# home directory does not exist (a service user's /nonexistent), an error
# under options(warn = 2).
user_cache_dir <- function() {
  for (var in c("R_USER_CACHE_DIR", "XDG_CACHE_HOME")) {
    p <- Sys.getenv(var)
    if (nzchar(p)) {
      return(file.path(p, "R", "mcplite"))
    }
  }
  suppressWarnings(tools::R_user_dir("mcplite", "cache"))
}

# What the rendered docs depend on. Any change (a reinstalled or upgraded
# package, another R or mcplite release or build of mcplite's R code, the
# other format) invalidates the cache entry (RULES R8.6).
docs_cache_key <- function(package, path, format) {
  rdb <- file.path(path, "help", paste0(package, ".rdb"))
  aliases <- file.path(path, "help", "aliases.rds")
  info <- file.info(c(rdb, aliases), extra_cols = FALSE)
  list(
    format_version = docs_cache_format,
    package = package,
    path = normalizePath(path, winslash = "/", mustWork = FALSE),
    version = as.character(utils::packageVersion(package, lib.loc = dirname(path))),
    files = paste(info$size, format(as.numeric(info$mtime), digits = 15), sep = "@"),
    r = R.version.string,
    mcplite = as.character(server_version()),
    code = mcplite_code_id(),
    format = format,
    # The capabilities cached with the inferred tools follow calls into the
    # packages it depends on.
    deps = package_dep_versions(package, path)
  )
}

# mcplite's own R code, as an MD5 of the deparsed functions and values of
# its namespace: what classifies and renders is part of what a cache entry
# depends on, so a build of mcplite with the same version but other code (a
# development install) does not read the entries an earlier build wrote.
# Worked out when the package is installed (R/zzz-code-digest.R, the last
# file sourced), from the code as written: the same code gives the same
# identity whichever library it is installed into and however often.
mcplite_code_id <- function() mcplite_code_digest

# The identity of the code in `env`: its functions (formals and bodies, as
# deparsed text, without source references) and its values made of plain
# data, by name; environments (state), native symbols (which name the
# library they were loaded from) and anything else are left out.
code_identity <- function(env) {
  plain <- function(o) is.atomic(o) || (is.list(o) && all(vapply(o, plain, NA)))
  names <- sort(ls(env, all.names = TRUE), method = "radix")
  objs <- mget(names, envir = env)
  keep <- vapply(objs, function(o) is.function(o) || plain(o), NA)
  text <- unlist(lapply(names[keep], function(n) {
    o <- objs[[n]]
    if (is.function(o)) o <- utils::removeSource(o)
    c(n, deparse(o, width.cutoff = 500L, control = c("keepNA", "keepInteger", "niceNames", "showAttributes")))
  }), use.names = FALSE)
  file <- tempfile("mcplite-code-")
  on.exit(unlink(file), add = TRUE)
  writeLines(enc2utf8(text), file, useBytes = TRUE)
  unname(tools::md5sum(file))
}

# "pkg version" of the installed packages `package` depends on or imports.
package_dep_versions <- function(package, path) {
  desc <- tryCatch(
    read.dcf(file.path(path, "DESCRIPTION"), fields = c("Depends", "Imports")),
    error = function(e) NULL
  )
  if (is.null(desc)) {
    return(character())
  }
  deps <- unlist(strsplit(desc[!is.na(desc)], ",", fixed = TRUE), use.names = FALSE)
  deps <- trimws(sub("\\(.*$", "", deps))
  deps <- sort(unique(deps[nzchar(deps) & deps != "R"]), method = "radix")
  vapply(deps, function(d) {
    p <- find.package(d, quiet = TRUE)
    if (length(p) == 0L) return(paste(d, "-"))
    v <- tryCatch(read.dcf(file.path(p[[1L]], "DESCRIPTION"), fields = "Version")[[1L]],
                  error = function(e) "-")
    paste(d, v)
  }, character(1), USE.NAMES = FALSE)
}

# The rendered help pages documenting the functions `fnames`:
# list(aliases = c(alias = topic), topics = list(topic = doc), failed = c(topic = reason),
# error = NULL or the reason the help database could not be read, key).
# A cache entry collects the pages rendered so far; pages are rendered only
# when a function needs one that the entry does not hold yet.
package_docs <- function(package, path, format, cache, fnames) {
  key <- docs_cache_key(package, path, format)
  use_cache <- !isFALSE(cache)
  dir <- if (use_cache) docs_cache_dir(cache)
  file <- if (!is.null(dir)) file.path(dir, paste0("rd-", package, "-", format, ".rds"))
  entry <- if (use_cache) docs_memory[[paste(package, format, sep = "\r")]]
  if (!is.list(entry) || !identical(entry$key, key)) {
    entry <- NULL
    if (!is.null(file) && file.exists(file)) {
      entry <- tryCatch(readRDS(file), error = function(e) NULL)
      if (!is.list(entry) || !identical(entry$key, key)) entry <- NULL
    }
  }
  if (is.null(entry)) {
    entry <- read_help_index(path)
    entry$key <- key
  }
  if (!is.null(entry$error)) {
    return(entry)
  }
  needed <- unique(unname(entry$aliases[fnames]))
  needed <- needed[!is.na(needed) & !needed %in% c(names(entry$topics), names(entry$failed))]
  if (length(needed) > 0L) {
    entry <- render_help_pages(entry, package, path, format, needed)
    save_package_docs(entry, package, format, cache)
  } else if (use_cache) {
    docs_memory[[paste(package, format, sep = "\r")]] <- entry
  }
  entry
}

# Store an updated cache entry (package_tools() adds the inferred schemas of
# the functions it built to the entry of their package).
save_package_docs <- function(entry, package, format, cache) {
  if (isFALSE(cache)) {
    return(invisible())
  }
  docs_memory[[paste(package, format, sep = "\r")]] <- entry
  dir <- docs_cache_dir(cache)
  if (!is.null(dir) && is.null(entry$error)) {
    write_cache_file(entry, dir, file.path(dir, paste0("rd-", package, "-", format, ".rds")))
  }
  invisible()
}

# Written to a temporary file first and renamed, so a concurrent reader never
# sees half a file. A cache that cannot be written is simply not used.
write_cache_file <- function(value, dir, file) {
  tryCatch({
    dir.create(dir, recursive = TRUE, showWarnings = FALSE)
    tmp <- tempfile("rd-", tmpdir = dir, fileext = ".tmp")
    on.exit(unlink(tmp), add = TRUE)
    saveRDS(value, tmp)
    file.rename(tmp, file)
  }, error = function(e) NULL, warning = function(w) NULL)
  invisible()
}

read_help_index <- function(path) {
  out <- list(aliases = character(), topics = list(), failed = character(), error = NULL)
  aliases_file <- file.path(path, "help", "aliases.rds")
  if (!file.exists(aliases_file)) {
    out$error <- "the package has no installed help pages"
    return(out)
  }
  aliases <- tryCatch(readRDS(aliases_file), error = function(e) e)
  if (inherits(aliases, "error") || !is.character(aliases)) {
    out$error <- "its help index could not be read"
    return(out)
  }
  out$aliases <- aliases
  out
}

render_help_pages <- function(entry, package, path, format, topics) {
  db <- tryCatch(
    suppressWarnings(tools::Rd_db(package, lib.loc = dirname(path))),
    error = function(e) e
  )
  if (inherits(db, "error")) {
    entry$error <- paste0("its help pages could not be read: ", conditionMessage(db))
    return(entry)
  }
  names(db) <- sub("\\.[Rr]d$", "", names(db))
  for (topic in topics) {
    doc <- if (is.null(db[[topic]])) {
      simpleError("the help page is missing from the help database")
    } else {
      tryCatch(rd_topic_doc(db[[topic]], format), error = function(e) e)
    }
    if (inherits(doc, "error")) {
      entry$failed[[topic]] <- conditionMessage(doc)
    } else {
      entry$topics[[topic]] <- doc
    }
  }
  entry
}

# One parsed help page -> list(title, description, value, arguments = c(name = text)).
rd_topic_doc <- function(rd, format) {
  if (!inherits(rd, "Rd")) {
    abort("not a parsed help page (", class(rd)[1L], ")")
  }
  md <- identical(format, "markdown")
  tags <- vapply(rd, function(s) attr(s, "Rd_tag") %||% "", character(1))
  section <- function(tag) {
    i <- which(tags == tag)
    if (length(i) == 0L) NULL else rd[[i[[1L]]]]
  }
  title <- section("\\title")
  if (is.null(title)) {
    abort("the help page has no \\title")
  }
  desc <- section("\\description")
  value <- section("\\value")
  args <- section("\\arguments")
  arguments <- if (!is.null(args)) rd_arguments(args, md) else character()
  usage <- section("\\usage")
  list(
    title = rd_paragraphs(rd_render(title, FALSE), FALSE, join = " "),
    description = if (!is.null(desc)) rd_paragraphs(rd_render(desc, md), md) else "",
    value = if (!is.null(value)) rd_paragraphs(rd_render(value, md), md) else "",
    arguments = arguments,
    usage = if (!is.null(usage)) rd_usage_calls(rd_render(usage, FALSE)) else character(),
    kinds = doc_types(unname(arguments)),
    optional = doc_optional(unname(arguments))
  )
}

# \arguments: each \item{names}{text}; "x, q" documents two arguments.
rd_arguments <- function(section, md) {
  out <- character()
  for (node in section) {
    if (!identical(attr(node, "Rd_tag"), "\\item") || length(node) < 2L) {
      next
    }
    label <- rd_paragraphs(rd_render(node[[1L]], FALSE), FALSE, join = " ")
    text <- rd_paragraphs(rd_render(node[[2L]], md), md)
    for (nm in trimws(strsplit(label, ",", fixed = TRUE)[[1L]])) {
      if (nzchar(nm) && is.na(out[nm])) {
        out[[nm]] <- text
      }
    }
  }
  out
}

# Paragraphs are separated by blank lines; inside one, runs of white space
# become one space. Consecutive list items stay on consecutive lines.
rd_paragraphs <- function(text, md, join = "\n\n") {
  paras <- strsplit(text, "\n[ \t]*\n", perl = TRUE)[[1L]]
  paras <- trimws(gsub("[ \t\r\n]+", " ", paras, perl = TRUE))
  paras <- paras[nzchar(paras)]
  if (length(paras) == 0L) {
    return("")
  }
  if (!identical(join, "\n\n")) {
    return(paste(paras, collapse = join))
  }
  item <- grepl("^(- |[0-9]+\\. )", paras)
  sep <- ifelse(c(FALSE, item[-1L] & item[-length(item)]), "\n", "\n\n")
  paste0(paras, c(sep[-1L], ""), collapse = "")
}

rd_render <- function(x, md) {
  if (!is.list(x)) {
    return(rd_leaf(x))
  }
  paste(vapply(x, rd_node, character(1), md = md), collapse = "")
}

rd_leaf <- function(x) {
  if (is.character(x)) paste(x, collapse = "") else ""
}

rd_plain <- function(x) rd_render(x, FALSE)

rd_node <- function(node, md) {
  tag <- attr(node, "Rd_tag") %||% ""
  code <- function(x) {
    text <- gsub("[ \t\r\n]+", " ", rd_plain(x))
    if (md && nzchar(trimws(text))) paste0("`", gsub("`", "'", text, fixed = TRUE), "`") else text
  }
  wrap <- function(x, mark) {
    text <- rd_render(x, md)
    if (md && nzchar(trimws(text))) paste0(mark, text, mark) else text
  }
  switch(tag,
    TEXT = ,
    VERB = ,
    RCODE = rd_leaf(node),
    COMMENT = ,
    USERMACRO = ,
    `\\newcommand` = ,
    `\\renewcommand` = ,
    `\\figure` = ,
    `\\Sexpr` = ,
    `\\alias` = ,
    `\\keyword` = ,
    `\\concept` = "",
    `\\code` = ,
    `\\samp` = ,
    `\\verb` = ,
    `\\kbd` = ,
    `\\command` = ,
    `\\option` = ,
    `\\env` = ,
    `\\file` = code(node),
    `\\emph` = ,
    `\\dfn` = ,
    `\\var` = wrap(node, "*"),
    `\\strong` = ,
    `\\bold` = wrap(node, "**"),
    `\\sQuote` = paste0("'", rd_render(node, md), "'"),
    `\\dQuote` = paste0("\"", rd_render(node, md), "\""),
    `\\R` = "R",
    `\\dots` = ,
    `\\ldots` = "...",
    `\\cr` = "\n",
    `\\tab` = " | ",
    `\\eqn` = ,
    `\\deqn` = {
      math <- rd_plain(node[[length(node)]])
      if (tag == "\\deqn") paste0("\n\n", math, "\n\n") else math
    },
    `\\enc` = rd_render(node[[1L]], md),
    `\\href` = {
      text <- rd_render(node[[2L]], md)
      if (md) paste0("[", text, "](", trimws(rd_plain(node[[1L]])), ")") else text
    },
    `\\url` = {
      url <- trimws(rd_plain(node))
      if (md) paste0("<", url, ">") else url
    },
    `\\if` = if (rd_format_matches(node[[1L]])) rd_render(node[[2L]], md) else "",
    `\\ifelse` = rd_render(node[[if (rd_format_matches(node[[1L]])) 2L else 3L]], md),
    `\\method` = ,
    `\\S3method` = ,
    `\\S4method` = rd_plain(node[[1L]]),
    `\\tabular` = rd_render(node[[length(node)]], md),
    `\\itemize` = rd_list(node, md, numbered = FALSE),
    `\\enumerate` = rd_list(node, md, numbered = TRUE),
    `\\describe` = rd_list(node, md, numbered = FALSE),
    `\\item` = rd_item(node, md),
    `\\section` = ,
    `\\subsection` = paste0(
      "\n\n", wrap(node[[1L]], if (md) "**" else ""), ":\n\n",
      rd_render(node[[2L]], md), "\n\n"
    ),
    `\\preformatted` = paste0("\n\n", rd_render(node, md), "\n\n"),
    rd_render(node, md)
  )
}

# \if{format}: keep the text meant for plain-text output.
rd_format_matches <- function(x) {
  formats <- trimws(strsplit(rd_plain(x), ",", fixed = TRUE)[[1L]])
  any(formats %in% c("text", "example"))
}

# \itemize/\enumerate hold bare \item markers followed by their content;
# \describe holds \item{label}{text}.
rd_list <- function(node, md, numbered) {
  out <- character()
  n <- 0L
  for (child in node) {
    if (identical(attr(child, "Rd_tag"), "\\item") && length(child) == 0L) {
      n <- n + 1L
      out <- c(out, paste0("\n\n", if (numbered) paste0(n, ". ") else "- "))
    } else {
      out <- c(out, rd_node(child, md))
    }
  }
  paste0(paste(out, collapse = ""), "\n\n")
}

# \item{label}{text} (in \value, \describe): one list entry.
rd_item <- function(node, md) {
  if (length(node) < 2L) {
    return("")
  }
  label <- gsub("[ \t\r\n]+", " ", trimws(rd_plain(node[[1L]])))
  if (md && nzchar(label)) {
    label <- paste0("`", gsub("`", "'", label, fixed = TRUE), "`")
  }
  paste0("\n\n- ", label, ": ", rd_render(node[[2L]], md), "\n\n")
}

# The calls of a help page's \usage section, by function name (the first
# call of each): c(name = "name(arg, ...)"). S3 and S4 method markup renders
# as the generic's name; replacement forms (`f(x) <- value`) are left out.
rd_usage_calls <- function(text) {
  lines <- strsplit(text, "\n", fixed = TRUE)[[1L]]
  out <- character()
  chunk <- ""
  depth <- 0L
  for (line in lines) {
    if (depth == 0L && !nzchar(trimws(line))) {
      next
    }
    chunk <- paste(chunk, line)
    bare <- gsub("\"([^\"\\\\]|\\\\.)*\"|'([^'\\\\]|\\\\.)*'", "", line, perl = TRUE)
    depth <- depth + lengths(regmatches(bare, gregexpr("(", bare, fixed = TRUE))) -
      lengths(regmatches(bare, gregexpr(")", bare, fixed = TRUE)))
    if (depth <= 0L) {
      call <- trimws(gsub("[ \t]+", " ", chunk, perl = TRUE))
      name <- regmatches(call, regexpr("^[A-Za-z.][A-Za-z0-9._]*(?=\\s*\\()", call, perl = TRUE))
      if (length(name) == 1L && !grepl("\\)\\s*<-", call, perl = TRUE) && is.na(out[name])) {
        out[[name]] <- call
      }
      chunk <- ""
      depth <- 0L
    }
  }
  out
}
