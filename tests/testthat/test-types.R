# RULES R2: type helpers and their schemas.

test_that("every helper returns an object whose class ends in mcplite_type", {
  helpers <- list(
    type_boolean(), type_integer(), type_number(), type_string(),
    type_enum("a"), type_array(type_string()), type_object(),
    type_from_schema('{"type":"string"}'), type_ignore()
  )
  for (h in helpers) {
    cls <- class(h)
    expect_identical(cls[length(cls)], "mcplite_type")
  }
})

test_that("scalar helpers give type then description (R2.3)", {
  expect_identical(schema_json(type_boolean()), '{"type":"boolean"}')
  expect_identical(schema_json(type_integer()), '{"type":"integer"}')
  expect_identical(schema_json(type_number()), '{"type":"number"}')
  expect_identical(schema_json(type_string()), '{"type":"string"}')
  expect_identical(
    schema_json(type_string("A label.")),
    '{"type":"string","description":"A label."}'
  )
  expect_identical(
    schema_json(type_number("Say \"hi\"\n", required = FALSE)),
    '{"type":"number","description":"Say \\"hi\\"\\n"}'
  )
  expect_identical(schema_json(type_boolean("")), '{"type":"boolean","description":""}')
})

test_that("required never appears in a helper's own schema (R2.4)", {
  expect_identical(schema_json(type_integer(required = FALSE)), '{"type":"integer"}')
  expect_false(type_required(type_integer(required = FALSE)))
  expect_true(type_required(type_integer()))
  expect_true(type_required(type_from_schema('{"type":"string"}')))
  expect_false(type_required(type_ignore()))
})

test_that("description and required are checked (R2.2)", {
  for (make in list(type_boolean, type_integer, type_number, type_string)) {
    expect_field_error(make(1), "description")
    expect_field_error(make(NA_character_), "description")
    expect_field_error(make(c("a", "b")), "description")
    expect_field_error(make(required = NA), "required")
    expect_field_error(make(required = "yes"), "required")
    expect_field_error(make(required = c(TRUE, FALSE)), "required")
  }
  expect_field_error(type_enum("a", description = 2), "description")
  expect_field_error(type_enum("a", required = NULL), "required")
  expect_field_error(type_array(type_string(), description = list()), "description")
  expect_field_error(type_array(type_string(), required = 1), "required")
})

test_that("type_enum() maps value types and always gives an array (R2.5)", {
  expect_identical(schema_json(type_enum("only")), '{"type":"string","enum":["only"]}')
  expect_identical(
    schema_json(type_enum(c(a = "x", b = "y"), "Pick one.")),
    '{"type":"string","enum":["x","y"],"description":"Pick one."}'
  )
  expect_identical(
    schema_json(type_enum(factor(c("lo", "hi"), levels = c("hi", "lo")))),
    '{"type":"string","enum":["lo","hi"]}'
  )
  expect_identical(schema_json(type_enum(1:3)), '{"type":"integer","enum":[1,2,3]}')
  expect_identical(schema_json(type_enum(c(0.5, 2))), '{"type":"number","enum":[0.5,2]}')
  expect_identical(schema_json(type_enum(TRUE)), '{"type":"boolean","enum":[true]}')
})

test_that("type_enum() rejects bad values (R2.5)", {
  expect_field_error(type_enum(), "values")
  expect_field_error(type_enum(character()), "values")
  expect_field_error(type_enum(c("a", NA)), "values")
  expect_field_error(type_enum(c(1, NaN)), "values")
  expect_field_error(type_enum(c("a", "b", "a")), "values")
  expect_field_error(type_enum(factor(c("a", "a"))), "values")
  expect_field_error(type_enum(list("a", "b")), "values")
  expect_field_error(type_enum(NULL), "values")
  expect_field_error(type_enum(Sys.Date()), "values")
})

test_that("type_array() nests its items (R2.6)", {
  expect_identical(
    schema_json(type_array(type_integer(), description = "Integer values.")),
    '{"type":"array","items":{"type":"integer"},"description":"Integer values."}'
  )
  # items ignore their own required flag
  expect_identical(
    schema_json(type_array(type_string("s", required = FALSE))),
    '{"type":"array","items":{"type":"string","description":"s"}}'
  )
  expect_identical(schema_json(type_array(type_ignore())), '{"type":"array"}')
  expect_identical(
    schema_json(type_array(type_array(type_enum(c("a", "b"))))),
    '{"type":"array","items":{"type":"array","items":{"type":"string","enum":["a","b"]}}}'
  )
  expect_identical(
    schema_json(type_array(type_from_schema('{"type":"string","minLength":1}'))),
    '{"type":"array","items":{"type":"string","minLength":1}}'
  )
})

test_that("type_array() requires a helper as items (R2.6)", {
  expect_field_error(type_array(), "items")
  expect_field_error(type_array("string"), "items")
  expect_field_error(type_array(list(type = "string")), "items")
  expect_field_error(type_array(NULL), "items")
})

test_that("type_object() schemas follow R2.3 and R2.7", {
  expect_identical(
    schema_json(type_object()),
    '{"type":"object","properties":{},"additionalProperties":false}'
  )
  expect_identical(
    schema_json(type_object(
      .description = "A labeled score.",
      label = type_string(),
      score = type_number(required = FALSE)
    )),
    paste0(
      '{"type":"object","properties":{"label":{"type":"string"},"score":{"type":"number"}},',
      '"required":["label"],"additionalProperties":false,"description":"A labeled score."}'
    )
  )
  # all optional: required omitted; additional properties allowed
  expect_identical(
    schema_json(type_object(a = type_boolean(required = FALSE), .additional_properties = TRUE)),
    '{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":true}'
  )
  # ignored properties are dropped, leaving {}
  expect_identical(
    schema_json(type_object(hidden = type_ignore())),
    '{"type":"object","properties":{},"additionalProperties":false}'
  )
  # nesting and required order follows declaration order
  expect_identical(
    schema_json(type_object(
      z = type_integer(),
      inner = type_object(.required = FALSE, k = type_string()),
      a = type_string()
    )),
    paste0(
      '{"type":"object","properties":{"z":{"type":"integer"},"inner":{"type":"object",',
      '"properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":false},',
      '"a":{"type":"string"}},"required":["z","a"],"additionalProperties":false}'
    )
  )
  expect_false(type_required(type_object(.required = FALSE)))
})

test_that("type_object() validates its arguments (R2.2, R2.7)", {
  # a positional first argument is the description
  expect_field_error(type_object(type_string()), ".description")
  expect_field_error(type_object(.description = 1), ".description")
  expect_field_error(type_object(.required = NA), ".required")
  expect_field_error(type_object(.additional_properties = "no"), ".additional_properties")
  expect_field_error(type_object(NULL, type_string()), "...")
  expect_field_error(type_object(NULL, a = type_string(), type_number()), "...")
  expect_field_error(type_object(a = type_string(), a = type_number()), "...")
  expect_field_error(type_object(a = "string"), "...")
  expect_field_error(type_object(a = list(type = "string")), "...")
})

test_that("type_from_schema() keeps JSON text verbatim (R2.8, J6)", {
  text <- paste0(
    '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",',
    '"$defs":{"pos":{"type":"integer","minimum":1}},',
    '"properties":{"n":{"$ref":"#/$defs/pos"},"tags":{"type":"array","items":{},"default":[]},',
    '"x":{"type":"number","maximum":0.123456789,"default":null}},',
    '"required":["n"],"allOf":[{"if":{"required":["x"]},"then":{"required":["tags"]}}],',
    '"additionalProperties":false}'
  )
  t <- type_from_schema(text)
  expect_identical(schema_json(t), text)
  s <- type_schema(t, "x")
  # J6.1 mapping
  expect_identical(s$properties$tags$items, structure(list(), names = character()))
  expect_identical(s$properties$tags$default, list())
  expect_true("default" %in% names(s$properties$x))
  expect_null(s$properties$x$default)
  expect_identical(s$`$defs`$pos$minimum, 1L)
  expect_identical(s$properties$x$maximum, 0.123456789)
  expect_identical(s$required, list("n"))
  expect_identical(schema_json(type_from_schema("{}")), "{}")
  # read as tool arguments are: a lone surrogate escape is U+FFFD
  expect_identical(type_schema(type_from_schema('{"description":"a\\ud800b"}'), "x")$description, "a\ufffdb")
  expect_identical(
    type_schema(type_from_schema('{"a":1.0,"b":3000000000,"c":2147483647,"d":1e2}'), "x"),
    list(a = 1, b = 3e9, c = 2147483647L, d = 100)
  )
})

test_that("type_from_schema() reads a UTF-8 file (R2.8)", {
  path <- withr::local_tempfile(fileext = ".json")
  writeLines(enc2utf8(c("{", '  "type": "string",', '  "description": "caf\u00e9"', "}")),
             path, useBytes = TRUE)
  t <- type_from_schema(path = path)
  expect_identical(schema_json(t), '{"type":"string","description":"caf\u00e9"}')
})

test_that("type_from_schema() keeps the R shape of a list (R2.8)", {
  t <- type_from_schema(list(type = "string", minLength = 1))
  expect_identical(schema_json(t), '{"type":"string","minLength":1}')
  t <- type_from_schema(list(
    type = "object",
    properties = structure(list(), names = character()),
    required = list()
  ))
  expect_identical(schema_json(t), '{"type":"object","properties":{},"required":[]}')
  expect_identical(schema_json(type_from_schema(structure(list(), names = character()))), "{}")
})

test_that("type_from_schema() reports argument problems (R2.8)", {
  err <- expect_field_error(type_from_schema(), "text")
  expect_match(conditionMessage(err), "`path`", fixed = TRUE)
  err <- expect_field_error(type_from_schema("{}", path = "x.json"), "text")
  expect_match(conditionMessage(err), "`path`", fixed = TRUE)
  expect_field_error(type_from_schema(1), "text")
  expect_field_error(type_from_schema(NA_character_), "text")
  expect_field_error(type_from_schema(c("{}", "{}")), "text")
  expect_field_error(type_from_schema(data.frame(a = 1)), "text")
  expect_field_error(type_from_schema(path = 1), "path")
})

test_that("parse and I/O failures name the argument and carry the reason", {
  err <- expect_field_error(type_from_schema('{"type": '), "text")
  expect_match(conditionMessage(err), "parse", ignore.case = TRUE)
  err <- expect_field_error(type_from_schema('{"a":1} x'), "text")
  expect_match(conditionMessage(err), "trailing characters")
  expect_field_error(type_from_schema('{"a":"\\u0000"}'), "text")
  missing_file <- file.path(tempdir(), "definitely-missing-schema.json")
  err <- expect_field_error(type_from_schema(path = missing_file), "path")
  expect_match(conditionMessage(err), "No such file", fixed = TRUE)
  bad <- withr::local_tempfile(fileext = ".json")
  writeLines("[1, 2", bad)
  expect_field_error(type_from_schema(path = bad), "path")
})

test_that("type_from_schema() requires a JSON object with plain values (R2.8)", {
  expect_field_error(type_from_schema("[]"), "text")
  expect_field_error(type_from_schema('"string"'), "text")
  expect_field_error(type_from_schema("1"), "text")
  expect_field_error(type_from_schema('{"a":1,"a":2}'), "text")
  expect_field_error(type_from_schema(list()), "text")
  expect_field_error(type_from_schema(list("string")), "text")
  expect_field_error(type_from_schema(list(type = "string", f = function() 1)), "text")
  expect_field_error(type_from_schema(list(type = "object", e = list(new.env()))), "text")
  expect_field_error(type_from_schema(list(type = "string", d = data.frame(a = 1))), "text")
  expect_field_error(type_from_schema(list(type = "string", t = type_string())), "text")
  arr <- withr::local_tempfile(fileext = ".json")
  writeLines("[1]", arr)
  expect_field_error(type_from_schema(path = arr), "path")
})

test_that("type_ignore() has no schema and is never required", {
  expect_null(type_schema(type_ignore(), "x"))
  expect_false(type_required(type_ignore()))
})

test_that("numbers in schemas are never rounded (R2.9, J5)", {
  t <- type_from_schema(list(type = "number", minimum = 0.123456789, maximum = 123456.789))
  expect_identical(schema_json(t), '{"type":"number","minimum":0.123456789,"maximum":123456.789}')
  expect_identical(schema_json(type_enum(c(0.123456789, 1))), '{"type":"number","enum":[0.123456789,1]}')
})

test_that("type objects print their schema", {
  expect_output(print(type_string("A label.")), '{"type":"string","description":"A label."}', fixed = TRUE)
  expect_output(print(type_integer(required = FALSE)), "optional")
  expect_output(print(type_ignore()), "omitted")
})

test_that("type_from_schema() handles a UTF-8 BOM and non-UTF-8 marked text", {
  path <- withr::local_tempfile(fileext = ".json")
  writeBin(c(as.raw(c(0xef, 0xbb, 0xbf)), charToRaw('{"type":"string"}\n')), path)
  expect_identical(schema_json(type_from_schema(path = path)), '{"type":"string"}')
  latin <- iconv('{"description":"caf\u00e9"}', "UTF-8", "latin1")
  expect_identical(schema_json(type_from_schema(latin)), '{"description":"caf\u00e9"}')
  bad <- withr::local_tempfile(fileext = ".json")
  writeBin(c(charToRaw('{"d":"'), as.raw(0xe9), charToRaw('"}')), bad)
  expect_field_error(type_from_schema(path = bad), "path")
})

# Nullable types ------------------------------------------------------------

test_that("nullable types admit JSON null, spelled anyOf (RULES R2.3)", {
  nul <- '{"type":"null"}'
  expect_identical(schema_json(type_number(nullable = TRUE)), paste0('{"anyOf":[{"type":"number"},', nul, ']}'))
  expect_identical(
    schema_json(type_number("P-value.", nullable = TRUE)),
    '{"anyOf":[{"type":"number"},{"type":"null"}],"description":"P-value."}'
  )
  expect_identical(schema_json(type_boolean(nullable = TRUE)), paste0('{"anyOf":[{"type":"boolean"},', nul, ']}'))
  expect_identical(schema_json(type_integer(nullable = TRUE)), paste0('{"anyOf":[{"type":"integer"},', nul, ']}'))
  expect_identical(schema_json(type_string(nullable = TRUE)), paste0('{"anyOf":[{"type":"string"},', nul, ']}'))
  expect_identical(
    schema_json(type_enum(c("lo", "hi"), "Level.", nullable = TRUE)),
    '{"anyOf":[{"type":"string","enum":["lo","hi"]},{"type":"null"}],"description":"Level."}'
  )
  expect_identical(
    schema_json(type_array(type_number(nullable = TRUE), nullable = TRUE)),
    '{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"number"},{"type":"null"}]}},{"type":"null"}]}'
  )
  expect_identical(
    schema_json(type_object(x = type_number(), .nullable = TRUE)),
    paste0('{"anyOf":[{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],',
           '"additionalProperties":false},{"type":"null"}]}')
  )
  # nullable is independent of required
  expect_identical(
    schema_json(type_object(p = type_number(required = FALSE, nullable = TRUE))),
    '{"type":"object","properties":{"p":{"anyOf":[{"type":"number"},{"type":"null"}]}},"additionalProperties":false}'
  )
  # no schema of a type helper has a type array (the MCP Inspector warns of them)
  all_nullable <- type_object(
    b = type_boolean(nullable = TRUE), i = type_integer(nullable = TRUE), n = type_number(nullable = TRUE),
    s = type_string(nullable = TRUE), e = type_enum(1:2, nullable = TRUE),
    a = type_array(type_string(nullable = TRUE), nullable = TRUE),
    o = type_object(x = type_number(nullable = TRUE), .nullable = TRUE), .nullable = TRUE
  )
  expect_no_match(schema_json(all_nullable), '"type":[', fixed = TRUE)
  # the default stays exactly as before
  expect_identical(schema_json(type_number()), '{"type":"number"}')
  expect_identical(schema_json(type_enum(1:2)), '{"type":"integer","enum":[1,2]}')
})

test_that("nullable must be TRUE or FALSE", {
  expect_snapshot(error = TRUE, {
    type_number(nullable = NA)
    type_enum("a", nullable = "yes")
    type_array(type_string(), nullable = 1)
    type_object(.nullable = NULL)
  })
})

test_that("nullable types print as such", {
  expect_output(print(type_number(nullable = TRUE)), "required, nullable")
  expect_output(print(type_number()), "required\n{", fixed = TRUE)
})

test_that("nullable output fields are projected for every protocol version", {
  fit <- tool(
    function() tool_result(structured_content = list(estimate = 1.5, p_value = NA_real_)),
    "Fit.", name = "fit",
    output_schema = type_object(estimate = type_number(), p_value = type_number(nullable = TRUE))
  )
  point <- tool(function() tool_result(structured_content = list(x = 1)), "Point.", name = "point",
                output_schema = type_object(x = type_number(), .nullable = TRUE))
  withr::local_options(mcplite.json.na = "null")
  listing <- function(version) {
    s <- mcp_handler(list(fit, point))
    if (version == "2026-07-28") {
      msg <- list(jsonrpc = "2.0", id = 2, method = "tools/list", params = list(`_meta` = list(
        "io.modelcontextprotocol/protocolVersion" = version,
        "io.modelcontextprotocol/clientCapabilities" = list()
      )))
    } else {
      mcp_handle(s, list(jsonrpc = "2.0", id = 1, method = "initialize", params = list(
        protocolVersion = version, capabilities = list(),
        clientInfo = list(name = "t", version = "1")
      )))
      msg <- list(jsonrpc = "2.0", id = 2, method = "tools/list")
    }
    jsonlite::fromJSON(mcp_handle(s, msg), simplifyVector = FALSE)$result$tools
  }
  expect_null(listing("2024-11-05")[[1]]$outputSchema)
  for (v in c("2025-06-18", "2025-11-25", "2026-07-28")) {
    tools <- listing(v)
    expect_identical(tools[[1]]$outputSchema$properties$p_value$anyOf, list(list(type = "number"), list(type = "null")),
                     info = v)
    # a nullable root is not "object": only 2026-07-28 carries it
    if (v == "2026-07-28") {
      expect_identical(tools[[2]]$outputSchema$anyOf[[2]], list(type = "null"))
    } else {
      expect_null(tools[[2]]$outputSchema, info = v)
    }
  }
  # with mcplite.json.na = "null" the missing p-value is null, as the schema allows
  res <- mcp_handle(fit, list(jsonrpc = "2.0", id = 3, method = "tools/call", params = list(
    name = "fit", `_meta` = list(
      "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities" = list()
    )
  )))
  expect_match(res, '"structuredContent":{"estimate":1.5,"p_value":null}', fixed = TRUE)
})
