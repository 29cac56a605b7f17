# package_tools(), the descriptions of its tools (RULES R8.1): a tool's
# description from the function's help page within a budget, and the
# signature that describes a function without one.

# -- descriptions within a budget (RULES R8.1) ----------------------------------

# Characters of a tool description beyond its lead (usage line and what a
# shared page says about this function) and the Description's first
# paragraph, which are always kept whole; and of an argument description,
# which keeps its first paragraph up to this length.
description_budget <- 150L
argument_budget <- 100L

# Paragraphs and list items of rendered help text.
doc_units <- function(text) {
  if (is.null(text) || !nzchar(text)) {
    return(character())
  }
  units <- strsplit(text, "\n+", perl = TRUE)[[1L]]
  units[nzchar(units)]
}

# Units joined back: list items on consecutive lines, paragraphs apart.
join_units <- function(units) {
  if (length(units) == 0L) {
    return("")
  }
  item <- grepl("^(- |[0-9]+\\. )", units)
  sep <- ifelse(c(FALSE, item[-1L] & item[-length(item)]), "\n", "\n\n")
  paste0(units, c(sep[-1L], ""), collapse = "")
}

# Which units mention the function `name` (as code in Markdown, as a word in
# plain text).
mentions <- function(units, name, md) {
  if (length(units) == 0L) {
    return(logical())
  }
  if (md) {
    return(grepl(paste0("`", name, "`"), units, fixed = TRUE) |
             grepl(paste0("`", name, "("), units, fixed = TRUE))
  }
  esc <- gsub("([.\\\\|()\\[\\]{}^$*+?])", "\\\\\\1", name, perl = TRUE)
  grepl(paste0("(?<![A-Za-z0-9._])", esc, "(?![A-Za-z0-9_]|\\.[A-Za-z])"), units, perl = TRUE)
}

mentions_any <- function(units, names, md) {
  hit <- logical(length(units))
  for (nm in names) hit <- hit | mentions(units, nm, md)
  hit
}

# `text` cut to at most `room` characters: at the end of a sentence when one
# ends in the second half, else at a word, marked with an ellipsis. NULL
# when too little room is left to say anything.
cut_text <- function(text, room, md) {
  if (nchar(text) <= room) {
    return(text)
  }
  if (room < 60L) {
    return(NULL)
  }
  head <- substr(text, 1L, room - 1L)
  ends <- gregexpr("[.!?](?=\\s)", head, perl = TRUE)[[1L]]
  ends <- ends[ends > room / 2]
  out <- if (length(ends) > 0L && ends[[1L]] > 0L) {
    substr(head, 1L, ends[[length(ends)]])
  } else {
    paste0(sub("\\s+\\S*$", "", head, perl = TRUE), "\u2026")
  }
  # A cut inside inline code would leave an unbalanced backtick.
  if (md && lengths(regmatches(out, gregexpr("`", out, fixed = TRUE))) %% 2L == 1L) {
    out <- paste0(sub("`[^`]*$", "", out, perl = TRUE), "\u2026")
  }
  out
}

# An argument's description: its first paragraph, within the budget.
argument_text <- function(doc, md) {
  units <- doc_units(doc)
  if (length(units) == 0L) {
    return(NULL)
  }
  cut_text(units[[1L]], argument_budget, md) %||% units[[1L]]
}

# A tool's description from its help page (RULES R8.1). When the page
# documents several functions, the description leads with this function's
# usage and what the page says about it alone, and leaves out the
# paragraphs about the page's other functions. The Description's first
# paragraph is always kept; the rest follows within description_budget.
tool_description <- function(package, fname, fun, doc, md, usage = character()) {
  if (is.null(doc)) {
    sig <- signature_text(package, fname, fun)
    return(if (md) paste0("R function `", sig, "` (no help page).") else
      paste0("R function ", sig, " (no help page)."))
  }
  code <- function(x) if (md) paste0("`", gsub("`", "'", x, fixed = TRUE), "`") else x
  value_label <- if (md) "**Value:** " else "Value: "
  desc <- doc_units(doc$description)
  value <- doc_units(doc$value)
  lead <- character()
  if (length(usage) > 1L) {
    others <- setdiff(names(usage), fname)
    own <- mentions(value, fname, md)
    lead <- c(if (!is.na(usage[fname])) code(usage[[fname]]),
              if (any(own)) paste0(value_label, join_units(value[own])))
    value <- value[!own & !mentions_any(value, others, md)]
    rest <- desc[-1L]
    keep <- mentions(rest, fname, md) | !mentions_any(rest, others, md)
    desc <- c(desc[1L], rest[keep])
  }
  if (length(value) > 0L) {
    value[[1L]] <- paste0(value_label, value[[1L]])
  }
  # Whole: the lead and the first paragraph. Then, within the budget, the
  # value's first paragraph and the other paragraphs in page order.
  first <- desc[1L][!is.na(desc[1L])]
  optional <- c(desc[-1L], value)
  first_value <- max(length(desc) - 1L, 0L) + 1L
  order <- if (length(value) > 0L) c(first_value, seq_along(optional)[-first_value]) else
    seq_along(optional)
  keep <- rep(NA_character_, length(optional))
  room <- description_budget
  shortened <- FALSE
  for (i in order) {
    text <- cut_text(optional[[i]], room, md)
    if (is.null(text)) {
      shortened <- TRUE
      next
    }
    shortened <- shortened || !identical(text, optional[[i]])
    keep[[i]] <- text
    room <- room - nchar(text) - 2L
  }
  parts <- c(lead, first, keep[!is.na(keep)])
  if (shortened) {
    parts <- c(parts, paste0("(More: ", code(paste0("?", package, "::", fname)), ".)"))
  }
  join_units(parts)
}

signature_text <- function(package, fname, fun) {
  f <- formals(args(fun) %||% fun)
  parts <- vapply(names(f), function(nm) {
    if (is_missing_arg(f[[nm]])) {
      return(nm)
    }
    paste(nm, "=", paste(deparse(f[[nm]], width.cutoff = 500L), collapse = " "))
  }, character(1))
  paste0(package, "::", fname, "(", paste(parts, collapse = ", "), ")")
}
