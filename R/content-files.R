# Helpers that read and encode what the content constructors (R/content.R)
# deliberately leave to the tool author: image and audio files, and plots
# drawn on a PNG device. They return blocks made by content_image() and
# content_audio(), so tool_result() treats them like any other block.

#' Image, audio and plot content from files and plotting code
#'
#' @description
#' The [content constructors][content-blocks] take data that is already
#' base64-encoded and never read files. These helpers do that work for the
#' common cases and return the same blocks:
#'
#' * `content_image_file()` reads an image file and returns a
#'   [content_image()] block.
#' * `content_audio_file()` reads an audio file and returns a
#'   [content_audio()] block.
#' * `content_plot()` evaluates plotting code on a PNG device of the given
#'   size and returns the picture as a [content_image()] block.
#'
#' The data is base64-encoded without line breaks, as MCP expects.
#'
#' @details
#' The MIME type is taken from the file's first bytes when they match a
#' known format (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, AVIF, HEIC; WAV, MP3,
#' AAC, Ogg, FLAC, MP4 audio, WebM, AIFF, MIDI), otherwise from the file
#' extension (also `.svg` for SVG images). Give `mime_type` to set it
#' yourself. A file whose bytes show the other kind of media (an image given
#' to `content_audio_file()`, say) is refused.
#'
#' The whole file is sent. Every byte travels through the protocol and counts
#' against the model's context, so keep images small; `content_plot()` makes
#' that easy with `width` and `height`. Reading a path chosen by the model is
#' a security decision: check that it lies where the tool may read (see
#' `vignette("write-tools")`).
#'
#' `content_plot()` opens a [png()] device (Cairo-based when R has Cairo
#' support), evaluates `code`, and closes the device again, restoring the
#' device that was current before. Base graphics drawn by `code` end up in
#' the image, as do `ggplot2`, `lattice` and recorded plots and `grid`
#' grobs returned as `code`'s visible value (they are printed or drawn for
#' you). When `code` draws several pages, the last one is kept.
#'
#' @param path Path of the file to read.
#' @param mime_type `NULL` to detect the MIME type (see Details), or the
#'   MIME type as a non-empty string.
#' @param code Plotting code, evaluated where `content_plot()` is called
#'   with the PNG device current, for example `hist(x)` or a block
#'   `{ plot(x, y); abline(fit) }`.
#' @param width,height Size of the PNG image in pixels: whole numbers from 16
#'   to 4096.
#' @param res Resolution in pixels per inch, which sets the size of text and
#'   symbols: a number from 36 to 600.
#' @inheritParams content-blocks
#'
#' @return A content block (class `"mcplite_content"`) of type `"image"` or
#'   `"audio"` for [tool_result()].
#'
#' @seealso [content_image()], [content_audio()], [tool_result()]
#' @examples
#' # A plot as an image block.
#' block <- content_plot(hist(faithful$eruptions, main = "Eruptions"), width = 480, height = 320)
#' block
#'
#' # A tool returning it, with a text summary for clients that show no images.
#' eruptions <- tool(
#'   function(breaks = 20L) {
#'     tool_result(list(
#'       content_text("Histogram of the Old Faithful eruption times (minutes)."),
#'       content_plot(hist(faithful$eruptions, breaks = breaks, main = NULL), 480, 320)
#'     ))
#'   },
#'   name = "eruptions",
#'   description = "Histogram of the Old Faithful eruption times, as a PNG image.",
#'   arguments = list(breaks = type_integer("Number of bins.", required = FALSE))
#' )
#'
#' # Files: the MIME type comes from the file's signature.
#' path <- tempfile(fileext = ".png")
#' png(path, width = 64, height = 64)
#' par(mar = c(0, 0, 0, 0))
#' plot.new()
#' rect(0, 0, 1, 1, col = "steelblue")
#' invisible(dev.off())
#' content_image_file(path)
#' @name content-files
NULL

#' @rdname content-files
#' @export
content_image_file <- function(path, mime_type = NULL, annotations = list(), meta = list()) {
  media <- read_media_file(path, mime_type, "image")
  content_image(media$data, media$mime_type, annotations = annotations, meta = meta)
}

#' @rdname content-files
#' @export
content_audio_file <- function(path, mime_type = NULL, annotations = list(), meta = list()) {
  media <- read_media_file(path, mime_type, "audio")
  content_audio(media$data, media$mime_type, annotations = annotations, meta = meta)
}

#' @rdname content-files
#' @export
content_plot <- function(code, width = 640, height = 480, res = 96,
                         annotations = list(), meta = list()) {
  check_required(code, "plotting code such as `hist(x)`.")
  check_number_whole(width, min = 16, max = 4096, what = "a whole number of pixels from 16 to 4096")
  check_number_whole(height, min = 16, max = 4096, what = "a whole number of pixels from 16 to 4096")
  check_number(res, min = 36, max = 600, what = "a number from 36 to 600 (pixels per inch)")
  if (!isTRUE(capabilities("png"))) {
    abort(
      "content_plot() needs a PNG device, but this R has none ",
      "(`capabilities(\"png\")` is FALSE). Install R with Cairo or libpng support."
    )
  }
  device <- plot_device(width, height, res)
  on.exit(device$close(), add = TRUE)
  device$open()
  value <- withVisible(code)
  if (value$visible) {
    draw_plot_object(value$value)
  }
  bytes <- device$close()
  if (is.null(bytes)) {
    abort_arg("`code` drew nothing: no plot was made on the PNG device.")
  }
  content_image(base64_plain(bytes), "image/png", annotations = annotations, meta = meta)
}

# A PNG device of our own, opened on demand: `open()` opens it (in a new
# temporary file) and makes it current; `close()` closes it if it is still
# open, makes the device that was current before current again, deletes the
# file and returns its bytes, or NULL when nothing was drawn (no page was
# started, so the device wrote no file). Both may be called more than once.
plot_device <- function(width = 640, height = 480, res = 96) {
  file <- NULL
  device <- 1L
  previous <- 1L
  open <- function() {
    if (!is.null(file)) {
      return(invisible())
    }
    previous <<- grDevices::dev.cur()
    file <<- tempfile("mcplite-plot-", fileext = ".png")
    type <- if (isTRUE(capabilities("cairo"))) "cairo" else getOption("bitmapType")
    grDevices::png(file, width = width, height = height, res = res, type = type)
    device <<- grDevices::dev.cur()
    invisible()
  }
  close <- function() {
    if (is.null(file)) {
      return(NULL)
    }
    path <- file
    file <<- NULL
    on.exit(unlink(path), add = TRUE)
    if (device > 1L && device %in% grDevices::dev.list()) {
      grDevices::dev.off(device)
    }
    if (previous > 1L && previous %in% grDevices::dev.list()) {
      grDevices::dev.set(previous)
    }
    size <- file.size(path)
    if (is.na(size) || size == 0) NULL else readBin(path, "raw", size)
  }
  list(open = open, close = close)
}

# Plot objects that draw when printed (ggplot2, lattice, recorded plots) or
# with grid.draw() (grid grobs and gtables).
draw_plot_object <- function(x) {
  if (inherits(x, c("ggplot", "trellis", "recordedplot"))) {
    print(x)
  } else if (inherits(x, "grob")) {
    grid::grid.draw(x)
  }
  invisible()
}

# base64 without the line breaks jsonlite::base64_enc() puts in.
base64_plain <- function(bytes) {
  gsub("[\r\n]", "", jsonlite::base64_enc(bytes))
}

# Read `path` and work out its MIME type. `kind` is "image" or "audio".
# Returns list(data = <base64>, mime_type = <string>).
read_media_file <- function(path, mime_type, kind) {
  check_string(path, allow_empty = FALSE, what = "a file path (a single string)")
  if (!is.null(mime_type)) {
    check_string_field(mime_type, "mime_type", nonempty = TRUE, null_ok = TRUE)
  }
  shown <- encodeString(path, quote = "\"")
  if (dir.exists(path)) {
    abort_arg("`path` must be a file, but ", shown, " is a directory.")
  }
  if (!file.exists(path)) {
    abort_arg("`path` must be an existing file, but ", shown, " does not exist.")
  }
  size <- file.size(path)
  if (is.na(size)) {
    abort_arg("`path` (", shown, ") could not be read: its size is unknown.")
  }
  if (size == 0) {
    abort_arg("`path` (", shown, ") is an empty file, not ", article(kind), " ", kind, " file.")
  }
  bytes <- tryCatch(
    readBin(path, "raw", size),
    error = function(e) abort_arg("`path` (", shown, ") could not be read: ", conditionMessage(e)),
    warning = function(w) abort_arg("`path` (", shown, ") could not be read: ", conditionMessage(w))
  )
  if (is.null(mime_type)) {
    mime_type <- detect_mime_type(bytes, path, kind, shown)
  }
  list(data = base64_plain(bytes), mime_type = mime_type)
}

# MIME type from the first bytes, else from the extension; errors when the
# bytes show the other kind of media or nothing can be told.
detect_mime_type <- function(bytes, path, kind, shown) {
  sniffed <- sniff_media(bytes)
  if (!is.null(sniffed)) {
    if (!startsWith(sniffed$mime, paste0(kind, "/"))) {
      other <- sub("/.*", "", sniffed$mime)
      abort_arg(
        "`path` (", shown, ") holds ", other, " data (", sniffed$name, "), not ",
        if (kind == "image") "an image" else "audio", ". ",
        "Use content_", other, "_file() for it."
      )
    }
    return(sniffed$mime)
  }
  ext <- file_extension(path)
  by_ext <- media_extensions[[kind]][ext]
  if (nzchar(ext) && !is.na(by_ext)) {
    return(unname(by_ext))
  }
  abort_arg(
    "Could not tell the ", kind, " format of `path` (", shown, "): its first bytes match no ",
    "known ", kind, " format and ",
    if (nzchar(ext)) paste0("its extension \".", ext, "\" is not a known one") else "it has no extension",
    ". Supply `mime_type`, e.g. `mime_type = \"", if (kind == "image") "image/png" else "audio/wav", "\"`."
  )
}

file_extension <- function(path) {
  base <- basename(path)
  if (!grepl("\\.[[:alnum:]]+$", base)) {
    return("")
  }
  tolower(sub("^.*\\.", "", base))
}

media_extensions <- list(
  image = c(
    png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", jpe = "image/jpeg",
    gif = "image/gif", webp = "image/webp", bmp = "image/bmp", tif = "image/tiff",
    tiff = "image/tiff", ico = "image/x-icon", avif = "image/avif", heic = "image/heic",
    heif = "image/heif", svg = "image/svg+xml"
  ),
  audio = c(
    wav = "audio/wav", mp3 = "audio/mpeg", aac = "audio/aac", m4a = "audio/mp4",
    ogg = "audio/ogg", oga = "audio/ogg", opus = "audio/ogg", flac = "audio/flac",
    weba = "audio/webm", webm = "audio/webm", aif = "audio/aiff", aiff = "audio/aiff",
    mid = "audio/midi", midi = "audio/midi"
  )
)

# The format whose signature starts `bytes`: list(mime, name), or NULL.
sniff_media <- function(bytes) {
  n <- length(bytes)
  at <- function(offset, sig) {
    sig <- if (is.character(sig)) charToRaw(sig) else as.raw(sig)
    n >= offset + length(sig) && identical(bytes[offset + seq_along(sig)], sig)
  }
  found <- function(mime, name) list(mime = mime, name = name)
  if (at(0, c(0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A))) return(found("image/png", "PNG"))
  if (at(0, c(0xFF, 0xD8, 0xFF))) return(found("image/jpeg", "JPEG"))
  if (at(0, "GIF87a") || at(0, "GIF89a")) return(found("image/gif", "GIF"))
  if (at(0, "RIFF") && at(8, "WEBP")) return(found("image/webp", "WebP"))
  if (at(0, "RIFF") && at(8, "WAVE")) return(found("audio/wav", "WAV"))
  if (at(0, "BM") && n >= 26) return(found("image/bmp", "BMP"))
  if (at(0, c(0x49, 0x49, 0x2A, 0x00)) || at(0, c(0x4D, 0x4D, 0x00, 0x2A))) {
    return(found("image/tiff", "TIFF"))
  }
  if (at(0, c(0x00, 0x00, 0x01, 0x00)) && n >= 22) return(found("image/x-icon", "ICO"))
  if (at(4, "ftyp")) {
    brand <- if (n >= 12 && all(bytes[9:12] != as.raw(0))) rawToChar(bytes[9:12]) else ""
    if (brand %in% c("avif", "avis")) return(found("image/avif", "AVIF"))
    if (brand %in% c("heic", "heix", "mif1", "msf1")) return(found("image/heic", "HEIC"))
    if (brand %in% c("M4A ", "M4B ")) return(found("audio/mp4", "MP4"))
  }
  if (at(0, "OggS")) return(found("audio/ogg", "Ogg"))
  if (at(0, "fLaC")) return(found("audio/flac", "FLAC"))
  if (at(0, "ID3")) return(found("audio/mpeg", "MP3"))
  if (at(0, "MThd")) return(found("audio/midi", "MIDI"))
  if (at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC"))) return(found("audio/aiff", "AIFF"))
  if (at(0, c(0x1A, 0x45, 0xDF, 0xA3))) return(found("audio/webm", "WebM"))
  if (n >= 2 && bytes[1] == as.raw(0xFF)) {
    b2 <- as.integer(bytes[2])
    # ADTS (AAC): 12 sync bits and layer 00; MPEG audio (MP3): 11 sync bits.
    if (bitwAnd(b2, 0xF6) == 0xF0) return(found("audio/aac", "AAC"))
    if (bitwAnd(b2, 0xE0) == 0xE0 && bitwAnd(b2, 0x06) != 0) return(found("audio/mpeg", "MP3"))
  }
  if (is_svg(bytes)) return(found("image/svg+xml", "SVG"))
  NULL
}

# SVG is text: it starts with `<` (after a byte order mark and white space)
# and has an `<svg` element near the start (after an XML declaration,
# comments or a doctype).
is_svg <- function(bytes) {
  head <- bytes[seq_len(min(length(bytes), 1024L))]
  if (length(head) >= 3L && identical(head[1:3], as.raw(c(0xEF, 0xBB, 0xBF)))) {
    head <- head[-(1:3)]
  }
  space <- as.raw(c(0x20, 0x09, 0x0A, 0x0D))
  first <- which(!head %in% space)[1L]
  !is.na(first) && head[first] == charToRaw("<") &&
    length(grepRaw("<svg", head, fixed = TRUE)) > 0L
}
