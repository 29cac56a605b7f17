# RULES R1: tool() and the internal tool_spec().

add_numbers <- tool(
  function(x, y) {
    x + y
  },
  name = "add_numbers",
  description = "Add two numbers and return the result.",
  arguments = list(
    x = type_number("First number."),
    y = type_number("Second number.")
  )
)

test_that("the manual's add_numbers example is a callable tool (R1.3)", {
  expect_true(is.function(add_numbers))
  expect_true(inherits(add_numbers, "mcplite_tool"))
  expect_identical(add_numbers(2, 3), 5)
  spec <- tool_spec(add_numbers)
  expect_identical(spec$name, "add_numbers")
  expect_identical(spec$description, "Add two numbers and return the result.")
  expect_identical(
    spec$input_schema,
    paste0(
      '{"type":"object","properties":{"x":{"type":"number","description":"First number."},',
      '"y":{"type":"number","description":"Second number."}},"required":["x","y"],',
      '"additionalProperties":false}'
    )
  )
  expect_identical(spec$annotations, character())
  expect_null(spec$output_schema)
  expect_identical(spec$fun(x = 1, y = 2), 3)
})

test_that("tool() returns fun itself with the class prepended (R1.3)", {
  f <- function(a, b = 2) a * b
  t <- tool(f, "Multiply.", arguments = list(a = type_number()))
  expect_identical(body(t), body(f))
  expect_identical(formals(t), formals(f))
  expect_identical(environment(t), environment(f))
  expect_identical(t(4), 8)
  expect_identical(do.call(t, list(a = 3, b = 3)), 9)
  expect_identical(class(t), "mcplite_tool")
  # the original function is not modified
  expect_null(attr(f, "mcplite"))
  expect_false(inherits(f, "mcplite_tool"))

  g <- structure(function(x) x, class = c("my_fun", "function"))
  tg <- tool(g, "Identity.", arguments = list(x = type_string()))
  expect_identical(class(tg), c("mcplite_tool", "my_fun", "function"))
  expect_identical(tg("a"), "a")
})

test_that("JSON arrays passed as lists reach fun unchanged", {
  total <- tool(function(values) sum(unlist(values)), "Sum.",
                name = "total", arguments = list(values = type_array(type_number())))
  expect_identical(total(list(1, 2, 3.5)), 6.5)
})

test_that("calling tool() on a tool replaces its metadata", {
  t1 <- tool(function(x) x, "First.", name = "first", arguments = list(x = type_string()),
             annotations = list(title = "One"))
  t2 <- tool(t1, "Second.", name = "second")
  expect_identical(class(t2), "mcplite_tool")
  spec <- tool_spec(t2)
  expect_identical(spec$name, "second")
  expect_identical(spec$description, "Second.")
  expect_identical(spec$input_schema, '{"type":"object","properties":{},"additionalProperties":false}')
  expect_identical(spec$annotations, character())
  expect_identical(t2("z"), "z")
  # t1 is untouched
  expect_identical(tool_spec(t1)$name, "first")
})

test_that("the name is inferred from a bare symbol (R1.4)", {
  my_tool.v2 <- function() "ok"
  t <- tool(my_tool.v2, "Inferred.")
  expect_identical(tool_spec(t)$name, "my_tool.v2")
  `has space` <- function() 1
  expect_field_error(tool(`has space`, "Bad."), "name")
  expect_identical(tool_spec(tool(`has space`, "Explicit.", name = "ok"))$name, "ok")
})

test_that("name is required for anonymous functions and calls (R1.4)", {
  expect_field_error(tool(function() 1, "Anonymous."), "name")
  expect_field_error(tool(base::identity, "Namespaced."), "name")
  expect_field_error(tool((function() function() 1)(), "Call."), "name")
  expect_field_error(tool(function() 1, "Explicit NULL.", name = NULL), "name")
})

test_that("names are checked byte-wise against the ASCII pattern (R1.4)", {
  f <- function() 1
  expect_identical(tool_spec(tool(f, "d", name = "abc.DEF_123-valid"))$name, "abc.DEF_123-valid")
  expect_identical(tool_spec(tool(f, "d", name = strrep("a", 128)))$name, strrep("a", 128))
  bad <- list("", "has space", "has,comma", "has/slash", "\u00fcmlaut", strrep("a", 129),
              NA_character_, c("a", "b"), 1, "tab\there", "caf\u00e9")
  for (nm in bad) {
    expect_field_error(tool(f, "d", name = nm), "name")
  }
  # even in a locale where letters include non-ASCII characters
  withr::with_locale(c(LC_CTYPE = "C.UTF-8"), {
    expect_field_error(tool(f, "d", name = "\u00e9t\u00e9"), "name")
  })
})

test_that("fun must be a non-primitive function (R1.2.1)", {
  expect_field_error(tool(), "fun")
  expect_field_error(tool("sum", "d", name = "s"), "fun")
  expect_field_error(tool(NULL, "d", name = "s"), "fun")
  err <- expect_field_error(tool(sum, "Sum.", name = "s"), "fun")
  expect_match(conditionMessage(err), "closure")
  expect_field_error(tool(`+`, "Plus.", name = "p"), "fun")
})

test_that("description must be a scalar string (R1.2.2)", {
  f <- function() 1
  expect_field_error(tool(f), "description")
  expect_field_error(tool(f, NULL), "description")
  expect_field_error(tool(f, NA_character_), "description")
  expect_field_error(tool(f, c("a", "b")), "description")
  expect_field_error(tool(f, 1), "description")
  expect_identical(tool_spec(tool(f, ""))$description, "")
})

test_that("a stray positional argument points to `arguments` (R1.2.3)", {
  f <- function(x) x
  err <- expect_field_error(tool(f, "d", list(x = type_number())), "arguments")
  expect_match(conditionMessage(err), "`...`", fixed = TRUE)
  expect_field_error(tool(f, "d", x = type_number()), "arguments")
})

test_that("checks run in the documented order (R1.2)", {
  expect_field_error(tool(sum, 1, 2, name = "bad name"), "fun")
  expect_field_error(tool(function() 1, 1, 2, name = "bad name"), "description")
  expect_field_error(tool(function() 1, "d", 2, name = "bad name"), "...")
  expect_field_error(tool(function() 1, "d", name = "bad name", arguments = 1), "name")
  expect_field_error(
    tool(function() 1, "d", name = "ok", arguments = 1, annotations = 1, output_schema = 1),
    "arguments"
  )
  expect_field_error(
    tool(function() 1, "d", name = "ok", annotations = 1, output_schema = 1),
    "annotations"
  )
  expect_field_error(tool(function() 1, "d", name = "ok", output_schema = 1), "output_schema")
})

test_that("list-form arguments build the root input schema (R1.5)", {
  f <- function(...) NULL
  spec <- function(args) tool_spec(tool(f, "d", arguments = args))$input_schema
  expect_identical(spec(list()), '{"type":"object","properties":{},"additionalProperties":false}')
  expect_identical(
    spec(list(q = type_string())),
    '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}'
  )
  expect_identical(
    spec(list(q = type_string(required = FALSE), secret = type_ignore())),
    '{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}'
  )
  expect_identical(
    spec(list(only_ignored = type_ignore())),
    '{"type":"object","properties":{},"additionalProperties":false}'
  )
  expect_identical(
    spec(list(
      b = type_boolean(required = FALSE),
      level = type_enum(c("low", "high"), "Level."),
      pt = type_object(x = type_number(), y = type_number(required = FALSE)),
      raw = type_from_schema('{"type":"array","items":{"type":"integer"},"minItems":1}'),
      a = type_integer()
    )),
    paste0(
      '{"type":"object","properties":{"b":{"type":"boolean"},',
      '"level":{"type":"string","enum":["low","high"],"description":"Level."},',
      '"pt":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},',
      '"required":["x"],"additionalProperties":false},',
      '"raw":{"type":"array","items":{"type":"integer"},"minItems":1},',
      '"a":{"type":"integer"}},"required":["level","pt","raw","a"],"additionalProperties":false}'
    )
  )
})

test_that("list-form arguments are validated (R1.5)", {
  f <- function(...) NULL
  expect_field_error(tool(f, "d", arguments = list(type_string())), "arguments")
  expect_field_error(tool(f, "d", arguments = list(a = type_string(), type_number())), "arguments")
  expect_field_error(tool(f, "d", arguments = list(a = type_string(), a = type_number())), "arguments")
  err <- expect_field_error(tool(f, "d", arguments = list(a = type_string(), b = "number")), "arguments")
  expect_match(conditionMessage(err), "arguments$b", fixed = TRUE)
  expect_field_error(tool(f, "d", arguments = list(b = list(type = "number"))), "arguments")
  expect_field_error(tool(f, "d", arguments = "x"), "arguments")
  expect_field_error(tool(f, "d", arguments = NULL), "arguments")
  expect_field_error(tool(f, "d", arguments = data.frame(a = 1)), "arguments")
  # a single helper other than type_from_schema()
  expect_field_error(tool(f, "d", arguments = type_object(a = type_string())), "arguments")
  expect_field_error(tool(f, "d", arguments = type_string()), "arguments")
  expect_field_error(tool(f, "d", arguments = type_ignore()), "arguments")
})

test_that("a complete input schema is advertised verbatim (R1.5)", {
  text <- paste0(
    '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",',
    '"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}},',
    '"oneOf":[{"required":["a"]}]}'
  )
  t <- tool(function(a) a, "d", name = "complete", arguments = type_from_schema(text))
  expect_identical(tool_spec(t)$input_schema, text)
  t <- tool(function() 1, "d", name = "empty", arguments = type_from_schema(list(type = "object")))
  expect_identical(tool_spec(t)$input_schema, '{"type":"object"}')
})

test_that("a complete input schema needs a direct object root (R1.5)", {
  f <- function() 1
  expect_field_error(tool(f, "d", name = "x", arguments = type_from_schema('{"type":"string"}')), "arguments")
  expect_field_error(tool(f, "d", name = "x", arguments = type_from_schema("{}")), "arguments")
  expect_field_error(
    tool(f, "d", name = "x", arguments = type_from_schema('{"allOf":[{"type":"object"}]}')),
    "arguments"
  )
  expect_field_error(
    tool(f, "d", name = "x", arguments = type_from_schema('{"$ref":"#/$defs/o","$defs":{"o":{"type":"object"}}}')),
    "arguments"
  )
  expect_field_error(
    tool(f, "d", name = "x", arguments = type_from_schema('{"type":["object","null"]}')),
    "arguments"
  )
})

test_that("annotations are mapped to wire keys in order (R1.6)", {
  t <- tool(function() 1, "d", name = "annotated", annotations = list(
    custom_flag = "yes",
    read_only_hint = TRUE,
    title = "A \"title\"",
    destructive_hint = FALSE,
    idempotent_hint = TRUE,
    open_world_hint = FALSE,
    someCamel = list(a = 1L, b = NULL),
    nothing = NULL
  ))
  a <- tool_spec(t)$annotations
  expect_identical(
    a,
    c(custom_flag = '"yes"', readOnlyHint = "true", title = '"A \\"title\\""',
      destructiveHint = "false", idempotentHint = "true", openWorldHint = "false",
      someCamel = '{"a":1,"b":null}', nothing = "null")
  )
  # camelCase keys pass through unchanged
  t <- tool(function() 1, "d", name = "camel", annotations = list(readOnlyHint = TRUE, x = 0.1))
  expect_identical(tool_spec(t)$annotations, c(readOnlyHint = "true", x = "0.1"))
})

test_that("annotation values and shapes are checked (R1.6)", {
  f <- function() 1
  an <- function(...) tool(f, "d", name = "a", annotations = list(...))
  expect_field_error(an(read_only_hint = "yes"), "annotations$read_only_hint")
  expect_field_error(an(destructive_hint = NA), "annotations$destructive_hint")
  expect_field_error(an(idempotent_hint = c(TRUE, FALSE)), "annotations$idempotent_hint")
  expect_field_error(an(open_world_hint = 1), "annotations$open_world_hint")
  expect_field_error(an(openWorldHint = NULL), "annotations$openWorldHint")
  expect_field_error(an(title = 1), "annotations$title")
  expect_field_error(an(title = NA_character_), "annotations$title")
  expect_field_error(an(title = NULL), "annotations$title")
  expect_field_error(an(read_only_hint = TRUE, readOnlyHint = TRUE), "annotations")
  expect_field_error(an(openWorldHint = FALSE, open_world_hint = FALSE), "annotations")
  expect_field_error(an(env = new.env()), "annotations")
  expect_field_error(tool(f, "d", name = "a", annotations = list(TRUE)), "annotations")
  expect_field_error(tool(f, "d", name = "a", annotations = list(a = 1, a = 2)), "annotations")
  expect_field_error(tool(f, "d", name = "a", annotations = c(title = "x")), "annotations")
  expect_field_error(tool(f, "d", name = "a", annotations = NULL), "annotations")
})

test_that("output_schema accepts type_object() and type_from_schema() (R1.7)", {
  f <- function() 1
  t <- tool(f, "d", name = "o", output_schema = type_object(ok = type_boolean()))
  expect_identical(
    tool_spec(t)$output_schema,
    '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}'
  )
  # the root type is not checked
  t <- tool(f, "d", name = "o", output_schema = type_from_schema('{"type":"array","items":{"type":"number"}}'))
  expect_identical(tool_spec(t)$output_schema, '{"type":"array","items":{"type":"number"}}')
  t <- tool(f, "d", name = "o", output_schema = type_from_schema("{}"))
  expect_identical(tool_spec(t)$output_schema, "{}")
})

test_that("output_schema rejects other values (R1.7)", {
  f <- function() 1
  os <- function(x) tool(f, "d", name = "o", output_schema = x)
  expect_field_error(os(type_string()), "output_schema")
  expect_field_error(os(type_array(type_string())), "output_schema")
  expect_field_error(os(type_ignore()), "output_schema")
  expect_field_error(os(list(type = "object")), "output_schema")
  expect_field_error(os('{"type":"object"}'), "output_schema")
  # a forged type_from_schema() with a function inside
  forged <- type_from_schema('{"type":"object"}')
  forged$schema$bad <- function() 1
  expect_field_error(os(forged), "output_schema")
})

test_that("tool_spec() re-validates the stored metadata", {
  t <- tool(function() 1, "d", name = "ok")
  meta <- attr(t, "mcplite")
  meta$name <- "not ok"
  attr(t, "mcplite") <- meta
  expect_field_error(tool_spec(t), "name")
  attr(t, "mcplite") <- NULL
  expect_error(tool_spec(t), class = "mcplite_error")
  expect_error(tool_spec(function() 1), class = "mcplite_error")
  expect_error(tool_spec(list(name = "x")), class = "mcplite_error")
})

test_that("tool_spec() reuses what tool() validated only while the metadata is unchanged", {
  t <- tool(function(x, e) x, "d", name = "ok", arguments = list(
    x = type_number("A number."), e = type_enum(c("a", "b"), required = FALSE)
  ), annotations = list(title = "T"), output_schema = type_object(y = type_number()))
  meta <- attr(t, "mcplite")
  fresh <- t
  fresh_meta <- meta
  fresh_meta$checked <- NULL
  attr(fresh, "mcplite") <- fresh_meta
  # the stored result is what a full validation gives
  expect_identical(tool_spec(t), utils::modifyList(tool_spec(fresh), list(fun = t)))
  # a stamp does not vouch for changed or hand-made metadata
  forged <- meta
  forged$arguments$x <- "not a type"
  attr(fresh, "mcplite") <- forged
  expect_field_error(tool_spec(fresh), "arguments$x")
  fake_stamp <- new.env()
  fake_stamp$fields <- forged[c(
    "name", "description", "arguments", "annotations", "output_schema",
    "input_schema_list", "annotations_json", "output_schema_list"
  )]
  forged$checked <- fake_stamp
  attr(fresh, "mcplite") <- forged
  expect_field_error(tool_spec(fresh), "arguments$x")
  forged <- meta
  forged$input_schema_list$properties$x$type <- "string"
  attr(fresh, "mcplite") <- forged
  expect_match(tool_spec(fresh)$input_schema, '"x":{"type":"number"', fixed = TRUE)
})

test_that("a tool prints its metadata and function", {
  out <- capture.output(print(add_numbers))
  expect_identical(out[1], "<mcplite tool> add_numbers")
  expect_true(any(grepl('"required":["x","y"]', out, fixed = TRUE)))
  expect_true(any(grepl("x + y", out, fixed = TRUE)))
})

# ellmer S7 types plug in wherever a helper is accepted (RULES E4). These use
# real serialized ellmer objects and need neither ellmer nor S7.
rapi_ellmer_fixture <- function(id) {
  skip_if_not(exists("ellmer_type_schema", mode = "function"), "ellmer support not available")
  file <- paste0(id, ".rds")
  readRDS(file.path(test_data_dir("ellmer", "MCPLITE_ELLMER_FIXTURES", file), file))
}

test_that("ellmer types work as arguments, items and properties", {
  props <- attr(attr(rapi_ellmer_fixture("scalar_types"), "arguments"), "properties")
  t <- tool(function(num, note = NULL) num, "d", name = "mixed",
            arguments = list(num = props$num, note = props$note, hidden = type_ignore()))
  expect_identical(
    tool_spec(t)$input_schema,
    paste0(
      '{"type":"object","properties":{"num":{"type":"number","description":"A double-precision number."},',
      '"note":{"type":"string","description":"Optional free-text note."}},"required":["num"],',
      '"additionalProperties":false}'
    )
  )
  expect_identical(
    schema_json(type_array(props$colour)),
    '{"type":"array","items":{"type":"string","description":"One of three colours.","enum":["red","green","blue"]}}'
  )
  expect_identical(
    schema_json(type_object(flag = props$flag, n = type_integer())),
    paste0(
      '{"type":"object","properties":{"flag":{"type":"boolean","description":"A true/false switch."},',
      '"n":{"type":"integer"}},"required":["flag","n"],"additionalProperties":false}'
    )
  )
})

test_that("ellmer object and JSON-schema types work as output_schema (R1.7)", {
  def <- rapi_ellmer_fixture("json_schema")
  args <- attr(def, "arguments")
  query <- attr(args, "properties")$query
  query_json <- paste0(
    '{"type":"object","description":"A search query.","properties":{"term":{"type":"string"},',
    '"limit":{"type":"integer","minimum":1}},"required":["term"]}'
  )
  t <- tool(function() 1, "d", name = "o", output_schema = query)
  expect_identical(tool_spec(t)$output_schema, query_json)
  t <- tool(function() 1, "d", name = "o", output_schema = args)
  expect_identical(
    tool_spec(t)$output_schema,
    paste0('{"type":"object","description":"","properties":{"query":', query_json,
           '},"required":["query"],"additionalProperties":false}')
  )
  props <- attr(attr(rapi_ellmer_fixture("scalar_types"), "arguments"), "properties")
  expect_field_error(tool(function() 1, "d", name = "o", output_schema = props$num), "output_schema")
  expect_field_error(tool(function() 1, "d", name = "o", arguments = args), "arguments")
})

test_that("tool() can re-describe an ellmer tool definition", {
  def <- rapi_ellmer_fixture("add")
  t <- tool(def, "Add two numbers.", name = "add2",
            arguments = list(x = type_number(), y = type_number()))
  expect_true(inherits(t, "mcplite_tool"))
  expect_true(inherits(t, "ellmer::ToolDef"))
  expect_identical(t(1, 2), 3)
  expect_identical(tool_spec(t)$name, "add2")
})

# Error messages name the tool and say what was given ----------------------

test_that("tool()'s errors name the tool by name and description", {
  expect_snapshot(error = TRUE, {
    tool(function(x) x, "Add two numbers.", name = "add",
         annotations = list(read_only_hint = "yes"))
    tool(function(x) x, "Add two numbers and return the result, rounded to the given digits.",
         arguments = list(x = type_number()))
    add <- function(x) x
    tool(add, NA_character_)
    tool(function(x) x)
    tool()
    tool(sum, "Sum.", name = "total")
  })
})

test_that("the tool's label is added once and keeps the error's class", {
  err <- expect_field_error(
    tool(function() 1, "Says one.", name = "one", arguments = 1),
    "arguments"
  )
  expect_match(conditionMessage(err), "^In tool \"one\" \\(\"Says one.\"\\): `arguments`")
  expect_identical(lengths(regmatches(conditionMessage(err), gregexpr("In tool", conditionMessage(err)))), 1L)
  # mcp_server() validation names the tool its own way, without the prefix
  one <- tool(function() 1, "Says one.", name = "one")
  attr(one, "mcplite")$name <- "not valid"
  err <- expect_field_error(mcp_handler(one), "tools[[1]]")
  expect_false(grepl("In tool", conditionMessage(err), fixed = TRUE))
})

test_that("NA and wrong types are described in plain words", {
  expect_snapshot(error = TRUE, {
    tool(function() 1, NA_character_, name = "a")
    tool(function() 1, 42, name = "a")
    tool(function() 1, c("two", "strings"), name = "a")
    tool(function() 1, "d", name = NA_character_)
    tool(function() 1, "d", name = "a", annotations = list(title = NA_character_))
    tool(function() 1, "d", name = "a", annotations = list(title = I("Title")))
    tool(function() 1, "d", name = "a", annotations = list(open_world_hint = NA))
    tool(function() 1, "d", name = "a", output_schema = type_string())
    tool(function() 1, "d", name = "a", arguments = type_string())
    tool(function(x) 1, "d", name = "a", arguments = list(x = "string"))
  })
})

# Declared arguments the function cannot take ------------------------------

test_that("declared arguments must be arguments of fun (or fun has ...)", {
  expect_snapshot(error = TRUE, {
    tool(function(x) x, "d", name = "a", arguments = list(zzz = type_string()))
    tool(function() 1, "d", name = "a", arguments = list(x = type_string(), y = type_number()))
    tool(function(x) x, "d", name = "a", arguments = type_from_schema(
      '{"type":"object","properties":{"x":{"type":"string"},"q":{"type":"string"}}}'
    ))
  })
  # `...` takes anything; ignored arguments are not advertised and not checked
  expect_s3_class(tool(function(...) 1, "d", name = "a", arguments = list(zzz = type_string())),
                  "mcplite_tool")
  expect_s3_class(tool(function(x) x, "d", name = "a",
                       arguments = list(x = type_string(), internal = type_ignore())),
                  "mcplite_tool")
  # a declared argument with a default, and a complete schema without properties
  expect_s3_class(tool(function(x = 1) x, "d", name = "a", arguments = list(x = type_number())),
                  "mcplite_tool")
  expect_s3_class(tool(function() 1, "d", name = "a", arguments = type_from_schema('{"type":"object"}')),
                  "mcplite_tool")
})

test_that("mcp_server() re-validation also checks the function's arguments", {
  a <- tool(function(x) x, "d", name = "a", arguments = list(x = type_string()))
  meta <- attr(a, "mcplite")
  meta$arguments <- list(y = type_string())
  attr(a, "mcplite") <- meta
  err <- expect_field_error(mcp_handler(a), "tools[[1]]")
  expect_match(conditionMessage(err), "`y`", fixed = TRUE)
})

# Non-ASCII text when R starts in the C locale -----------------------------

# Run `lines` as an R script with no environment at all (as MCP clients start
# servers: no LANG, no LC_*), or with LANG=C.UTF-8. The script finds this
# build of mcplite through .libPaths(), not through the environment.
run_script_bare <- function(lines, utf8, stdin = NULL) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  libs <- paste0('"', .libPaths(), '"', collapse = ", ")
  writeLines(enc2utf8(c(paste0(".libPaths(c(", libs, "))"), lines)), script, useBytes = TRUE)
  env <- if (utf8) c(LANG = "C.UTF-8") else c(MCPLITE_TEST_BARE = "1")
  processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
                env = env, stdin = stdin, error_on_status = FALSE, timeout = 60)
}

test_that("non-ASCII schema text is the same in the C locale as under C.UTF-8", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("processx")
  tool_lines <- c(
    "library(mcplite)",
    "t1 <- tool(function(size, day, n) size, \"Gr\u00f6\u00dfe messen \u65e5\u672c\",",
    "  name = \"measure\",",
    "  arguments = list(",
    "    size = type_number(\"gr\u00f6\u00dfer \U0001F600\"),",
    "    day = type_enum(c(\"\u65e5\u672c\", \"Stra\u00dfe\"), \"Tag\"),",
    "    n = type_from_schema('{\"type\":\"integer\",\"default\":\"gr\u00fc\u00df\",\"title\":\"Z\u00e4hler\"}')",
    "  ),",
    "  annotations = list(title = \"Titel \u65e5\u672c\"),",
    "  output_schema = type_object(`\u00f6l` = type_string(\"\u00d6l\")))"
  )
  request <- tempfile()
  on.exit(unlink(request))
  writeLines(paste0(
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{',
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{}}}}'
  ), request)
  server <- c(tool_lines, "mcp_server(t1)")
  bare <- run_script_bare(server, utf8 = FALSE, stdin = request)
  utf8 <- run_script_bare(server, utf8 = TRUE, stdin = request)
  expect_identical(bare$status, 0L, info = bare$stderr)
  expect_identical(utf8$status, 0L, info = utf8$stderr)
  expect_identical(bare$stdout, utf8$stdout)
  listed <- jsonlite::fromJSON(bare$stdout, simplifyVector = FALSE)$result$tools[[1]]
  expect_identical(listed$description, "Gr\u00f6\u00dfe messen \u65e5\u672c")
  props <- listed$inputSchema$properties
  expect_identical(props$size$description, "gr\u00f6\u00dfer \U0001F600")
  expect_identical(unlist(props$day$enum), c("\u65e5\u672c", "Stra\u00dfe"))
  expect_identical(props$n$default, "gr\u00fc\u00df")
  expect_identical(props$n$title, "Z\u00e4hler")
  expect_identical(listed$annotations$title, "Titel \u65e5\u672c")
  expect_identical(names(listed$outputSchema$properties), "\u00f6l")
  expect_identical(listed$outputSchema$properties[[1]]$description, "\u00d6l")

  # print(tool) writes the same bytes in both locales
  printer <- c(tool_lines, "print(t1)")
  bare <- run_script_bare(printer, utf8 = FALSE)
  utf8 <- run_script_bare(printer, utf8 = TRUE)
  expect_identical(bare$stdout, utf8$stdout)
  expect_match(bare$stdout, "gr\u00f6\u00dfer", fixed = TRUE)
  expect_match(bare$stdout, "Titel \u65e5\u672c", fixed = TRUE)
})
