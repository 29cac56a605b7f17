# What a package tool (R/package-tools.R) sends back: its value as JSON with
# missing values as `null` (RULES R8.5) or as the text R prints for it, and
# what the function drew as a PNG image (RULES R8.9); with `shape`, a
# data-frame result sliced as the client asks (RULES R8.4).

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

# -- shaping ----------------------------------------------------------------------

shape_argument_names <- c(".limit", ".offset", ".columns", ".format")

shape_properties <- function(limits, md) {
  code <- function(x) if (md) paste0("`", x, "`") else x
  list(
    .limit = list(
      type = "integer", minimum = 0L, maximum = limits$max, default = limits$default,
      description = paste0("When the result is a data frame: the maximum number of rows to return ",
                           "(at most ", limits$max, ").")
    ),
    .offset = list(
      type = "integer", minimum = 0L, default = 0L,
      description = "When the result is a data frame: the number of rows to skip first."
    ),
    .columns = list(
      type = "array", items = list(type = "string"),
      description = "When the result is a data frame: the columns to keep (default: all)."
    ),
    .format = list(
      type = "string", enum = list("records", "csv", "markdown"), default = "records",
      description = paste0("When the result is a data frame: how the rows are written in the text ",
                           "content. The structured content always has ", code("total_rows"), ".")
    )
  )
}

shape_request <- function(args, limits) {
  whole <- function(v, name, default) {
    if (is.null(v)) {
      return(default)
    }
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || v != round(v)) {
      abort("`", name, "` must be a whole number of at least 0")
    }
    v
  }
  limit <- min(whole(args[[".limit"]], ".limit", limits$default), limits$max)
  offset <- min(whole(args[[".offset"]], ".offset", 0), .Machine$integer.max)
  columns <- args[[".columns"]]
  if (!is.null(columns)) {
    columns <- as_atomic(columns, "string")
    if (!is.character(columns) || anyNA(columns)) {
      abort("`.columns` must be an array of column names")
    }
  }
  format <- args[[".format"]] %||% "records"
  if (!is_scalar_string(format) || !format %in% c("records", "csv", "markdown")) {
    abort("`.format` must be \"records\", \"csv\" or \"markdown\"")
  }
  list(limit = as.integer(limit), offset = offset, columns = columns, format = format)
}

shape_rows <- function(df, req) {
  total <- nrow(df)
  if (!is.null(req$columns)) {
    unknown <- setdiff(req$columns, names(df))
    if (length(unknown) > 0L) {
      abort("`.columns` names columns that the result does not have: ",
            paste(unknown, collapse = ", "), "; its columns are: ",
            paste(names(df), collapse = ", "))
    }
    df <- df[, req$columns, drop = FALSE]
  }
  first <- min(req$offset, total)
  last <- min(req$offset + req$limit, total)
  rows <- df[seq_len(last - first) + first, , drop = FALSE]
  structured <- list(
    total_rows = total,
    offset = as.integer(req$offset),
    limit = req$limit,
    returned_rows = nrow(rows),
    columns = I(names(rows)),
    rows = rows
  )
  if (req$format == "records") {
    return(tool_result(structured_content = structured))
  }
  summary <- if (nrow(rows) == 0L) {
    paste0("No rows returned (offset ", req$offset, ") of ", total, " in total.")
  } else {
    paste0("Rows ", first + 1L, " to ", last, " of ", total, ".")
  }
  table <- if (req$format == "csv") rows_csv(rows) else rows_markdown(rows)
  tool_result(content = list(content_text(summary), content_text(table)),
              structured_content = structured)
}

has_row_names <- function(df) is.character(attr(df, "row.names"))

rows_csv <- function(df) {
  con <- textConnection("csv_lines", "w", local = TRUE)
  on.exit(close(con))
  utils::write.csv(df, con, row.names = has_row_names(df), na = "")
  paste(textConnectionValue(con), collapse = "\n")
}

rows_markdown <- function(df) {
  cells <- lapply(df, function(col) {
    text <- if (is.numeric(col)) format(col, trim = TRUE, digits = 7L) else as.character(col)
    text[is.na(col)] <- ""
    gsub("|", "\\|", gsub("[\r\n]+", " ", text), fixed = TRUE)
  })
  header <- names(df)
  if (has_row_names(df)) {
    cells <- c(list(row.names(df)), cells)
    header <- c("", header)
  }
  line <- function(x) paste0("| ", paste(x, collapse = " | "), " |")
  body <- if (nrow(df) > 0L) {
    vapply(seq_len(nrow(df)), function(i) line(vapply(cells, `[`, "", i)), character(1))
  }
  paste(c(line(header), line(rep("---", length(header))), body), collapse = "\n")
}
