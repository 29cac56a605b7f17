#' The package's tools
#'
#' `mean_tools()` makes the tools; `serve()` serves them (the last line of
#' `inst/server.R`).
#'
#' @return `mean_tools()`: a list of tools. `serve()`: what
#'   [mcplite::mcp_server()] returns.
#' @export
mean_tools <- function() {
  list(
    mcplite::tool(
      function(values) {
        values <- vapply(values, function(v) if (is.null(v)) NA_real_ else as.numeric(v), 1)
        if (anyNA(values)) warning("dropping ", sum(is.na(values)), " missing values")
        message("averaging ", sum(!is.na(values)), " values")
        mean(values, na.rm = TRUE)
      },
      name = "mean_of", description = "Mean of numbers, ignoring missing ones.",
      arguments = list(values = mcplite::type_array(mcplite::type_number(nullable = TRUE)))
    ),
    mcplite::tool(
      function(rows) data.frame(row = seq_len(rows), square = seq_len(rows)^2),
      name = "squares", description = "A table of squares.",
      arguments = list(rows = mcplite::type_integer())
    ),
    mcplite::tool(
      function(seconds) {
        Sys.sleep(seconds)
        "slept"
      },
      name = "wait", description = "Wait.", arguments = list(seconds = mcplite::type_number())
    )
  )
}

#' @rdname mean_tools
#' @export
serve <- function() {
  mcplite::mcp_server(mean_tools(), instructions = "Averages and squares.")
}
