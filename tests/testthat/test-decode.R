# JSON to R (RULES J6) and the typed vectors made from decoded values for
# package tools (R8.3) and ellmer tools (E8): R/decode.R, the bridge's
# rust/mcplite-r/src/decode.rs.

test_that("J6.1: json_decode() maps JSON as tool arguments are mapped", {
  x <- json_decode(paste0(
    '{"i":3,"z":-0,"d":3.0,"e":1e2,"big":2147483648,"min":-2147483648,"max":-2147483647,',
    '"inf":1e400,"ninf":-1e400,"s":"caf\\u00e9","lone":"a\\ud800b","pair":"\\ud83d\\ude00",',
    '"t":true,"n":null,"o":{},"a":[],"l":[1,"x",null,[2]]}'
  ))
  expect_identical(names(x), c("i", "z", "d", "e", "big", "min", "max", "inf", "ninf", "s", "lone",
                               "pair", "t", "n", "o", "a", "l"))
  expect_identical(x$i, 3L)
  expect_identical(x$z, 0L)
  expect_identical(x$d, 3)
  expect_identical(x$e, 100)
  expect_identical(x$big, 2147483648)
  expect_identical(x$min, -2147483648)
  expect_identical(x$max, -2147483647L)
  expect_identical(x$inf, Inf)
  expect_identical(x$ninf, -Inf)
  expect_identical(x$s, "caf\u00e9")
  expect_identical(Encoding(x$s), "UTF-8")
  # a lone surrogate escape is U+FFFD, the rest of the string is kept
  expect_identical(x$lone, "a\ufffdb")
  expect_identical(x$pair, "\U0001F600")
  expect_identical(x$t, TRUE)
  expect_true("n" %in% names(x))
  expect_null(x$n)
  expect_identical(x$o, structure(list(), names = character()))
  expect_identical(x$a, list())
  expect_identical(x$l, list(1L, "x", NULL, list(2L)))
})

test_that("J6.2: json_decode() refuses U+0000 and text that is not one JSON value", {
  expect_error(json_decode('{"a":"\\u0000"}'), "U\\+0000", class = "mcplite_error_json")
  expect_error(json_decode('{"\\u0000":1}'), "U\\+0000", class = "mcplite_error_json")
  expect_error(json_decode('{"a":1} x'), "trailing characters", class = "mcplite_error_json")
  expect_error(json_decode('{"a":{"b":1,"b":2}}'), 'member name "b" twice', class = "mcplite_error_json")
  for (bad in c("", "{", "NaN", "[1,]", "'x'", "// c\n{}")) {
    expect_error(json_decode(bad), class = "mcplite_error_json")
  }
})

test_that("R8.3: typed values become atomic vectors of their type, or stay as they are", {
  expect_identical(as_atomic(list(1L, 2.5, NULL), "number"), c(1, 2.5, NA))
  expect_identical(as_atomic(list(1L, 2L), "number"), c(1, 2))
  expect_identical(as_atomic(list(3, NULL, -2147483647), "integer"), c(3L, NA, -2147483647L))
  expect_identical(as_atomic(3, "integer"), 3L)
  expect_identical(as_atomic(3L, "number"), 3)
  expect_identical(as_atomic(list("a", NULL), "string"), c("a", NA))
  expect_identical(as_atomic(list(TRUE, NULL), "boolean"), c(TRUE, NA))
  expect_identical(as_atomic(list(NULL, NULL), "string"), c(NA_character_, NA_character_))
  # an empty array is a zero-length vector of the type
  expect_identical(as_atomic(list(), "integer"), integer())
  expect_identical(as_atomic(list(), "string"), character())
  # values that do not fit the type are passed on unchanged
  for (misfit in list(list(1L, "a"), list(2.5), list(2147483648), list(Inf), list(TRUE))) {
    expect_identical(as_atomic(misfit, "integer"), misfit)
  }
  expect_identical(as_atomic(list(1L, "a"), "string"), list(1L, "a"))
  expect_identical(as_atomic(list(1L), "boolean"), list(1L))
  expect_identical(as_atomic(list(list(1L)), "number"), list(list(1L)))
  expect_identical(as_atomic("a", "number"), "a")
  # no type, or no array: unchanged
  expect_identical(as_atomic(list(1L, "a"), "object"), list(1L, "a"))
  expect_identical(as_atomic(NULL, "number"), NULL)
  expect_identical(as_atomic(list(a = 1L)[0], "number"), numeric())
})

test_that("E8: lenient conversion turns misfits into NA and truncates doubles", {
  expect_identical(as_atomic(list(TRUE, NULL, "x"), "boolean", lenient = TRUE), c(TRUE, NA, NA))
  expect_identical(
    as_atomic(list(1L, 2.9, "3", NULL, 1e12, -2147483648), "integer", lenient = TRUE),
    c(1L, 2L, NA, NA, NA, NA)
  )
  expect_identical(as_atomic(list(1L, 2.5, FALSE), "number", lenient = TRUE), c(1, 2.5, NA))
  expect_identical(as_atomic(list("a", 1L, list("b"), c("c", "d")), "string", lenient = TRUE),
                   c("a", NA, NA, "c"))
  expect_identical(as_atomic(list(), "boolean", lenient = TRUE), logical())
  expect_identical(json_na("integer"), NA_integer_)
  expect_identical(json_na("string"), NA_character_)
  expect_null(json_na("object"))
})

test_that("R8.3: untyped values are simplified as jsonlite simplifies", {
  expect_identical(simplify_json(list(TRUE, FALSE)), c(TRUE, FALSE))
  expect_identical(simplify_json(list(1L, NULL, 2.5)), c(1, NA, 2.5))
  expect_identical(simplify_json(list(1L, NULL)), c(1L, NA))
  expect_identical(simplify_json(list("a", NULL)), c("a", NA))
  expect_identical(simplify_json(list(1L, "a")), list(1L, "a"))
  expect_identical(simplify_json(list(NULL, NULL)), list(NULL, NULL))
  expect_identical(
    simplify_json(list(list(a = 1L, b = "x"), list(a = 2L))),
    data.frame(a = 1:2, b = c("x", NA), stringsAsFactors = FALSE)
  )
  expect_identical(simplify_json(list(k = list(1L, 2L), m = NULL)), list(k = 1:2, m = NULL))
  # against jsonlite itself (which, unlike R8.3, turns [1,"a"] into c("1", "a"))
  for (json in c('[true,false]', '[1,null,2.5]', '["a",null]', '{"k":[1,2]}',
                 '[{"a":1,"b":"x"},{"a":2}]', '[[1,2],[3]]')) {
    expect_equal(simplify_json(json_decode(json)), jsonlite::fromJSON(json), info = json)
  }
})
