# Parity of the Rust payload encoder with the installed jsonlite::toJSON()
# (RULES J1, J2), the fixed encoding (J5) and the payload options (R6).

# ---------------------------------------------------------------------------
# helpers

# All argument combinations the parity tests run: auto_unbox x null x na
# (unset/"null"/"string") x digits (default/NA/I(6)), plus a few other digits.
parity_combos <- function(extra_digits = TRUE) {
  digits <- list(NULL, NA, I(6))
  if (extra_digits) digits <- c(digits, list(0, 2, 7, I(2), I(15), I(17)))
  out <- list()
  for (au in c(TRUE, FALSE)) for (nl in c("null", "list")) {
    for (na in list(NULL, "null", "string")) for (dg in digits) {
      args <- list(auto_unbox = au, null = nl)
      if (!is.null(na)) args$na <- na
      if (!is.null(dg)) args$digits <- dg
      out[[length(out) + 1L]] <- args
    }
  }
  out
}

# Compare json_encode() with jsonlite::toJSON() for one value and one set of
# arguments. Returns NULL when they agree (same bytes, or both error), else
# a description of the difference.
parity_diff <- function(x, args) {
  oracle <- tryCatch(
    {
      r <- do.call(jsonlite::toJSON, c(list(x), args))
      if (length(r) == 1L) as.character(r) else structure("", error = "not one string")
    },
    error = function(e) structure("", error = conditionMessage(e))
  )
  ours <- tryCatch(
    do.call(json_encode, c(list(x), args)),
    error = function(e) structure("", error = conditionMessage(e))
  )
  o_err <- !is.null(attr(oracle, "error"))
  m_err <- !is.null(attr(ours, "error"))
  if (o_err && m_err) {
    return(NULL)
  }
  # jsonlite marks its text "bytes" when it wrote a string so marked: then
  # only the bytes can be compared (identical() never equates a "bytes"
  # string with another)
  same <- if (identical(Encoding(oracle), "bytes")) {
    identical(charToRaw(oracle), charToRaw(ours))
  } else {
    identical(enc2utf8(oracle), ours)
  }
  if (!o_err && !m_err && same) {
    return(NULL)
  }
  paste0(
    "value: ", paste(deparse(x, nlines = 3L), collapse = " "), "\n",
    "args: ", paste(deparse(args), collapse = " "), "\n",
    "jsonlite: ", if (o_err) paste("ERROR", attr(oracle, "error")) else oracle, "\n",
    "mcplite:  ", if (m_err) paste("ERROR", attr(ours, "error")) else ours
  )
}

expect_parity <- function(values, combos = parity_combos()) {
  diffs <- character()
  n <- 0L
  for (x in values) {
    for (args in combos) {
      n <- n + 1L
      d <- parity_diff(x, args)
      if (!is.null(d)) diffs <- c(diffs, d)
    }
  }
  if (length(diffs)) {
    fail(paste0(
      length(diffs), " mismatches out of ", n, " comparisons; first ones:\n",
      paste(utils::head(diffs, 5L), collapse = "\n---\n")
    ))
  } else {
    succeed()
  }
  invisible(n)
}

latin1 <- function(s) {
  x <- iconv(s, "UTF-8", "latin1")
  Encoding(x) <- "latin1"
  x
}

# ---------------------------------------------------------------------------
# hand-picked values

hand_picked <- function() {
  set.seed(1)
  dbl <- list(
    0, -0, 1, -1, 2, pi, -pi, 1 / 3, 2 / 3, 0.1, 0.1 + 0.2, 123456.789, -123456.789, 0.00012345,
    1e-5, -1e-5, 1.5e-5, 1e-4, 0.99999, 0.999995, 9.99995, 0.5, 1.5, 2.5, 0.05, 0.95, 0.35, 0.125,
    0.0625, 1e5, 2147483646.5, 2147483647, 2147483648, 3e9, -3e9, 1e15, 1e16, 1e21, 1e22, 1e300,
    .Machine$double.xmax, .Machine$double.xmin, 5e-324, 2^53, 2^53 + 2, 1e-20, 123456789.123,
    12345678901.123, -12345.6789012345678, 4.35, 1.005, 100, 1e-300, 7e-10, 0.30000000000000004,
    NA_real_, NaN, Inf, -Inf
  )
  vals <- c(
    dbl,
    list(
      c(1.5, NA, NaN, Inf, -Inf), runif(20), rnorm(20) * 1e6, rnorm(10) / 1e6, numeric(0),
      c(a = 1, b = 2), 1:3, c(1L, NA), NA_integer_, integer(0), .Machine$integer.max, -.Machine$integer.max,
      TRUE, FALSE, NA, c(TRUE, NA, FALSE), logical(0),
      "a", "", NA_character_, c("a", NA, ""), character(0), "NA",
      "quote \" backslash \\ slash / </script> tab\t nl\n cr\r bs\b ff\f",
      "\001\002\037\177 ctrl", "caf\u00e9 \u2603 \U0001F600 \u00a0", "<//", "/</",
      latin1("caf\u00e9"), c(latin1("na\u00efve"), "plain"),
      NULL, list(), structure(list(), names = character(0)), list(NULL), list(a = NULL),
      list(list()), list(a = list()), list(1, NULL, list(), NA),
      list(a = 1, b = "x", c = TRUE, d = NULL, e = list(f = 1:2)),
      setNames(list(1, 2, 3, 4), c("a", "a", "", "b")), setNames(list(1, 2), c(NA, "a")),
      setNames(list(1, 2, 3), c("a", "a", "a.1")), setNames(list(1, 2, 3), c("x", "x", "x")),
      setNames(list(1, 2), c("2", "")), setNames(list(1), latin1("cl\u00e9")),
      setNames(list(1), "k\"ey\n</"), list(a = NA, b = NA_real_, c = NA_character_, d = NA_integer_),
      factor(c("a", NA, "b")), factor(character(0)), factor("x"), factor(c("b", "a"), levels = c("b", "a"), ordered = TRUE),
      factor(c("u", "v"), levels = c("u", "v", "w")), factor(latin1("\u00e9t\u00e9")),
      as.Date(c("2020-01-01", NA, "1969-12-31")), as.Date("2024-02-29"), as.Date(character(0)), Sys.Date()[0],
      as.POSIXct(c("2020-01-01 10:00:00", NA), tz = "UTC"), as.POSIXct("2020-06-01 12:30:45", tz = "UTC"),
      as.POSIXct("2020-06-01 00:00:00", tz = "America/New_York"), as.POSIXct("2020-06-01 12:00:00.25", tz = "UTC"),
      structure(1.6e9, class = c("POSIXct", "POSIXt")), structure(c(1.6e9, 1.6e9 + 60), class = c("POSIXct", "POSIXt"), tzone = "Asia/Tokyo"),
      as.POSIXlt("2020-01-01 12:00:00", tz = "UTC"),
      complex(real = c(1, NA, NaN, Inf), imaginary = c(2, 1, 0, 1)), complex(real = 1 / 3, imaginary = -2), 1i,
      as.raw(1:10), raw(0), as.raw(0:255), as.raw(1:54), as.raw(1:57),
      I(1), I("a"), I(c(1, 2)), I(list(1)), I(NA), I(list(a = 1)), I(factor("a")),
      jsonlite::unbox(1), jsonlite::unbox("a"), jsonlite::unbox(NA), jsonlite::unbox(factor("z")),
      jsonlite::unbox(as.POSIXct("2020-01-01", tz = "UTC")), jsonlite::unbox(data.frame(a = 1, b = "x")),
      list(a = jsonlite::unbox(1), b = I(2), c = 3), list(x = jsonlite::unbox(data.frame(a = 1))),
      jsonlite::toJSON(list(a = 1)), structure("[1,2]", class = "json"), list(j = jsonlite::toJSON(1:2)),
      structure(c("{}", "x"), class = "json"),
      matrix(1:4, 2), matrix(c(1.5, NA, 3, 4), 2), matrix(c("a", NA), 1), matrix(c(TRUE, NA, FALSE, TRUE), 2),
      matrix(1, 1, 1), matrix("x", 1, 1), matrix(numeric(0), 0, 2), matrix(character(0), 2, 0),
      matrix(1:6, 2, dimnames = list(c("a", "b"), NULL)), matrix(list(1, 2, "a", NULL), 2),
      matrix(list(list(1, 2), "a"), 1), array(1:24, c(2, 3, 4)), array(1:2, c(1, 1, 2)), array(1:3), array(1),
      array(integer(0), c(0, 2, 2)), array(integer(0), c(2, 0, 2)), array(1:4, c(2, 2, 0)),
      matrix(complex(real = 1:4, imaginary = 1), 2), list(m = matrix(1:4, 2)),
      structure(1:4, dim = c(2, 2), class = c("foo", "matrix")),
      data.frame(a = c(1, NA), b = c("x", NA), f = factor(c("u", NA)), l = c(TRUE, NA), i = c(NA, 2L)),
      data.frame(a = 1:2, row.names = c("r1", "r2")), data.frame(a = 1:2, row.names = c("1", "2")),
      data.frame(a = 1, `_row` = 2, check.names = FALSE, row.names = "r"),
      data.frame(x = c(1.123456, Inf, -Inf, NaN, NA)), data.frame(a = integer(0)), data.frame(),
      data.frame(x = 1:3)[, 0, drop = FALSE],
      data.frame(d = as.Date(c(NA, "2020-01-02")), p = as.POSIXct(c("2020-01-01 10:00:00", NA), tz = "UTC")),
      data.frame(c = complex(real = c(1, NA), imaginary = 0)), data.frame(r = I(list(as.raw(1:3), as.raw(2)))),
      structure(list(a = 1:2), class = "data.frame", row.names = c(NA, -2L)),
      structure(list(1:2), class = "data.frame", row.names = 1:2),
      local({
        d <- data.frame(a = 1:2)
        d$l <- list(1:2, "x")
        d$m <- matrix(c(1, NA, 3, 4), 2)
        d$df <- data.frame(x = c(NA, 1), y = c("p", NA))
        d
      }),
      local({
        d <- data.frame(a = 1:2)
        d$l <- list(a = NA, b = list(x = 1, y = NULL))
        d
      }),
      local({
        d <- data.frame(a = c(1, NA))
        d$l <- list(NA, NULL)
        d
      }),
      local({
        d <- data.frame(a = 1:2, b = c(TRUE, NA))
        names(d) <- c("", NA)
        d
      }),
      local({
        d <- data.frame(a = 1:2, b = c(TRUE, NA))
        names(d) <- c("x", "x")
        d
      }),
      local({
        d <- data.frame(a = c(1.5, NA))
        d$r <- as.raw(c(1, 255))
        d
      }),
      data.frame(s = c("caf\u00e9", latin1("na\u00efve")), stringsAsFactors = FALSE),
      data.frame(s = c("a", "b"), stringsAsFactors = TRUE),
      list(df = data.frame(a = c(1, NA)), v = c(NA, 1)),
      function(x) x + 1, function(x, y = 2) {
        z <- x * y
        z
      }, list(f = function() NULL),
      ts(1:3), structure(list(a = 1), class = c("foo", "list")), structure(1, class = c("foo", "Date")),
      structure(1:2, class = c("foo", "numeric")), structure(1, class = c("foo", "AsIs")),
      as.pairlist(list(a = 1, b = "x")),
      # errors in jsonlite, errors here
      new.env(), structure(1, class = "foo"), structure(list(a = 1), class = "foo"), table(1:3),
      as.difftime(1, units = "secs"), quote(x), quote(f(x)), expression(1), list(a = new.env()),
      structure(1:3, class = "scalar"), list(a = structure(1:3, class = "scalar")),
      structure(1, class = c("AsIs", "foo")), structure(1, class = c("foo", "bar"))
    )
  )
  vals
}

test_that("json_encode() matches jsonlite::toJSON() on hand-picked values", {
  withr::local_timezone("Europe/Berlin")
  vals <- hand_picked()
  expect_gt(length(vals), 200)
  n <- expect_parity(vals)
  expect_gt(n, 10000)
})

test_that("json_encode() matches jsonlite for S4 objects", {
  setClass("McpliteTestS4", representation(x = "numeric"), where = environment())
  setClass("McpliteTestNum", contains = "numeric", where = environment())
  expect_parity(list(new("McpliteTestS4", x = 1), new("McpliteTestNum", c(1.5, 2))))
  expect_error(json_encode(new("McpliteTestS4", x = 1)), "S4 class")
})

test_that("strings that are not valid UTF-8 are encoded as jsonlite encodes them", {
  skip_if_not(l10n_info()[["UTF-8"]], "needs a UTF-8 session")
  marked <- function(s, enc) {
    Encoding(s) <- enc
    s
  }
  bad <- "caf\xe9"
  values <- list(
    bad, c(bad, "ok", NA), marked(bad, "UTF-8"), marked("\x80\x81\x8d\x9f\xa0 \xe9", "latin1"),
    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x28\xa1", "a\xff\xfeb\xc3\xa9\xe2\x82",
    "\xef\xbf\xbf", "\xf8\x88\x80\x80\x80",
    setNames(list(1, 2), c(bad, "b\xff")), setNames(list(1), marked("k\xe9", "UTF-8")),
    as.pairlist(setNames(list(1), bad)), setNames(c(1, 2), c(bad, "x")),
    factor(c(bad, "x")), data.frame(a = c(bad, "z")), setNames(data.frame(1), bad),
    data.frame(a = 1:2, row.names = c(bad, "r")),
    matrix(c(bad, "b\xff"), 1), list(list(bad)), I(bad), jsonlite::unbox(bad),
    structure(bad, class = "json")
  )
  expect_parity(values, parity_combos(extra_digits = FALSE))
  # byte for byte: each invalid byte as <xx>, in values and in names
  expect_identical(charToRaw(json_encode(bad)), charToRaw('"caf<e9>"'))
  expect_identical(json_encode(setNames(list(1L), bad)), '{"caf<e9>":1}')
  expect_identical(json_encode(factor(bad), auto_unbox = FALSE), '["caf<e9>"]')
  # R reads latin1 as Windows-1252
  expect_identical(json_encode(marked("\x80", "latin1")), '"\u20ac"')
  # marked UTF-8 although it is not: jsonlite keeps the byte, so does the encoder
  expect_identical(charToRaw(json_encode(marked(bad, "UTF-8"))), as.raw(c(0x22, 0x63, 0x61, 0x66, 0xe9, 0x22)))
  expect_identical(json_encode_raw(bad), charToRaw('"caf<e9>"'))
})

test_that("strings that are not valid UTF-8 follow jsonlite in the C locale too", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "l1 <- function(s) { Encoding(s) <- 'latin1'; s }",
    "u8 <- function(s) { Encoding(s) <- 'UTF-8'; s }",
    "values <- list('caf\\xe9', 'caf\\xc3\\xa9', u8('caf\\xc3\\xa9'), u8('caf\\xe9'), l1('caf\\xe9'),",
    "  l1('\\x80'), setNames(list(1), 'k\\xe9'), factor('f\\xe9'), data.frame(a = 'd\\xe9'))",
    "same <- vapply(values, function(x) identical(",
    "  charToRaw(enc2utf8(as.character(jsonlite::toJSON(x)))), charToRaw(mcplite:::json_encode(x, auto_unbox = FALSE))",
    "), logical(1))",
    "cat(l10n_info()[['UTF-8']], sum(same), length(same))"
  ), script)
  res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", script), error_on_status = FALSE,
    timeout = 60, env = c("current", LC_ALL = "C", LANG = "C",
                          R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)))
  expect_identical(res$stdout, "FALSE 9 9", info = res$stderr)
})

test_that("unencodable values raise errors that name the class", {
  expect_error(json_encode(new.env()), "environment", class = "mcplite_error")
  expect_error(json_encode(structure(1, class = "foo")), "foo", class = "mcplite_error")
  expect_error(json_encode(as.difftime(1, units = "secs")), "difftime")
  expect_error(json_encode(list(x = list(y = quote(f(x))))), "call")
  y <- "caf\xe9"
  Encoding(y) <- "bytes"
  expect_error(json_encode(setNames(list(1), y)), "bytes")
  expect_error(json_encode(list(y)), "bytes")
})

test_that("strings marked \"bytes\" are written as jsonlite writes them (RULES J1.3)", {
  bytes <- function(s) {
    Encoding(s) <- "bytes"
    s
  }
  latin <- bytes("caf\xe9")
  utf8 <- bytes(enc2utf8("caf\u00e9"))
  escapes <- bytes("<\xff/\"\\\t\001</")
  values <- list(
    latin, utf8, escapes, jsonlite::unbox(latin), structure(latin, class = "json"), factor(latin),
    factor("a", levels = c("a", latin)), factor(c("a", "a"), levels = c("a", latin)),
    I(latin), c(latin, "a"), c(latin, NA), list(latin), list(a = latin), matrix(latin),
    data.frame(a = latin), setNames(1, latin), setNames(list(1), latin), list(jsonlite::unbox(latin))
  )
  n <- expect_parity(values, parity_combos(extra_digits = FALSE))
  expect_gt(n, 100)
  # jsonlite writes the one string's bytes as stored (it joins nothing), and
  # refuses to translate it anywhere else
  expect_identical(charToRaw(json_encode(latin)), charToRaw(as.character(jsonlite::toJSON(latin, auto_unbox = TRUE))))
  expect_identical(charToRaw(json_encode(latin)), as.raw(c(0x22, 0x63, 0x61, 0x66, 0xe9, 0x22)))
  expect_identical(json_encode(utf8), '"caf\u00e9"')
  expect_error(json_encode(latin, auto_unbox = FALSE), "bytes")
  expect_error(json_encode(list(a = latin)), "bytes")
})

# ---------------------------------------------------------------------------
# random nested values

gen_double <- function(n) {
  pool <- function(k) {
    switch(sample(9, 1),
      round(runif(k, -1e3, 1e3), sample(0:6, 1)),
      runif(k),
      rnorm(k) * 10^sample(-8:12, 1),
      sample(c(0, -0, 0.5, 1.5, 2.5, 0.05, 0.95, 1e-5, 1.5e-5, 2^31, 1e15, 1e21, 5e-324), k, TRUE),
      as.numeric(sample(-1e6:1e6, k)),
      exp(rnorm(k, 0, 20)) * sample(c(-1, 1), k, TRUE),
      sample(c(NA, NaN, Inf, -Inf, 1.25), k, TRUE),
      round(rnorm(k) * 1e4, 2),
      {
        # random bit patterns over the whole exponent range
        b <- as.raw(sample(0:255, 8 * k, TRUE))
        v <- readBin(b, "double", n = k, size = 8)
        v[!is.finite(v)] <- 1
        v
      }
    )
  }
  x <- pool(n)
  if (n > 1 && runif(1) < 0.3) x[sample(n, 1)] <- NA
  x
}

gen_string <- function(n) {
  pool <- c(
    "a", "", "NA", "hello world", "quote\"s", "back\\slash", "line\nbreak", "tab\t", "</script>",
    "\001ctl", "caf\u00e9", "\u2603", "\U0001F600", "x/y", "1", "null", "{\"a\":1}", "\u00fcber"
  )
  x <- sample(pool, n, TRUE)
  if (n > 0 && runif(1) < 0.3) x[sample(n, 1)] <- NA
  if (n > 0 && runif(1) < 0.2) x[1] <- latin1("d\u00e9j\u00e0")
  x
}

gen_leaf <- function() {
  n <- sample(c(0, 1, 1, 1, 2, 3, 5), 1)
  switch(sample(22, 1),
    gen_double(n),
    gen_double(n),
    {
      x <- sample(c(-5:5, .Machine$integer.max), n, TRUE)
      if (n > 1) x[sample(n, 1)] <- NA
      x
    },
    sample(c(TRUE, FALSE, NA), n, TRUE),
    gen_string(n),
    factor(sample(c("a", "b", NA, "c d"), n, TRUE)),
    as.Date("2020-01-01") + sample(c(-40000, -1, 0, 366, NA), n, TRUE),
    {
      x <- as.POSIXct("2021-03-28 01:30:00", tz = "UTC") + sample(c(0, 1800, 3600, 0.5, NA, 86400 * 200), n, TRUE)
      attr(x, "tzone") <- sample(c("UTC", "Europe/Berlin", "America/New_York", ""), 1)
      x
    },
    complex(real = gen_double(n), imaginary = sample(c(0, 1, -2.5), n, TRUE)),
    as.raw(sample(0:255, sample(c(0, 3, 60), 1), TRUE)),
    NULL,
    I(gen_double(n)),
    if (n == 1) jsonlite::unbox(gen_string(1)) else jsonlite::unbox(1L),
    jsonlite::toJSON(list(k = n)),
    matrix(gen_double(6), 2),
    matrix(gen_string(4), sample(c(1, 2, 4), 1)),
    matrix(sample(c(TRUE, NA), 1), 1, 1),
    array(sample(1:100, 8), c(2, 2, 2)),
    gen_df(),
    gen_df(),
    list(),
    structure(list(), names = character(0))
  )
}

gen_df <- function() {
  n <- sample(0:4, 1)
  cols <- list(
    a = gen_double(n),
    b = sample(c(1L, NA, 3L), n, TRUE),
    c = gen_string(n),
    d = sample(c(TRUE, FALSE, NA), n, TRUE),
    e = factor(sample(c("x", "y", NA), n, TRUE)),
    f = as.Date("2020-01-01") + sample(c(0, 1, NA), n, TRUE)
  )
  cols <- cols[sample(length(cols), sample(1:4, 1))]
  d <- as.data.frame(cols, stringsAsFactors = FALSE)
  if (n > 0 && runif(1) < 0.25) d$l <- lapply(seq_len(n), function(i) gen_leaf())
  if (n > 0 && runif(1) < 0.15) d$m <- matrix(gen_double(2 * n), n)
  if (n > 0 && runif(1) < 0.2) rownames(d) <- paste0("r", seq_len(n))
  d
}

gen_value <- function(depth = 0) {
  if (depth >= 3 || runif(1) < 0.45) {
    return(gen_leaf())
  }
  k <- sample(0:4, 1)
  items <- lapply(seq_len(k), function(i) gen_value(depth + 1))
  if (runif(1) < 0.6) {
    nms <- sample(c("a", "b", "a", "", NA, "k\u00e9y", "x y", "_row"), k, TRUE)
    names(items) <- nms
  }
  if (runif(1) < 0.1) items <- I(items)
  items
}

test_that("json_encode() matches jsonlite::toJSON() on random nested values", {
  withr::local_timezone("America/Los_Angeles")
  withr::local_seed(20240607)
  values <- lapply(seq_len(2000), function(i) gen_value())
  combos <- parity_combos(extra_digits = FALSE) # 36: auto_unbox x null x na x digits
  digits_of <- function(a) if (is.null(a$digits)) "default" else format(a$digits)
  by_digits <- split(combos, vapply(combos, digits_of, ""))
  expect_length(by_digits, 3)
  # every value under all 12 auto_unbox x null x na combinations, with the
  # three digits settings in turn, so each of the 36 combinations sees
  # about 670 values ...
  n <- 0L
  for (k in seq_along(by_digits)) {
    idx <- seq(k, length(values), by = length(by_digits))
    n <- n + expect_parity(values[idx], by_digits[[k]])
  }
  expect_equal(n, length(values) * 12)
  # ... the first values under all 36, and under other digits values
  expect_parity(values[1:150], combos)
  other <- Filter(function(a) !is.null(a$digits), parity_combos(TRUE))
  other <- other[!vapply(other, function(a) identical(a$digits, NA) || identical(a$digits, I(6)), TRUE)]
  expect_parity(values[1:150], other)
})

# ---------------------------------------------------------------------------
# number formatting against jsonlite's own num_to_char()

test_that("doubles format exactly like jsonlite for many random doubles", {
  withr::local_seed(42)
  bits <- readBin(as.raw(sample(0:255, 8 * 20000, TRUE)), "double", n = 20000, size = 8)
  x <- c(
    bits[is.finite(bits)], runif(5000), rnorm(5000) * 1e5, round(runif(5000) * 1e4, 3),
    round(runif(2000), 1) / 2, (1:2000) / 8, exp(runif(3000, -800, 800))
  )
  for (dg in list(4, NA, 0, 1, 2, 9, 10, 12, I(1), I(6), I(15), I(17))) {
    expected <- as.character(jsonlite::toJSON(x, digits = dg))
    expect_identical(json_encode(x, digits = dg), expected, label = paste("digits", format(dg)))
  }
})

# ---------------------------------------------------------------------------
# fixed encoding (RULES J1.2, J5)

test_that("fixed_json() prints shortest round-trip numbers and never rounds", {
  expect_identical(fixed_json(0.123456789), "0.123456789")
  expect_identical(fixed_json(0.1), "0.1")
  expect_identical(fixed_json(2), "2")
  expect_identical(fixed_json(1L), "1")
  expect_identical(fixed_json(-0), "0")
  expect_identical(fixed_json(1e21), "1e+21")
  expect_identical(fixed_json(1e20), "100000000000000000000")
  expect_identical(fixed_json(1.5e-7), "1.5e-7")
  expect_identical(fixed_json(1e-6), "0.000001")
  expect_identical(fixed_json(1 / 3), "0.3333333333333333")
  expect_identical(fixed_json(2^53 + 2), "9007199254740994")
  expect_identical(fixed_json(c(1.5, 2)), "[1.5,2]")
  expect_identical(fixed_json(list(a = 0.123456789, b = list(c = 1L))), "{\"a\":0.123456789,\"b\":{\"c\":1}}")
  expect_identical(fixed_json(c(NA, NaN, Inf, -Inf)), "[\"NA\",\"NaN\",\"Inf\",\"-Inf\"]")
  expect_identical(fixed_json(NA), "null")
  expect_identical(fixed_json(NULL), "null")
  expect_identical(fixed_json(list()), "[]")
  expect_identical(fixed_json(c(a = "x")), "\"x\"")
  expect_identical(fixed_json(I("x")), "[\"x\"]")
  expect_identical(fixed_json(data.frame(a = c(1.25, NA))), "[{\"a\":1.25},{}]")
  # every double reads back exactly
  withr::local_seed(7)
  x <- c(runif(500), rnorm(500) * 1e10, exp(runif(500, -700, 700)))
  back <- jsonlite::fromJSON(fixed_json(x))
  expect_identical(back, x)
})

test_that("fixed_json() ignores the payload options", {
  withr::local_options(
    mcplite.json.na = "null", mcplite.json.null = "list",
    mcplite.json.auto_unbox = FALSE, mcplite.json.digits = 1
  )
  expect_identical(fixed_json(list(a = 1.2345, b = NULL, c = NA_real_)), "{\"a\":1.2345,\"b\":null,\"c\":\"NA\"}")
})

# ---------------------------------------------------------------------------
# payload options (RULES R6)

test_that("payload_json() follows the options", {
  x <- list(count = 1L, values = c(NA_real_, NaN, Inf, -Inf), rows = data.frame(id = 1L, missing = NA_real_))
  expect_identical(
    payload_json(x),
    "{\"count\":1,\"values\":[\"NA\",\"NaN\",\"Inf\",\"-Inf\"],\"rows\":[{\"id\":1}]}"
  )
  withr::with_options(list(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE), {
    expect_identical(
      payload_json(x),
      "{\"count\":[1],\"values\":[null,null,null,null],\"rows\":[{\"id\":1,\"missing\":null}]}"
    )
  })
  withr::with_options(list(mcplite.json.null = "list"), {
    expect_identical(payload_json(list(a = NULL)), "{\"a\":{}}")
  })
  withr::with_options(list(mcplite.json.digits = NA), {
    expect_identical(payload_json(pi), "3.14159265358979")
  })
  withr::with_options(list(mcplite.json.digits = I(3)), {
    expect_identical(payload_json(c(pi, 12345)), "[3.14,1.23e+04]")
  })
  withr::with_options(list(mcplite.json.digits = 1), {
    expect_identical(payload_json(pi), "3.1")
  })
  expect_identical(payload_json(c(1.123456, 2)), "[1.1235,2]")
})

test_that("payload_options() returns the options and validates them", {
  expect_identical(payload_options(), list(auto_unbox = TRUE, null = "null", na = NULL, digits = NULL))
  withr::with_options(list(mcplite.json.na = "string", mcplite.json.digits = I(4)), {
    o <- payload_options()
    expect_identical(o$na, "string")
    expect_identical(o$digits, I(4))
  })
  bad <- list(
    mcplite.json.null = list("nul", NA_character_, c("null", "list"), 1),
    mcplite.json.na = list("NA", TRUE, c("null", "string")),
    mcplite.json.auto_unbox = list(NA, "yes", c(TRUE, FALSE), 1),
    mcplite.json.digits = list(-1, 1.5, I(0), I(2.5), "4", c(1, 2), Inf, TRUE)
  )
  for (opt in names(bad)) {
    for (v in bad[[opt]]) {
      withr::with_options(setNames(list(v), opt), {
        expect_error(payload_options(), paste0("`", opt, "`"), fixed = TRUE, class = "mcplite_error")
        expect_error(check_payload_options(), paste0("`", opt, "`"), fixed = TRUE, class = "mcplite_error")
        expect_error(payload_json(1), paste0("`", opt, "`"), fixed = TRUE, class = "mcplite_error")
      })
    }
  }
  withr::with_options(list(mcplite.json.na = "NA"), {
    expect_error(payload_options(), "\"null\" or \"string\"", fixed = TRUE)
  })
  for (ok in list(0, 4L, NA, NA_real_, I(1), I(17), 10, 1e7)) {
    withr::with_options(list(mcplite.json.digits = ok), expect_true(check_payload_options()))
  }
})

test_that("json_encode() defaults are the payload defaults", {
  expect_identical(json_encode(list(a = 1, b = NULL, c = NA)), "{\"a\":1,\"b\":null,\"c\":null}")
  expect_identical(json_encode(1, auto_unbox = FALSE), "[1]")
  expect_identical(json_encode(NULL, null = "list"), "{}")
  expect_identical(json_encode(NA, na = "string"), "\"NA\"")
  expect_identical(json_encode(pi, digits = NA), "3.14159265358979")
  expect_identical(json_encode(pi, digits = I(3)), "3.14")
})

test_that("the encoder follows the installed jsonlite version", {
  on.exit(json_flavor(as.character(utils::packageVersion("jsonlite"))), add = TRUE)
  expect_identical(json_flavor(as.character(utils::packageVersion("jsonlite"))),
    if (utils::packageVersion("jsonlite") < "1.8.5") "V1_8_4"
    else if (utils::packageVersion("jsonlite") < "1.8.7") "V1_8_5" else "V1_8_7")
  json_flavor("1.8.4")
  expect_identical(json_encode(0.1, digits = NA), "0.1")
  expect_identical(json_encode(pi, digits = I(20)), "3.14159265358979")
  expect_identical(json_encode(123456789012.123, digits = 4), "123456789012.123")
  json_flavor("1.8.6")
  expect_identical(json_encode(0.1, digits = NA), "0.10000000000000001")
  expect_identical(json_encode(pi, digits = I(20)), "3.1415926535897931")
  json_flavor("2.0.0")
  expect_identical(json_encode(0.1, digits = NA), "0.1")
  expect_identical(json_encode(pi, digits = I(20)), "3.1415926535897931")
  expect_identical(json_encode(123456789012.123, digits = 4), "123456789012.123")
  expect_identical(json_encode(1234567890123.4567, digits = 4), "1234567890123.4568")
})

test_that("json_encode_raw() gives the same bytes without building a string", {
  vals <- list(
    data.frame(a = c(1.5, NA), b = c("caf\u00e9", NA)), list(x = 1:3, y = "</"), pi, NULL,
    factor(c("u", NA)), c(NA, NaN, Inf)
  )
  for (v in vals) {
    expect_identical(json_encode_raw(v), charToRaw(json_encode(v)))
    expect_identical(json_encode_raw(v, auto_unbox = FALSE, na = "null", digits = NA),
      charToRaw(json_encode(v, auto_unbox = FALSE, na = "null", digits = NA)))
  }
  expect_error(json_encode_raw(new.env()), "environment", class = "mcplite_error")
})

test_that("deeply nested values give an error instead of exhausting the stack", {
  deep <- function(d) {
    x <- 1
    for (i in seq_len(d)) x <- list(x)
    x
  }
  expect_identical(json_encode(deep(3)), "[[[1]]]")
  expect_identical(nchar(json_encode(deep(900))), 1801L)
  expect_error(json_encode(deep(100000)), "nested", class = "mcplite_error")
  expect_error(fixed_json(deep(100000)), "nested", class = "mcplite_error")
})

test_that("json_encode() matches jsonlite for tibbles", {
  skip_if_not_installed("tibble")
  tb <- tibble::tibble(a = c(1.5, NA), b = c("x", NA), l = list(1:2, NULL))
  expect_parity(list(tb, tibble::tibble(), list(t = tb), tb[0, ]))
})

test_that("json_encode() follows options that change R's own formatting", {
  withr::local_timezone("UTC")
  x <- as.POSIXct("2020-01-01 10:00:00.123", tz = "UTC")
  withr::with_options(list(digits.secs = 3), expect_parity(list(x, data.frame(t = x))))
  expect_parity(list(x, structure(x, tzone = "Asia/Kolkata")))
})

test_that("json_encode() matches jsonlite for classes from other packages", {
  vals <- list(
    # S3 classes registered with setOldClass() reach their nearest
    # superclass's method ("mts" -> matrix); unregistered ones are dropped
    ts(matrix(1:4, 2)), list(a = ts(matrix(c(1.5, NA), 1)), b = ts(1:3)),
    summary(c(1, 2, 3)), rle(c(1, 1, 2)), y ~ x, numeric_version("1.2.3"),
    as.difftime(5, units = "mins"), table(c("x", "y"))
  )
  if (requireNamespace("hms", quietly = TRUE)) {
    vals <- c(vals, list(hms::hms(c(3600, NA, 59.5)), hms::as_hms("01:02:03"), data.frame(t = hms::hms(c(1, NA)))))
  }
  if (requireNamespace("blob", quietly = TRUE)) {
    vals <- c(vals, list(blob::as_blob(list(as.raw(1:3), NULL)), blob::blob(as.raw(1:60))))
  }
  if (requireNamespace("bit64", quietly = TRUE)) {
    vals <- c(vals, list(bit64::as.integer64(c(1, NA, -5, 2^40)), data.frame(i = bit64::as.integer64(c(1, NA)))))
  }
  if (requireNamespace("data.table", quietly = TRUE)) {
    vals <- c(vals, list(
      data.table::data.table(a = 1:2, b = c("x", NA)), data.table::as.ITime(c("10:00:00", NA)),
      data.table::as.IDate(c("2020-01-01", NA))
    ))
  }
  # sf (heavy, not installed by the project's set-up) is used when present; it
  # is looked up by name so that R CMD check does not count it as a dependency
  # of the tests (it would then query CRAN for it).
  if (nzchar(system.file(package = "sf"))) {
    sf <- function(f) getExportedValue("sf", f)
    nc <- sf("st_read")(system.file("shape/nc.shp", package = "sf"), quiet = TRUE)[1:2, 1:3]
    vals <- c(vals, list(nc, sf("st_geometry")(nc), list(f = nc), sf("st_point")(c(1, 2))))
  }
  expect_parity(vals, parity_combos(extra_digits = FALSE))
})

test_that("out-of-range digits behave like jsonlite's asInteger()", {
  combos <- lapply(list(1e7, 3e9, I(3e9), -2, 2.9), function(d) list(auto_unbox = TRUE, null = "null", digits = d))
  suppressWarnings(expect_parity(list(pi, 1e20 + 5, c(1.5, NA, 1e-7), 123456.789), combos))
})
