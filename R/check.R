# Argument checks: the one way mcplite checks what a user passes and fails
# (RULES R9.2). Each check_*() returns its value invisibly when it is good,
# and otherwise raises an error of class `mcplite_error_argument` whose
# message names the argument in backticks, says what is accepted and what
# was given ("`workers` must be a whole number from 1 to 1024, not the string
# \"a\"."), and whose call is the user's call of the exported function
# (abort() in R/conditions.R finds it). A check that no helper here covers
# raises with abort_arg(). CONTRIBUTING.md, "How to check an argument and
# fail", shows how they are used.
#
# The signature follows rlang's: `check_x(x, ..., arg = caller_arg(x),
# call = caller_env())`. `arg` is the name the message shows (by default the
# expression the caller passed as `x`, usually the argument's own name);
# `call` is the frame of the function whose argument it is.

# What counts (RULES section 0: scalar string, TRUE/FALSE scalar, named list).

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

# A single finite number (integer or double, not NA) that is whole.
is_whole_number <- function(x) {
  is.numeric(x) && !is.object(x) && length(x) == 1L && is.finite(x) && x == trunc(x)
}

# The frame of the caller's caller: the default `call` of the checks, as
# rlang's caller_env().
caller_env <- function(n = 1L) {
  parent.frame(n + 1L)
}

# The expression the caller passed as `x`, as text: the default `arg` of the
# checks, as rlang's caller_arg(). Called as a default argument of a check,
# it sees the check's frame; the expression is looked up there.
caller_arg <- function(x) {
  expr <- eval(call("substitute", substitute(x)), parent.frame())
  if (is.symbol(expr)) {
    return(as.character(expr))
  }
  paste(deparse(expr, width.cutoff = 500L, nlines = 1L), collapse = "")
}

# "`arg` must be <NULL or ><what>, not <what was given>."
stop_input <- function(x, what, arg, call, allow_null = FALSE) {
  abort_arg("`", arg, "` must be ", if (allow_null) "NULL or ", what, ", not ", describe(x), ".", call = call)
}

# An argument that was not supplied: "`tools` is required: <hint>". `x` is the
# argument itself, unevaluated; the check looks whether the caller got it.
check_required <- function(x, hint, arg = caller_arg(x), call = caller_env()) {
  if (eval(as.call(list(as.name("missing"), as.name(arg))), call)) {
    abort_arg("`", arg, "` is required: ", hint, call = call)
  }
  invisible(NULL)
}

# A single string (not NA); `allow_empty = FALSE` also refuses "", and
# `allow_class = FALSE` a string with a class (`I("x")`, glue).
check_string <- function(x, ..., allow_null = FALSE, allow_empty = TRUE, allow_class = TRUE, what = NULL,
                         arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is_scalar_string(x) || (!allow_empty && !nzchar(x)) || (!allow_class && is.object(x))) {
    what <- what %||% if (allow_empty) "a single string" else "a single non-empty string"
    stop_input(x, what, arg, call, allow_null = allow_null)
  }
  invisible(x)
}

# TRUE or FALSE (a logical of length 1, not NA).
check_bool <- function(x, ..., allow_null = FALSE, arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is_true_false(x)) {
    if (allow_null) {
      abort_arg("`", arg, "` must be NULL, TRUE or FALSE, not ", describe(x), ".", call = call)
    }
    stop_input(x, "TRUE or FALSE", arg, call)
  }
  invisible(x)
}

# A whole number from `min` to `max`. `what` replaces the words "a whole
# number ..." (for a unit: "a whole number of pixels from 16 to 4096").
check_number_whole <- function(x, ..., min = -Inf, max = Inf, allow_null = FALSE, what = NULL,
                               arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is_whole_number(x) || x < min || x > max) {
    stop_input(x, what %||% paste0("a whole number", range_words(min, max)), arg, call, allow_null)
  }
  invisible(x)
}

# A single number from `min` to `max`; infinite values only when
# `allow_infinite`, and `min` itself excluded when `exclusive_min` (for "a
# positive number").
check_number <- function(x, ..., min = -Inf, max = Inf, exclusive_min = FALSE, allow_infinite = FALSE,
                         allow_null = FALSE, what = NULL, arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  ok <- is.numeric(x) && !is.object(x) && length(x) == 1L && !is.na(x) &&
    (allow_infinite || is.finite(x)) && x >= min && x <= max && !(exclusive_min && x == min)
  if (!ok) {
    stop_input(x, what %||% paste0("a single finite number", range_words(min, max)), arg, call, allow_null)
  }
  invisible(x)
}

# A character vector without NA (of any length, or at least one element when
# `allow_empty` is FALSE).
check_character <- function(x, ..., allow_null = FALSE, allow_empty = TRUE, what = NULL,
                            arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is.character(x) || anyNA(x) || (!allow_empty && length(x) == 0L)) {
    stop_input(x, what %||% "a character vector without NA", arg, call, allow_null)
  }
  invisible(x)
}

# A function (any closure or primitive).
check_function <- function(x, ..., allow_null = FALSE, what = NULL, arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is.function(x)) {
    stop_input(x, what %||% "a function", arg, call, allow_null)
  }
  invisible(x)
}

# A named list (is_named_list()): unclassed, names unique and non-empty.
check_named_list <- function(x, ..., allow_null = FALSE, empty_ok = TRUE, what = NULL,
                             arg = caller_arg(x), call = caller_env()) {
  if (is.null(x) && allow_null) {
    return(invisible(x))
  }
  if (!is_named_list(x, empty_ok = empty_ok)) {
    stop_input(x, what %||% "a named list with unique, non-empty names", arg, call, allow_null)
  }
  invisible(x)
}

# No argument in `...` (a misspelt argument name after `...` would be lost).
# It takes no `call`: an argument of that name in `...` would be taken for it.
check_dots_empty <- function(...) {
  if (...length() > 0L) {
    abort_arg("`...` must be empty; name the arguments after `...`, for example `timeout = 10`.",
              call = parent.frame())
  }
}

# One of `choices` (the first when `x` is `choices` itself, the default of a
# `match.arg()`-style argument), else an error that lists them.
check_choice <- function(x, choices, arg = caller_arg(x), call = caller_env()) {
  if (identical(x, choices)) {
    return(choices[[1L]])
  }
  if (!is_scalar_string(x) || !x %in% choices) {
    abort_arg("`", arg, "` must be one of ", or_list(paste0("\"", choices, "\"")), ", not ",
              if (is_scalar_string(x)) paste0("\"", x, "\"") else describe(x), ".", call = call)
  }
  x
}

# " from 1 to 1024", " of at least 1", " of at most 10", or "".
range_words <- function(min, max) {
  num <- function(v) format(v, scientific = FALSE)
  if (is.finite(min) && is.finite(max)) {
    paste0(" from ", num(min), " to ", num(max))
  } else if (is.finite(min)) {
    paste0(" of at least ", num(min))
  } else if (is.finite(max)) {
    paste0(" of at most ", num(max))
  } else {
    ""
  }
}
