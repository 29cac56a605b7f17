# matrix_to_list() (R/matrix.R).

test_that("a named matrix keeps its names in JSON", {
  m <- matrix(c(1, -0.85, -0.85, 1), 2, dimnames = list(c("mpg", "cyl"), c("mpg", "cyl")))
  # today's behaviour, as jsonlite: names dropped
  expect_identical(tool_result(structured_content = list(cor = m))$content[[1]]$text,
                   '{"cor":[[1,-0.85],[-0.85,1]]}')
  expect_identical(
    tool_result(structured_content = list(cor = matrix_to_list(m)))$content[[1]]$text,
    '{"cor":{"mpg":{"mpg":1,"cyl":-0.85},"cyl":{"mpg":-0.85,"cyl":1}}}'
  )
})

test_that("by = 'column', missing names, tables and cell types", {
  m <- matrix(1:6, 2, dimnames = list(c("a", "b"), c("x", "y", "z")))
  expect_identical(payload_json(matrix_to_list(m)), '{"a":{"x":1,"y":3,"z":5},"b":{"x":2,"y":4,"z":6}}')
  expect_identical(payload_json(matrix_to_list(m, by = "column")),
                   '{"x":{"a":1,"b":2},"y":{"a":3,"b":4},"z":{"a":5,"b":6}}')
  # no row names: an array of row objects
  no_rows <- unname(m)
  colnames(no_rows) <- c("x", "y", "z")
  expect_identical(payload_json(matrix_to_list(no_rows)), '[{"x":1,"y":3,"z":5},{"x":2,"y":4,"z":6}]')
  # no names at all: the same as jsonlite
  expect_identical(payload_json(matrix_to_list(unname(m))), payload_json(unname(m)))
  # a single row or column
  expect_identical(payload_json(matrix_to_list(m[1, , drop = FALSE])), '{"a":{"x":1,"y":3,"z":5}}')
  # a two-way table
  tab <- table(g = c("a", "a", "b"), h = c("u", "v", "v"))
  expect_identical(payload_json(matrix_to_list(tab)), '{"a":{"u":1,"v":1},"b":{"u":0,"v":1}}')
  # character, logical and missing cells follow the payload options
  ch <- matrix(c("p", NA, "r", "s"), 2, dimnames = list(c("a", "b"), c("x", "y")))
  expect_identical(payload_json(matrix_to_list(ch)), '{"a":{"x":"p","y":"r"},"b":{"x":null,"y":"s"}}')
  num <- matrix(c(1.23456, NA), 1, dimnames = list("a", c("x", "y")))
  expect_identical(payload_json(matrix_to_list(num)), '{"a":{"x":1.2346,"y":"NA"}}')
  withr::local_options(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE)
  # cells stay scalars, like data-frame cells
  expect_identical(payload_json(matrix_to_list(num)), '{"a":{"x":1.2346,"y":null}}')
})

test_that("matrix_to_list() errors", {
  expect_snapshot(error = TRUE, {
    matrix_to_list(1:3)
    matrix_to_list(data.frame(x = 1))
    matrix_to_list(list(1, 2))
    matrix_to_list(matrix(1:4, 2, dimnames = list(c("a", "a"), NULL)))
    matrix_to_list(matrix(1:4, 2, dimnames = list(c("a", NA), NULL)))
    matrix_to_list(matrix(1:4, 2), by = "diagonal")
  })
})
