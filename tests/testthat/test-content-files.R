# content_image_file(), content_audio_file() and content_plot()
# (R/content-files.R).

decode <- function(block) jsonlite::base64_dec(block$data)

write_bytes <- function(bytes, ext) {
  path <- tempfile(fileext = ext)
  writeBin(as.raw(bytes), path)
  path
}

tiny_png <- function(ext = ".png") {
  path <- tempfile(fileext = ext)
  grDevices::png(path, width = 20, height = 10)
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  grDevices::dev.off()
  path
}

# A short mono 8-bit WAV file.
tiny_wav <- function(ext = ".wav") {
  rate <- 8000L
  samples <- as.raw(rep(c(100L, 150L), 40L))
  con <- rawConnection(raw(0), "wb")
  int <- function(x, size) writeBin(as.integer(x), con, size = size, endian = "little")
  writeBin(charToRaw("RIFF"), con); int(36 + length(samples), 4)
  writeBin(charToRaw("WAVEfmt "), con); int(16, 4); int(1, 2); int(1, 2)
  int(rate, 4); int(rate, 4); int(1, 2); int(8, 2)
  writeBin(charToRaw("data"), con); int(length(samples), 4)
  writeBin(samples, con)
  bytes <- rawConnectionValue(con)
  close(con)
  write_bytes(bytes, ext)
}

test_that("content_image_file() reads, encodes and types an image", {
  path <- tiny_png()
  block <- content_image_file(path, annotations = list(audience = "user"), meta = list(k = "v"))
  expect_s3_class(block, "mcplite_content_image")
  expect_identical(block$mime_type, "image/png")
  expect_identical(decode(block), readBin(path, "raw", file.size(path)))
  expect_false(grepl("[\r\n]", block$data))
  expect_identical(block$annotations$audience, I("user"))
  expect_identical(block$meta, list(k = "v"))
  # the same block the constructor makes from the encoded bytes
  expect_identical(block, content_image(block$data, "image/png",
                                        annotations = list(audience = "user"), meta = list(k = "v")))
})

test_that("long files are base64 without line breaks", {
  bytes <- as.raw(c(0xFF, 0xD8, 0xFF, 0:255, 0:255))
  block <- content_image_file(write_bytes(bytes, ".bin"))
  expect_identical(block$mime_type, "image/jpeg")
  expect_gt(nchar(block$data), 300)
  expect_false(grepl("\n", block$data, fixed = TRUE))
  expect_identical(decode(block), bytes)
})

test_that("the file's signature decides the MIME type, then its extension", {
  # a PNG named .jpg is a PNG
  expect_identical(content_image_file(tiny_png(".jpg"))$mime_type, "image/png")
  sig <- function(bytes, ext = ".bin") content_image_file(write_bytes(bytes, ext))$mime_type
  expect_identical(sig(c(charToRaw("GIF89a"), as.raw(1:10))), "image/gif")
  expect_identical(sig(c(charToRaw("RIFF"), as.raw(c(1, 2, 3, 4)), charToRaw("WEBPVP8 "))), "image/webp")
  expect_identical(sig(c(0x49, 0x49, 0x2A, 0x00, 1:10)), "image/tiff")
  expect_identical(sig(c(0, 0, 0, 0x1C, charToRaw("ftypavif"), as.raw(1:8))), "image/avif")
  svg <- charToRaw('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>')
  expect_identical(sig(svg), "image/svg+xml")
  # unknown bytes: the extension
  expect_identical(sig(charToRaw("not really an image"), ".webp"), "image/webp")
  expect_identical(sig(charToRaw("plain"), ".SVG"), "image/svg+xml")
  # an explicit MIME type wins
  expect_identical(content_image_file(tiny_png(), mime_type = "image/x-custom")$mime_type, "image/x-custom")
})

test_that("content_audio_file() reads and types audio", {
  path <- tiny_wav(".dat")
  block <- content_audio_file(path)
  expect_s3_class(block, "mcplite_content_audio")
  expect_identical(block$mime_type, "audio/wav")
  expect_identical(decode(block), readBin(path, "raw", file.size(path)))
  sig <- function(bytes, ext = ".bin") content_audio_file(write_bytes(bytes, ext))$mime_type
  expect_identical(sig(c(charToRaw("ID3"), as.raw(c(4, 0, 0, 1:10)))), "audio/mpeg")
  expect_identical(sig(c(0xFF, 0xFB, 0x90, 0x64, 1:10)), "audio/mpeg")
  expect_identical(sig(c(0xFF, 0xF1, 0x50, 0x80, 1:10)), "audio/aac")
  expect_identical(sig(c(charToRaw("OggS"), as.raw(1:10))), "audio/ogg")
  expect_identical(sig(c(charToRaw("fLaC"), as.raw(1:10))), "audio/flac")
  expect_identical(sig(c(0, 0, 0, 0x20, charToRaw("ftypM4A "), as.raw(1:8))), "audio/mp4")
  expect_identical(sig(charToRaw("unknown bytes"), ".mp3"), "audio/mpeg")
})

test_that("file errors name the path and the problem", {
  dir <- tempfile("a-dir")
  dir.create(dir)
  empty <- write_bytes(raw(0), ".png")
  unknown <- write_bytes(charToRaw("hello"), ".dat")
  noext <- write_bytes(charToRaw("hello"), "")
  png_file <- tiny_png()
  wav_file <- tiny_wav()
  show <- function(x) basename(x)
  paths <- c(dir = dir, empty = empty, unknown = unknown, noext = noext, png = png_file, wav = wav_file)
  # snapshots show the messages with stable file names
  expect_snapshot(error = TRUE, transform = function(x) {
    for (nm in names(paths)) x <- gsub(paths[[nm]], paste0("<", nm, ">"), x, fixed = TRUE)
    x
  }, {
    content_image_file(file.path(dir, "missing.png"))
    content_image_file(dir)
    content_image_file(empty)
    content_image_file(unknown)
    content_audio_file(noext)
    content_audio_file(png_file)
    content_image_file(wav_file)
    content_image_file(NA_character_)
    content_image_file(png_file, mime_type = "")
  })
})

test_that("content_plot() draws code into a PNG of the requested size", {
  skip_if_not_installed("png")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  before <- grDevices::dev.cur()
  block <- content_plot({
    graphics::par(mar = c(0, 0, 0, 0))
    graphics::plot.new()
    graphics::rect(0, 0, 1, 1, col = "red", border = NA)
  }, width = 300, height = 200)
  expect_s3_class(block, "mcplite_content_image")
  expect_identical(block$mime_type, "image/png")
  expect_false(grepl("[\r\n]", block$data))
  img <- png::readPNG(decode(block))
  expect_identical(dim(img)[1:2], c(200L, 300L))
  # the middle is red
  centre <- img[100, 150, 1:3]
  expect_equal(centre, c(1, 0, 0), tolerance = 0.01)
  # the device is closed and the previous one is current again
  expect_identical(grDevices::dev.cur(), before)
})

test_that("content_plot() draws the plot objects code returns, and keeps the last page", {
  skip_if_not_installed("png")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  # a recorded plot is replayed by printing it
  grDevices::pdf(NULL)
  grDevices::dev.control("enable")
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::rect(0, 0, 1, 1, col = "blue", border = NA)
  recorded <- grDevices::recordPlot()
  grDevices::dev.off()
  img <- png::readPNG(decode(content_plot(recorded, width = 100, height = 100)))
  expect_equal(img[50, 50, 1:3], c(0, 0, 1), tolerance = 0.01)
  # several pages: the last one
  img <- png::readPNG(decode(content_plot({
    graphics::par(mar = c(0, 0, 0, 0))
    graphics::plot.new()
    graphics::rect(0, 0, 1, 1, col = "red", border = NA)
    graphics::plot.new()
    graphics::rect(0, 0, 1, 1, col = "green", border = NA)
  }, width = 50, height = 50)))
  expect_equal(img[25, 25, 1:3], c(0, 1, 0), tolerance = 0.01)
  # a grid grob returned as the value is drawn
  img <- png::readPNG(decode(content_plot(
    grid::rectGrob(gp = grid::gpar(fill = "black", col = NA)),
    width = 40, height = 40
  )))
  expect_equal(img[20, 20, 1:3], c(0, 0, 0), tolerance = 0.01)
})

test_that("content_plot() works as a tool result, through the server", {
  skip_if_not_installed("png")
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  plotter <- tool(function(n = 10L) {
    tool_result(list(
      content_text("A plot."),
      content_plot(graphics::plot(seq_len(n)), width = 320, height = 240)
    ))
  }, "Plots.", name = "plotter", arguments = list(n = type_integer(required = FALSE)))
  res <- mcp_handle(plotter, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = "plotter", arguments = list(n = 5L), `_meta` = list(
      "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities" = list()
    )
  )))
  block <- jsonlite::fromJSON(res, simplifyVector = FALSE)$result$content[[2]]
  expect_identical(block$type, "image")
  expect_identical(block$mimeType, "image/png")
  expect_identical(dim(png::readPNG(jsonlite::base64_dec(block$data)))[1:2], c(240L, 320L))
})

test_that("content_plot() errors: nothing drawn, bad sizes, errors in code", {
  skip_if_not(isTRUE(capabilities("png")), "no PNG device")
  before <- grDevices::dev.cur()
  expect_snapshot(error = TRUE, {
    content_plot(NULL)
    content_plot(1 + 1)
    content_plot(plot(1), width = 10)
    content_plot(plot(1), height = 100.5)
    content_plot(plot(1), res = NA)
    content_plot()
  })
  expect_error(content_plot({
    plot(1)
    stop("drawing failed")
  }), "drawing failed")
  expect_identical(grDevices::dev.cur(), before)
})
