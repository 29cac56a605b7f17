# ellmer compatibility (RULES section 9), tested with real serialized
# `ellmer::tool()` objects and with neither ellmer nor S7 installed.

# --- helpers ----------------------------------------------------------------

ellmer_fixture_dir <- function() test_data_dir("ellmer", "MCPLITE_ELLMER_FIXTURES", "manifest.json")

ellmer_manifest <- function() {
  jsonlite::fromJSON(file.path(ellmer_fixture_dir(), "manifest.json"), simplifyVector = FALSE)
}

read_fixture <- function(id) readRDS(file.path(ellmer_fixture_dir(), paste0(id, ".rds")))

parse_json <- function(x) jsonlite::fromJSON(x, simplifyVector = FALSE)

to_json <- function(x) {
  as.character(jsonlite::toJSON(x, auto_unbox = TRUE, digits = NA, null = "null"))
}

modern_meta_json <- paste0(
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",",
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"
)

modern_list <- function(id = 1) {
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{%s}}', id, modern_meta_json)
}


# tools/list through mcp_handle(), parsed.
listed_tools <- function(x) {
  res <- parse_json(mcp_handle(x, modern_list()))
  res[["result"]][["tools"]]
}

# tools/call through mcp_handle(); returns the parsed `result`.
call_result <- function(x, name, arguments = structure(list(), names = character())) {
  args <- if (is.character(arguments)) arguments else to_json(arguments)
  res <- parse_json(mcp_handle(x, modern_call(name, args)))
  expect_null(res[["error"]])
  res[["result"]]
}

result_text <- function(result) {
  vapply(result[["content"]], function(b) b[["text"]], character(1))
}

# A blank object of R type "S4" (what S7 objects without a base type are),
# taken from a real fixture: base R cannot create one without the methods
# package's S4 bit.
s7_blank <- local({
  blank <- NULL
  function() {
    if (is.null(blank)) {
      x <- attr(read_fixture("ping"), "arguments", exact = TRUE)
      attributes(x) <- NULL
      blank <<- x
    }
    blank
  }
})

ellmer_obj <- function(class, ...) {
  structure(s7_blank(), ..., class = c(class, "S7_object"))
}

e_type <- function(kind, ...) ellmer_obj(c(paste0("ellmer::", kind), "ellmer::Type"), ...)
e_basic <- function(type, description = NULL, required = TRUE) {
  e_type("TypeBasic", type = type, description = description, required = required)
}
e_enum <- function(values, description = NULL, required = TRUE) {
  e_type("TypeEnum", values = values, description = description, required = required)
}
e_array <- function(items, description = NULL, required = TRUE) {
  e_type("TypeArray", items = items, description = description, required = required)
}
e_object <- function(..., .description = NULL, .required = TRUE, .additional_properties = FALSE) {
  e_type("TypeObject",
    properties = list(...), additional_properties = .additional_properties,
    description = .description, required = .required
  )
}
e_json <- function(json, required = TRUE) e_type("TypeJsonSchema", json = json, required = required)
e_ignore <- function() e_type("TypeIgnore", required = FALSE)

# A ToolDef laid out like ellmer 0.4.2's (attributes on the function itself).
e_tool <- function(fun, name, arguments = list(), description = "A tool.", convert = TRUE,
                   annotations = list()) {
  structure(fun,
    class = c("ellmer::ToolDef", "function", "S7_object"),
    name = name, description = description,
    arguments = do.call(e_object, arguments),
    convert = convert, annotations = annotations
  )
}

e_content <- function(kind, ...) ellmer_obj(c(paste0("ellmer::", kind), "ellmer::Content"), ...)

# The function the server calls for an ellmer tool.
served_fun <- function(x) ellmer_tool_spec(x)$fun

# --- the environment these tests promise ------------------------------------

test_that("neither ellmer nor S7 is installed or loaded", {
  # (looked up with system.file(): R CMD check would read a requireNamespace()
  # call as a dependency of the tests)
  expect_identical(system.file(package = "ellmer"), "")
  expect_identical(system.file(package = "S7"), "")
  for (id in names(ellmer_manifest()$fixtures)) read_fixture(id)
  expect_false("S7" %in% loadedNamespaces())
  expect_false("ellmer" %in% loadedNamespaces())
})

# --- fixtures (RULES E10) ----------------------------------------------------

test_that("every fixture lists exactly its .json entry (tools/list, 2026-07-28)", {
  dir <- ellmer_fixture_dir()
  fixtures <- ellmer_manifest()$fixtures
  for (id in names(fixtures)) {
    x <- read_fixture(id)
    expect_true(is.function(x) && inherits(x, "ellmer::ToolDef"))
    expected <- parse_json(file.path(dir, paste0(id, ".json")))
    tools <- listed_tools(x)
    expect_length(tools, 1L)
    expect_identical(tools[[1]], expected, label = paste0("tools/list entry of ", id))
  }
})

test_that("all fixtures together list in registry order, also after initialize", {
  dir <- ellmer_fixture_dir()
  ids <- names(ellmer_manifest()$fixtures)
  session <- mcp_handler(lapply(ids, read_fixture))
  init <- parse_json(mcp_handle(session, list(
    jsonrpc = "2.0", id = 1, method = "initialize",
    params = list(
      protocolVersion = "2025-06-18", capabilities = structure(list(), names = character()),
      clientInfo = list(name = "test", version = "1.0")
    )
  )))
  expect_identical(init$result$protocolVersion, "2025-06-18")
  expect_null(mcp_handle(session, '{"jsonrpc":"2.0","method":"notifications/initialized"}'))
  legacy <- parse_json(mcp_handle(session, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'))
  expected <- lapply(ids, function(id) parse_json(file.path(dir, paste0(id, ".json"))))
  expect_identical(legacy$result$tools, expected)
  expect_identical(listed_tools(session), expected)
})

test_that("every fixture's example call returns ellmer's recorded result", {
  fixtures <- ellmer_manifest()$fixtures
  for (id in names(fixtures)) {
    call <- fixtures[[id]]$example_call
    expected <- call$ellmer_result_text
    if (id == "array_types" && !requireNamespace("tibble", quietly = TRUE)) {
      expected <- sub("<tbl_df>", "<data.frame>", expected, fixed = TRUE)
    }
    x <- read_fixture(id)
    args <- to_json(call$arguments_json)
    if (!is.null(call$set_seed)) set.seed(call$set_seed)
    res <- call_result(x, fixtures[[id]]$tool_name, args)
    expect_identical(res$isError, FALSE, label = paste0("isError of ", id))
    expect_identical(result_text(res), expected, label = paste0("result of ", id))
  }
})

test_that("converted arguments equal the ones ellmer passed to each fixture", {
  fixtures <- ellmer_manifest()$fixtures
  for (id in names(fixtures)) {
    call <- fixtures[[id]]$example_call
    x <- read_fixture(id)
    # Capture what the server hands to the wrapped function.
    seen <- NULL
    spy <- function(...) {
      seen <<- list(...)
      NULL
    }
    attributes(spy) <- attributes(x)
    fun <- served_fun(spy)
    do.call(fun, call$arguments_json)
    want <- eval(parse(text = call$r_args_after_ellmer_conversion))
    if (id == "array_types" && !requireNamespace("tibble", quietly = TRUE)) {
      class(want$points) <- "data.frame"
    }
    if (id == "convert_false") {
      # convert = FALSE: the parsed JSON arrives unchanged.
      expect_identical(seen, call$arguments_json)
    } else {
      expect_identical(seen, want, label = paste0("converted arguments of ", id))
    }
  }
})

test_that("a fixture's own function is served unchanged when convert = FALSE", {
  x <- read_fixture("convert_false")
  expect_identical(served_fun(x), x)
  expect_true(is.function(served_fun(read_fixture("add"))))
  expect_false(identical(served_fun(read_fixture("add")), read_fixture("add")))
})

test_that("the ToolBuiltIn fixture is rejected with an error naming `tools`", {
  builtin <- read_fixture("negative_builtin_web_search")
  expect_false(is.function(builtin))
  err <- expect_error(mcp_server(builtin), class = "mcplite_error")
  expect_match(conditionMessage(err), "`tools`", fixed = TRUE)
  expect_match(conditionMessage(err), "ToolBuiltIn", fixed = TRUE)
  err <- expect_error(mcp_handler(list(read_fixture("add"), builtin)), class = "mcplite_error")
  expect_match(conditionMessage(err), "`tools[[2]]`", fixed = TRUE)
  expect_match(conditionMessage(err), "ToolBuiltIn", fixed = TRUE)
  err <- expect_error(mcp_handle(list(builtin), modern_list()), class = "mcplite_error")
  expect_match(conditionMessage(err), "`tools[[1]]`", fixed = TRUE)
})

test_that("fixtures are served end to end over stdio by Rscript --vanilla", {
  skip_if_not_installed("processx")
  dir <- ellmer_fixture_dir()
  script <- testthat::test_path("..", "clients", "ellmer-server.R")
  skip_if_not(file.exists(script), "tests/clients is not here (R CMD check of the tarball)")
  script <- normalizePath(script)
  fixtures <- ellmer_manifest()$fixtures
  ids <- sort(names(fixtures))
  stopifnot(identical(ids, sort(sub("\\.rds$", "", setdiff(
    list.files(dir, pattern = "\\.rds$"), "negative_builtin_web_search.rds"
  )))))
  # rnorm first: the server sets the seed once at start-up.
  order <- c("rnorm", setdiff(ids, "rnorm"))
  lines <- c(modern_list(id = 0))
  for (i in seq_along(order)) {
    call <- fixtures[[order[i]]]$example_call
    lines <- c(lines, modern_call(fixtures[[order[i]]]$tool_name, to_json(call$arguments_json), id = i))
  }
  input <- tempfile(fileext = ".jsonl")
  on.exit(unlink(input), add = TRUE)
  writeLines(lines, input, useBytes = TRUE)
  lib <- dirname(find.package("mcplite"))
  out <- processx::run(
    file.path(R.home("bin"), "Rscript"),
    c("--vanilla", script, dir, as.character(fixtures$rnorm$example_call$set_seed)),
    stdin = input, timeout = 120, error_on_status = FALSE,
    env = c("current", R_LIBS = paste(c(lib, .libPaths()), collapse = .Platform$path.sep))
  )
  expect_identical(out$status, 0L, info = out$stderr)
  responses <- lapply(strsplit(out$stdout, "\n", fixed = TRUE)[[1]], parse_json)
  expect_length(responses, length(order) + 1L)
  by_id <- list()
  for (r in responses) by_id[[as.character(r$id)]] <- r
  expected_tools <- lapply(ids, function(id) parse_json(file.path(dir, paste0(id, ".json"))))
  expect_identical(by_id[["0"]]$result$tools, expected_tools)
  for (i in seq_along(order)) {
    res <- by_id[[as.character(i)]]$result
    expected <- fixtures[[order[i]]]$example_call$ellmer_result_text
    if (order[i] == "array_types" && !requireNamespace("tibble", quietly = TRUE)) {
      expected <- sub("<tbl_df>", "<data.frame>", expected, fixed = TRUE)
    }
    expect_identical(res$isError, FALSE, label = order[i])
    expect_identical(result_text(res), expected, label = order[i])
  }
})

# --- schemas, validation (RULES E3-E7) ---------------------------------------

test_that("ellmer types map to the E4 schemas", {
  schema <- function(x) fixed_json(ellmer_type_schema(x, "x"))
  expect_identical(schema(e_basic("integer")), '{"type":"integer","description":""}')
  expect_identical(schema(e_basic("string", "S.")), '{"type":"string","description":"S."}')
  expect_identical(
    schema(e_enum("only")),
    '{"type":"string","description":"","enum":["only"]}'
  )
  expect_identical(
    schema(e_array(e_enum(c("a", "b")), "Tags.")),
    '{"type":"array","description":"Tags.","items":{"type":"string","description":"","enum":["a","b"]}}'
  )
  expect_identical(
    schema(e_object()),
    '{"type":"object","description":"","properties":{},"required":[],"additionalProperties":false}'
  )
  expect_identical(
    schema(e_object(a = e_basic("boolean", required = FALSE), b = e_ignore(),
                    c = e_json(list(type = "number", minimum = 0L)),
                    .description = "O.", .additional_properties = TRUE)),
    paste0(
      '{"type":"object","description":"O.","properties":{"a":{"type":"boolean","description":""},',
      '"c":{"type":"number","minimum":0}},"required":["c"],"additionalProperties":true}'
    )
  )
  expect_null(ellmer_type_schema(e_ignore(), "x"))
  expect_true(ellmer_type_required(e_basic("number")))
  expect_false(ellmer_type_required(e_basic("number", required = FALSE)))
  expect_false(ellmer_type_required(e_ignore()))
})

test_that("a ToolDef without arguments lists the minimal input schema", {
  x <- e_tool(function() "pong", "p")
  spec <- ellmer_tool_spec(x)
  expect_identical(spec$input_schema, '{"type":"object","additionalProperties":false}')
  expect_identical(spec$annotations, character())
  expect_null(spec$output_schema)
})

test_that("unsupported or damaged ellmer types are errors naming where they are", {
  odd <- e_type("TypeMystery")
  err <- expect_error(ellmer_type_schema(odd, "arguments$q"), class = "mcplite_error")
  expect_match(conditionMessage(err), "`arguments$q`", fixed = TRUE)
  expect_match(conditionMessage(err), "TypeMystery", fixed = TRUE)

  x <- e_tool(function(q) q, "odd", list(q = e_array(odd)))
  err <- expect_error(mcp_handler(list(x)), class = "mcplite_error")
  expect_match(conditionMessage(err), "`tools[[1]]`", fixed = TRUE)
  expect_match(conditionMessage(err), "\"odd\"", fixed = TRUE)
  expect_match(conditionMessage(err), "`arguments$q$items`", fixed = TRUE)

  bad <- list(
    list(e_basic("float"), "`x`"),
    list(e_basic("string", description = 1), "`x$description`"),
    list(e_enum(character()), "`x`"),
    list(e_array("string"), "`x`"),
    list(e_json(list(1, 2)), "`x`"),
    list(e_object(a = "string"), "`x$a`")
  )
  for (case in bad) {
    err <- expect_error(ellmer_type_schema(case[[1]], "x"), class = "mcplite_error")
    expect_match(conditionMessage(err), case[[2]], fixed = TRUE)
  }
})

test_that("ToolDef fields are validated (E3, E7)", {
  check <- function(x, field) {
    err <- expect_error(mcp_handler(x), class = "mcplite_error")
    expect_match(conditionMessage(err), "`tools[[1]]`", fixed = TRUE)
    expect_match(conditionMessage(err), field, fixed = TRUE)
  }
  ok <- function(...) e_tool(function(x) x, "ok", list(x = e_basic("number")), ...)
  check(e_tool(function() 1, "has space"), "`name`")
  check(e_tool(function() 1, strrep("a", 129)), "`name`")
  x <- ok()
  attr(x, "name") <- NULL
  check(x, "`name`")
  x <- ok()
  attr(x, "description") <- NULL
  check(x, "`description`")
  x <- ok()
  attr(x, "arguments") <- list(x = e_basic("number"))
  check(x, "`arguments`")
  check(ok(annotations = list(read_only_hint = "yes")), "`annotations$read_only_hint`")
  check(ok(annotations = list(title = 3)), "`annotations$title`")
  check(ok(annotations = list(read_only_hint = TRUE, readOnlyHint = TRUE)), "`annotations`")
  check(ok(annotations = list(TRUE)), "`annotations`")
  # 128 characters is fine; names with dots too.
  expect_silent(mcp_handler(list(e_tool(function() 1, strrep("a", 128)), e_tool(function() 1, "a.b-c_d"))))
})

test_that("ellmer annotations map like tool() annotations, in stored order", {
  x <- e_tool(function() 1, "ann", annotations = list(
    open_world_hint = FALSE, custom = list(a = 1L), title = "T", destructive_hint = TRUE
  ))
  tools <- listed_tools(x)
  expect_identical(
    to_json(tools[[1]]$annotations),
    '{"openWorldHint":false,"custom":{"a":1},"title":"T","destructiveHint":true}'
  )
})

test_that("an object that is both an mcplite tool and a ToolDef uses mcplite metadata", {
  x <- tool(function(x) x, "mcplite description", name = "both", arguments = list(x = type_string()))
  class(x) <- c("mcplite_tool", "ellmer::ToolDef", "function", "S7_object")
  attr(x, "name") <- "ellmer_name"
  tools <- listed_tools(x)
  expect_identical(tools[[1]]$name, "both")
  expect_identical(tools[[1]]$description, "mcplite description")
})

test_that("mcplite and ellmer tools are served side by side", {
  mine <- tool(function(x) x * 10, "Times ten.", name = "times_ten",
               arguments = list(x = type_number()))
  session <- mcp_handler(list(mine, read_fixture("add")))
  tools <- listed_tools(session)
  expect_identical(vapply(tools, function(t) t$name, ""), c("times_ten", "add"))
  expect_identical(result_text(call_result(session, "add", '{"x":1,"y":2}')), "3")
  expect_identical(result_text(call_result(session, "times_ten", '{"x":2}')), "20")
  err <- expect_error(mcp_handler(list(read_fixture("add"), read_fixture("add"))), class = "mcplite_error")
  expect_match(conditionMessage(err), "\"add\"", fixed = TRUE)
})

# --- ellmer types inside mcplite helpers (RULES R1.5, R1.7, R2.6, R2.7) -------

test_that("ellmer types work in tool(arguments =), type_array() and type_object()", {
  x <- tool(
    function(a, b, c, d) NULL, "Mixed.", name = "mixed",
    arguments = list(
      a = e_basic("number", "A."),
      b = type_array(e_enum(c("x", "y"))),
      c = type_object(.description = "C.", p = e_basic("integer", required = FALSE), q = type_string()),
      d = e_ignore()
    )
  )
  schema <- listed_tools(x)[[1]]$inputSchema
  expect_identical(to_json(schema), paste0(
    '{"type":"object","properties":{',
    '"a":{"type":"number","description":"A."},',
    '"b":{"type":"array","items":{"type":"string","description":"","enum":["x","y"]}},',
    '"c":{"type":"object","properties":{"p":{"type":"integer","description":""},"q":{"type":"string"}},',
    '"required":["q"],"additionalProperties":false,"description":"C."}},',
    '"required":["a","b","c"],"additionalProperties":false}'
  ))
  # Optional ellmer arguments are left out of `required`.
  y <- tool(function(a = 1) a, "Opt.", name = "opt",
            arguments = list(a = e_basic("number", required = FALSE)))
  expect_null(listed_tools(y)[[1]]$inputSchema$required)
})

test_that("ellmer object and JSON Schema types work as output_schema", {
  out <- e_object(total = e_basic("number", "Sum."))
  x <- tool(function() tool_result(structured_content = list(total = 1)), "Out.",
            name = "out", output_schema = out)
  expect_identical(
    to_json(listed_tools(x)[[1]]$outputSchema),
    paste0(
      '{"type":"object","description":"","properties":{"total":{"type":"number",',
      '"description":"Sum."}},"required":["total"],"additionalProperties":false}'
    )
  )
  y <- tool(function() 1, "Out.", name = "out2",
            output_schema = e_json(list(type = "object", properties = structure(list(), names = character()))))
  expect_identical(to_json(listed_tools(y)[[1]]$outputSchema), '{"type":"object","properties":{}}')
  err <- expect_error(tool(function() 1, "d", name = "o", output_schema = e_basic("number")),
                      class = "mcplite_error")
  expect_match(conditionMessage(err), "`output_schema`", fixed = TRUE)
  err <- expect_error(tool(function(a) 1, "d", name = "o", arguments = list(a = e_type("TypeMystery"))),
                      class = "mcplite_error")
  expect_match(conditionMessage(err), "`arguments$a`", fixed = TRUE)
})

# --- argument conversion (RULES E8) -------------------------------------------

test_that("arrays of basic types become atomic vectors", {
  f <- served_fun(e_tool(function(b, i, n, s) list(b = b, i = i, n = n, s = s), "arr", list(
    b = e_array(e_basic("boolean")), i = e_array(e_basic("integer")),
    n = e_array(e_basic("number")), s = e_array(e_basic("string"))
  )))
  out <- f(b = list(TRUE, NULL, "x"), i = list(1L, 2.9, "3", NULL, 1e12),
           n = list(1L, 2.5, FALSE), s = list("a", 1L, list("b")))
  expect_identical(out$b, c(TRUE, NA, NA))
  expect_identical(out$i, c(1L, 2L, NA, NA, NA))
  expect_identical(out$n, c(1, 2.5, NA))
  expect_identical(out$s, c("a", NA, NA))
  empty <- f(b = list(), i = list(), n = list(), s = list())
  expect_identical(empty, list(b = logical(), i = integer(), n = numeric(), s = character()))
})

test_that("arrays of enums become factors and arrays of arrays lists", {
  f <- served_fun(e_tool(function(e, m) list(e = e, m = m), "arr", list(
    e = e_array(e_enum(c("S", "M", "L"))),
    m = e_array(e_array(e_basic("integer")))
  )))
  out <- f(e = list("L", "S", "XL", NULL), m = list(list(1L, 2L), list(), list(3)))
  expect_identical(out$e, factor(c("L", "S", NA, NA), levels = c("S", "M", "L")))
  expect_identical(out$m, list(1:2, integer(), 3L))
})

test_that("arrays of objects become tibbles (or data frames), or lists when open", {
  items <- e_object(
    x = e_basic("number"), tag = e_enum(c("a", "b"), required = FALSE),
    sub = e_object(k = e_basic("string")),
    raw = e_json(list(type = "object"))
  )
  f <- served_fun(e_tool(function(p) p, "df", list(p = e_array(items))))
  out <- f(p = list(
    list(x = 1L, tag = "b", sub = list(k = "u"), raw = list(z = 1L)),
    list(x = 2.5, extra = TRUE)
  ))
  expect_s3_class(out, "data.frame")
  if (requireNamespace("tibble", quietly = TRUE)) expect_s3_class(out, "tbl_df")
  expect_identical(names(out), c("x", "tag", "sub", "raw"))
  expect_identical(nrow(out), 2L)
  expect_identical(out$x, c(1, 2.5))
  expect_identical(out$tag, factor(c("b", NA), levels = c("a", "b")))
  expect_s3_class(out$sub, "data.frame")
  expect_identical(out$sub$k, c("u", NA))
  expect_identical(out$raw, list(list(z = 1L), NULL))
  # Empty array: zero rows, declared columns.
  empty <- f(p = list())
  expect_identical(dim(empty), c(0L, 4L))
  expect_identical(empty$x, numeric())

  open <- e_object(x = e_basic("number"), y = e_basic("string", required = FALSE),
                   .additional_properties = TRUE)
  g <- served_fun(e_tool(function(p) p, "open", list(p = e_array(open))))
  expect_identical(
    g(p = list(list(extra = 1L, x = 2L), list(y = "b"))),
    list(list(x = 2L, y = NULL, extra = 1L), list(x = NA_real_, y = "b"))
  )
})

test_that("arrays of objects build a base data frame without tibble", {
  cols <- list(x = c(1, 2), tag = factor(c("a", NA)), raw = list(NULL, list(z = 1L)))
  out <- ellmer_frame(cols, 2L, tibble = FALSE)
  expect_identical(class(out), "data.frame")
  expect_identical(dim(out), c(2L, 3L))
  expect_identical(out$x, c(1, 2))
  expect_identical(out$raw, list(NULL, list(z = 1L)))
  expect_identical(ellmer_frame(list(x = 1:2), 2L, tibble = FALSE), data.frame(x = 1:2))
  expect_identical(dim(ellmer_frame(structure(list(), names = character()), 3L, tibble = FALSE)), c(3L, 0L))
  skip_if_not_installed("tibble")
  expect_identical(ellmer_frame(list(x = 1:2), 2L, tibble = TRUE), tibble::tibble(x = 1:2))
})

test_that("objects keep declared properties in order; nested absent members", {
  person <- e_object(
    name = e_basic("string"), age = e_basic("integer", required = FALSE),
    address = e_object(city = e_basic("string"), zip = e_basic("string", required = FALSE)),
    tags = e_array(e_basic("string"), required = FALSE)
  )
  f <- served_fun(e_tool(function(p) p, "obj", list(p = person)))
  expect_identical(
    f(p = list(address = list(city = "Oslo"), name = "Kari")),
    list(name = "Kari", age = NULL, address = list(city = "Oslo", zip = NULL), tags = NULL)
  )
  # Absent required nested members become typed NA; an absent required
  # nested object is still built.
  expect_identical(
    f(p = structure(list(), names = character())),
    list(name = NA_character_, age = NULL, address = list(city = NA_character_, zip = NULL), tags = NULL)
  )
  open <- e_object(a = e_basic("number"), .additional_properties = TRUE)
  g <- served_fun(e_tool(function(o) o, "open", list(o = open)))
  expect_identical(g(o = list(z = 1L, a = 2L)), list(a = 2L, z = 1L))
  closed <- e_object(a = e_basic("number"))
  h <- served_fun(e_tool(function(o) o, "closed", list(o = closed)))
  expect_identical(h(o = list(z = 1L, a = 2L)), list(a = 2L))
})

test_that("top level: the input schema first (RULES L6.7), then NULL dropped", {
  seen <- NULL
  fun <- function(b, i, n, s, e, opt = "default", j) {
    seen <<- list(b = b, i = i, n = n, s = s, e = e, opt = opt, j_missing = missing(j))
    "ok"
  }
  x <- e_tool(fun, "top", list(
    b = e_basic("boolean"), i = e_basic("integer"), n = e_basic("number"),
    s = e_basic("string"), e = e_enum(c("u", "v")),
    opt = e_basic("string", required = FALSE), j = e_json(list(type = "object"), required = FALSE)
  ))
  # Absent required values are refused before conversion (ellmer would make
  # them typed NA): the function is not called.
  res <- call_result(x, "top", "{}")
  expect_true(res$isError)
  expect_match(result_text(res), "missing required argument `b`", fixed = TRUE)
  expect_null(seen)
  # A one-element array is not a boolean or an integer.
  res <- call_result(x, "top", '{"b":[true],"i":[3],"n":1,"s":"t","e":"v"}')
  expect_true(res$isError)
  expect_match(result_text(res), '`b` must be of type "boolean", got [true]', fixed = TRUE)
  expect_null(seen)
  # null values of optional arguments are dropped so R defaults apply.
  call_result(x, "top", '{"b":true,"i":3,"n":1,"s":"t","e":"v","opt":null,"j":null}')
  expect_identical(seen, list(
    b = TRUE, i = 3L, n = 1L, s = "t", e = "v", opt = "default", j_missing = TRUE
  ))
})

test_that("unknown argument names are a contained error and the tool is not called", {
  called <- FALSE
  x <- e_tool(function(x, digits = 2) {
    called <<- TRUE
    x
  }, "strict", list(x = e_basic("number")))
  res <- call_result(x, "strict", '{"x":1,"digits":3,"zz":0}')
  expect_true(res$isError)
  expect_match(result_text(res), "`digits`", fixed = TRUE)
  expect_match(result_text(res), "`zz`", fixed = TRUE)
  expect_false(called)
  # Hidden (type_ignore) arguments of a real fixture cannot be set either.
  res <- call_result(read_fixture("ignore_arg"), "ignore_arg", '{"x":1.234,"digits":1}')
  expect_true(res$isError)
  expect_match(result_text(res), "`digits`", fixed = TRUE)
  # The server keeps serving.
  expect_identical(
    result_text(call_result(read_fixture("ignore_arg"), "ignore_arg", '{"x":1.234}')),
    "1.23"
  )
})

test_that("convert = FALSE passes parsed JSON unchanged, errors stay contained", {
  x <- e_tool(function(values, ...) paste(class(values), length(values), ...length()), "raw",
              list(values = e_array(e_basic("number"))), convert = FALSE)
  expect_identical(result_text(call_result(x, "raw", '{"values":[1,2]}')), "list 2 0")
  # Undeclared members are refused by the input schema (RULES L6.7).
  res <- call_result(x, "raw", '{"values":[1,2],"other":1}')
  expect_true(res$isError)
  expect_match(result_text(res), "unexpected argument `other` (the tool takes `values`)", fixed = TRUE)
  y <- e_tool(function(a) stop("tool failed: ", a), "boom", list(a = e_basic("string")))
  res <- call_result(y, "boom", '{"a":"why"}')
  expect_true(res$isError)
  expect_identical(result_text(res), "tool failed: why")
})

# --- results (RULES E9) -------------------------------------------------------

returning <- function(value) {
  force(value)
  e_tool(function() value, "ret")
}

test_that("ContentToolResult errors become contained tool errors", {
  res <- call_result(returning(e_content("ContentToolResult", error = "Quota exceeded")), "ret")
  expect_true(res$isError)
  expect_identical(result_text(res), "Quota exceeded")
  cnd <- simpleError("Bad {input}")
  res <- call_result(returning(e_content("ContentToolResult", error = cnd, value = 1)), "ret")
  expect_true(res$isError)
  expect_identical(result_text(res), "Bad {input}")
  res <- call_result(returning(e_content("ContentToolResult", error = c("first", "second"))), "ret")
  expect_identical(result_text(res), "first")
})

test_that("ContentToolResult values continue as ordinary values or content", {
  ctr <- function(value, ...) e_content("ContentToolResult", value = value, extra = list(x = 1), ...)
  res <- call_result(returning(ctr(c(1.23456, 2))), "ret")
  expect_false(res$isError)
  expect_identical(result_text(res), "[1.2346,2]")
  expect_identical(result_text(call_result(returning(ctr(c("a", NA))), "ret")), "a\nNA")
  expect_identical(result_text(call_result(returning(ctr('{"json":1}')), "ret")), '{"json":1}')
  expect_identical(result_text(call_result(returning(ctr(list())), "ret")), "[]")
  expect_identical(
    result_text(call_result(returning(e_content("ContentToolResult")), "ret")),
    "{}"
  )
  expect_identical(
    result_text(call_result(returning(ctr(e_content("ContentText", text = "inner"))), "ret")),
    "inner"
  )
  res <- call_result(returning(ctr(tool_result(content_text("native"), is_error = TRUE))), "ret")
  expect_true(res$isError)
  expect_identical(result_text(res), "native")
  res <- call_result(returning(ctr(new.env())), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "could not be converted to JSON", fixed = TRUE)
})

test_that("ContentText and ContentImageInline become text and image blocks", {
  res <- call_result(returning(e_content("ContentText", text = "Hello")), "ret")
  expect_false(res$isError)
  expect_identical(res$content, list(list(type = "text", text = "Hello")))
  img <- e_content("ContentImageInline", type = "image/png", data = "iVBORw0KGgo=")
  res <- call_result(returning(img), "ret")
  expect_false(res$isError)
  expect_length(res$content, 1L)
  block <- res$content[[1]]
  expect_setequal(names(block), c("type", "data", "mimeType"))
  expect_identical(block[c("type", "data", "mimeType")],
                   list(type = "image", data = "iVBORw0KGgo=", mimeType = "image/png"))
  # A list of supported content keeps its order; any tool may return them.
  x <- tool(function() list(img, e_content("ContentText", text = "caption")), "Pic.", name = "pic")
  res <- call_result(x, "pic")
  expect_identical(vapply(res$content, function(b) b$type, ""), c("image", "text"))
  expect_identical(res$content[[2]]$text, "caption")
})

test_that("unsupported ellmer content is a contained error advising tool_result()", {
  pdf <- e_content("ContentPDF", type = "application/pdf", data = "JVBERi0=")
  res <- call_result(returning(pdf), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "ContentPDF", fixed = TRUE)
  expect_match(result_text(res), "tool_result()", fixed = TRUE)
  res <- call_result(returning(list(e_content("ContentText", text = "a"), pdf)), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "ContentPDF", fixed = TRUE)
  res <- call_result(returning(list(e_content("ContentText", text = "a"), "plain")), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "element 2", fixed = TRUE)
  res <- call_result(returning(e_content("ContentText")), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "`text`", fixed = TRUE)
  res <- call_result(returning(e_content("ContentImageInline", data = "AAAA")), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "`mime_type`", fixed = TRUE)
  res <- call_result(returning(e_basic("string")), "ret")
  expect_true(res$isError)
  expect_match(result_text(res), "ellmer::TypeBasic", fixed = TRUE)
})

test_that("ellmer_normalize_result() returns validated mcplite tool results", {
  out <- ellmer_normalize_result(e_content("ContentText", text = "x"))
  expect_s3_class(out, "mcplite_tool_result")
  expect_identical(out, tool_result(content_text("x")))
  expect_identical(
    ellmer_normalize_result(list(e_content("ContentImageInline", type = "image/gif", data = "R0lG"))),
    tool_result(list(content_image("R0lG", "image/gif")))
  )
  expect_error(
    ellmer_normalize_result(e_content("ContentToolResult", error = "no")),
    "no", class = "mcplite_error"
  )
})
