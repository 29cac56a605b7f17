#' @keywords internal
#' @useDynLib mcplite, .registration = TRUE
"_PACKAGE"
