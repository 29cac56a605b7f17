# What a package tool (R/package-tools.R) sends back: its value as JSON with
# missing values as `null` (RULES R8.5) or as the text R prints for it, and
# what the function drew as a PNG image (RULES R8.9).

# Run `run()`, the call of the package function, with what it draws caught
# on a PNG device of ours, and return the tool's answer: `finish(value)`
# (the value's text or JSON, or a shaped table), with the image added when
# something was drawn. Nothing drawn costs a device check and two options()
# calls (measured in bench/package-plots.R).
package_tool_call <- function(run, finish) {
  device <- NULL
  open <- function() {
    device <<- plot_device()
    device$open()
  }
  on.exit(if (!is.null(device)) device$close(), add = TRUE)
  # .Device is what grDevices::dev.cur() reads, without its cost.
  if (identical(baseenv()$.Device, "null device")) {
    # No device is open: R opens getOption("device") when something is
    # drawn, so ours is opened only then (and no Rplots.pdf is written).
    old <- options(device = open)
    on.exit(options(old), add = TRUE)
  } else {
    # A device is open (the user's, in a live session): ours is current
    # during the call; close() makes the user's current again.
    open()
  }
  value <- run()
  if (inherits(value, drawn_when_printed)) {
    # lattice and ggplot2 objects draw when printed: the image is the value.
    if (is.null(device)) {
      open()
    }
    draw_plot_object(value)
    value <- NULL
  }
  out <- finish(value)
  bytes <- if (!is.null(device)) device$close()
  if (is.null(bytes)) {
    return(out)
  }
  image <- content_image(base64_plain(bytes), "image/png")
  if (inherits(out, "mcplite_tool_result")) {
    out$content <- c(out$content, list(image))
    return(out)
  }
  blocks <- if (is.null(out)) list() else list(content_text(paste(out, collapse = "\n")))
  tool_result(c(blocks, list(image)))
}

# Classes of values that draw themselves when printed (see draw_plot_object()).
drawn_when_printed <- c("ggplot", "trellis", "recordedplot")

# Values that cannot be sent as JSON are sent as the text R prints for them;
# the others as their JSON, missing values as `null` unless the user set
# `mcplite.json.na` (RULES R8.5).
package_tool_value <- function(res) {
  if (is.null(res) || is.character(res) || inherits(res, "mcplite_tool_result")) {
    return(res)
  }
  tryCatch(
    payload_json(res, na_null = TRUE),
    mcplite_error_json = function(e) paste(utils::capture.output(print(res)), collapse = "\n")
  )
}
