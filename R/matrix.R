#' Keep a matrix's row and column names in JSON
#'
#' @description
#' A matrix is converted to JSON the way [jsonlite::toJSON()] converts it:
#' as an array of rows, each an array of values, **without its row and
#' column names**. `cor(mtcars[1:2])` arrives as `[[1,-0.8522],[-0.8522,1]]`
#' and the model cannot tell which variable is which.
#'
#' `matrix_to_list()` turns a matrix into nested named lists, which become
#' nested JSON objects keyed by the names:
#' `{"mpg":{"mpg":1,"cyl":-0.8522},"cyl":{"mpg":-0.8522,"cyl":1}}`. Use it
#' on the matrices you return, in `structured_content` or as an ordinary
#' value.
#'
#' @details
#' With `by = "row"` the outer names are the row names and the inner names
#' the column names; `by = "column"` swaps them. Without row names (or column
#' names for `by = "column"`) the outer level is an array of objects instead;
#' without the inner names each row is an array of values.
#'
#' Each cell is a single value, written as a JSON scalar whatever the
#' `mcplite.json.auto_unbox` option says (like a data-frame cell); numbers,
#' missing values and so on follow the payload options of [mcplite-results].
#' A data frame already keeps its column names (as an array of row objects,
#' with character row names in a `"_row"` field), so it needs no conversion.
#'
#' @param x A matrix, or a two-dimensional table or array, of numbers,
#'   strings or logical values.
#' @param by `"row"` to key by row names first, or `"column"` to key by
#'   column names first.
#'
#' @return A list for [tool_result()]'s `structured_content`, or to return
#'   from a tool.
#' @seealso [mcplite-results] for how values become JSON.
#' @examples
#' m <- cor(mtcars[c("mpg", "cyl", "wt")])
#' # Without names, as jsonlite writes it:
#' tool_result(structured_content = list(cor = m))$content[[1]]$text
#' # With names:
#' tool_result(structured_content = list(cor = matrix_to_list(m)))$content[[1]]$text
#'
#' # A coefficient table, one object per term.
#' fit <- lm(mpg ~ wt, data = mtcars)
#' coefs <- matrix_to_list(summary(fit)$coefficients)
#' tool_result(structured_content = coefs)$content[[1]]$text
#' @export
matrix_to_list <- function(x, by = c("row", "column")) {
  if (is.data.frame(x)) {
    abort_arg(
      "`x` must be a matrix, not a data frame; a data frame already keeps its ",
      "column names in JSON (as an array of row objects)."
    )
  }
  dims <- dim(x)
  ok <- (is.matrix(x) || (length(dims) == 2L && is.atomic(x))) &&
    typeof(x) %in% c("logical", "integer", "double", "character", "complex")
  if (!ok) {
    abort_arg("`x` must be a matrix (or a two-dimensional table or array), not ", describe(x), ".")
  }
  if (!is.character(by) || length(by) < 1L || anyNA(by) || !by[[1L]] %in% c("row", "column")) {
    abort_arg("`by` must be \"row\" or \"column\", not ", describe(by), ".")
  }
  by <- by[[1L]]
  values <- unclass(x)
  attributes(values) <- NULL
  dim(values) <- dims
  names <- dimnames(x)
  outer_names <- if (by == "row") names[[1L]] else names[[2L]]
  inner_names <- if (by == "row") names[[2L]] else names[[1L]]
  check_dimnames(outer_names, if (by == "row") "row" else "column")
  check_dimnames(inner_names, if (by == "row") "column" else "row")
  n_outer <- if (by == "row") dims[[1L]] else dims[[2L]]
  out <- vector("list", n_outer)
  for (i in seq_len(n_outer)) {
    cells <- if (by == "row") values[i, ] else values[, i]
    member <- lapply(cells, jsonlite::unbox)
    if (!is.null(inner_names)) {
      names(member) <- inner_names
    }
    out[[i]] <- member
  }
  if (!is.null(outer_names)) {
    names(out) <- outer_names
  }
  out
}

check_dimnames <- function(x, what) {
  if (is.null(x)) {
    return(invisible())
  }
  if (anyNA(x) || !all(nzchar(x))) {
    abort_arg("`x` has missing or empty ", what, " names; every ", what, " needs a name to become a JSON key.")
  }
  dup <- x[duplicated(x)]
  if (length(dup) > 0L) {
    abort_arg("`x` has duplicated ", what, " names (", encodeString(dup[[1L]], quote = "\""),
              "); JSON keys must be unique.")
  }
  invisible()
}
