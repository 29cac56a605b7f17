# Internal helpers shared by the whole package.

# abort(), the helper that raises mcplite's errors, is in R/conditions.R.

is_scalar_string <- function(x) {
  is.character(x) && length(x) == 1L && !is.na(x)
}

is_true_false <- function(x) {
  is.logical(x) && length(x) == 1L && !is.na(x)
}

# An unclassed list whose names are all non-empty and unique; an empty list
# (named or not) counts when `empty_ok` is TRUE.
is_named_list <- function(x, empty_ok = TRUE) {
  if (!is.list(x) || is.object(x)) {
    return(FALSE)
  }
  if (length(x) == 0L) {
    return(empty_ok)
  }
  nms <- names(x)
  !is.null(nms) && !anyNA(nms) && all(nzchar(nms)) && !anyDuplicated(nms)
}

# A short description of what was supplied, for error messages.
describe <- function(x) {
  if (is.null(x)) {
    return("NULL")
  }
  if (is.function(x)) {
    return("a function")
  }
  cls <- class(x)[1L]
  if (is.atomic(x) && length(x) == 1L) {
    return(paste0("a ", cls, " scalar"))
  }
  paste0("an object of class <", cls, "> and length ", length(x))
}

`%||%` <- function(x, y) if (is.null(x)) y else x
