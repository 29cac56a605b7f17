# package_tools() and mcp_manifest() on real installed packages (stats,
# utils, tools) and on a small package built and installed by the tests
# (undocumented functions, exported data, damaged help pages).

cache_dir <- file.path(tempdir(), "mcplite-pkgtools-cache")
old_cache_opt <- options(mcplite.cache_dir = cache_dir)
withr::defer(options(old_cache_opt), teardown_env())

modern_meta <- list(
  `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
  `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
)

# tools/call through the engine; returns the parsed result.
call_tool <- function(session, name, args = structure(list(), names = character())) {
  line <- mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = name, arguments = args, `_meta` = modern_meta())
  ))
  jsonlite::parse_json(line, simplifyVector = FALSE)$result
}

input_schema <- function(x) jsonlite::parse_json(tool_spec(x)$input_schema, simplifyVector = FALSE)

# The text a hand-written tool returning `value` sends (the server's ordinary
# conversion of the value of a direct call).
direct_text <- function(value) {
  direct <- tool(function() value, "Direct call.", name = "direct")
  call_tool(mcp_handler(direct), "direct")$content[[1]]$text
}

stats_tools <- function(...) package_tools("stats", quiet = TRUE, ...)

# The value of `expr` and every message it emitted (muffled).
with_messages <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}

test_that("titles, descriptions and argument docs come from the help page", {
  tl <- stats_tools(include = c("qnorm", "median"))
  expect_named(tl, c("median", "qnorm"))
  spec <- tool_spec(tl$qnorm)
  # The Normal Distribution page documents dnorm, pnorm, qnorm and rnorm:
  # the tool leads with its own usage (RULES R8.1).
  expect_identical(spec$annotations[["title"]], "\"qnorm(): The Normal Distribution\"")
  expect_match(spec$description, "^`qnorm\\(p, mean = 0, sd = 1, lower.tail = TRUE, log.p = FALSE\\)`")
  expect_match(spec$description, "\n\nDensity, distribution function, quantile function", fixed = TRUE)
  expect_match(spec$description, "**Value:** `dnorm` gives the density", fixed = TRUE)
  schema <- input_schema(tl$qnorm)
  expect_identical(schema$properties$p$description, "vector of probabilities. (Type guessed.)")
  expect_identical(
    schema$properties$lower.tail$description,
    "logical; if TRUE (default), probabilities are P[X \\le x] otherwise, P[X > x]."
  )
  text <- stats_tools(include = "median", docs = "text")
  expect_false(grepl("`", tool_spec(text$median)$description, fixed = TRUE))
  expect_match(tool_spec(tl$median)$description, "`x`", fixed = TRUE)
})

test_that("schemas are inferred from defaults, match.arg() choices and docs", {
  tl <- stats_tools(include = c("qnorm", "p.adjust", "t.test", "cor", "quantile", "median"))
  q <- input_schema(tl$qnorm)
  expect_identical(names(q$properties), c("p", "mean", "sd", "lower.tail", "log.p"))
  expect_identical(q$required, list("p"))
  # The help text says "vector of means": a number, or an array of them.
  expect_identical(q$properties$mean[c("anyOf", "default")],
                   list(anyOf = list(list(type = "number"), list(type = "array", items = list(type = "number"))),
                        default = 0L))
  expect_identical(q$properties$lower.tail[c("type", "default")], list(type = "boolean", default = TRUE))
  expect_false(q$additionalProperties)

  # A constant vector in the namespace used with match.arg() is an enum.
  p <- input_schema(tl$p.adjust)
  expect_identical(unlist(p$properties$method$enum), stats::p.adjust.methods)
  expect_identical(p$properties$method$default, "holm")
  expect_identical(p$properties$p$type, "array")

  # An S3 generic is described with its default method's arguments; `...` never appears.
  t <- input_schema(tl$t.test)
  expect_true(all(c("x", "y", "alternative", "mu", "paired", "conf.level") %in% names(t$properties)))
  expect_false("..." %in% names(t$properties))
  expect_identical(unlist(t$properties$alternative$enum), c("two.sided", "less", "greater"))
  expect_identical(t$required, list("x"))
  # A NULL default is optional and typed from the docs ("an optional numeric vector").
  expect_identical(t$properties$y$type, "array")

  # A whole-number default documented as an integer is an integer.
  expect_identical(input_schema(tl$quantile)$properties$type$type, "integer")
  # Without a default or a typed description, any JSON value is accepted.
  expect_null(input_schema(tl$median)$properties$x$type)
  expect_false("..." %in% names(input_schema(tl$median)$properties))
})

# -- issue 34: catalogues a model uses well -----------------------------------------

# The share of a catalogue's arguments that have a type (an enum, or
# alternatives of types).
typed_share <- function(tools) {
  props <- unlist(lapply(tools, function(t) input_schema(t)$properties), recursive = FALSE)
  mean(vapply(props, function(p) !is.null(p$type) || !is.null(p$enum) || !is.null(p$anyOf), NA))
}

test_that("functions sharing a help page lead with their own usage and value (RULES R8.1)", {
  skip_if_not_installed("data.table")
  dt <- package_tools("data.table", include = c("hour", "year", "month", "as.IDate"), quiet = TRUE)
  d <- vapply(dt, function(t) tool_spec(t)$description, "")
  # One page ("Integer based date class") documents them all; each says
  # what it is first, then the page's shared first paragraph.
  expect_length(unique(d), 4L)
  expect_match(d[["hour"]], "^`hour\\(x\\)`\n\n\\*\\*Value:\\*\\* `second`, `minute`, `hour`")
  expect_match(d[["year"]], "^`year\\(x\\)`")
  expect_match(d[["as.IDate"]], "^`as.IDate\\(x, \\.\\.\\.\\)`\n\n\\*\\*Value:\\*\\* For `as.IDate`, a class of")
  for (nm in names(d)) {
    expect_match(d[[nm]], "Date and time classes with integer storage", fixed = TRUE)
  }
  # What the page says about its other functions only is left out.
  expect_false(grepl("For `as.ITime`", d[["as.IDate"]], fixed = TRUE))
  expect_false(grepl("For `as.IDate`", d[["hour"]], fixed = TRUE))
  expect_identical(tool_spec(dt$hour)$annotations[["title"]], "\"hour(): Integer based date class\"")
  # A page documenting one function keeps its title and description.
  med <- tool_spec(stats_tools(include = "median")$median)
  expect_identical(med$annotations[["title"]], "\"Median Value\"")
  expect_match(med$description, "^Compute the sample median")
})

test_that("types come from defaults, help text and names, and a guess says so (RULES R8.2)", {
  tl <- stats_tools(include = c("cor", "pf", "power.prop.test", "dpois", "qnorm"))
  # "a numeric vector, matrix or data frame": each as JSON carries it (a
  # matrix an array of rows, a data frame an array of records).
  expect_identical(input_schema(tl$cor)$properties$x$anyOf, list(
    list(type = "array", items = list(type = "number")),
    list(type = "array", items = list(type = "array", items = list(type = "number"))),
    list(type = "array", items = list(type = "object"))
  ))
  # A quantity from the help text, marked as a guess.
  df1 <- input_schema(tl$pf)$properties$df1
  expect_identical(df1$type, "number")
  expect_match(df1$description, "(Type guessed.)", fixed = TRUE)
  expect_identical(input_schema(tl$dpois)$properties$lambda$items$type, "number")
  # A computed default (.Machine$double.eps^0.25) is a number; a literal
  # default is no guess.
  tol <- input_schema(tl$power.prop.test)$properties$tol
  expect_identical(tol$type, "number")
  expect_null(tol$default)
  expect_false(grepl("guessed", input_schema(tl$qnorm)$properties$mean$description, fixed = TRUE))
  g <- input_schema(package_tools("graphics", include = "hist", quiet = TRUE)$hist)$properties
  expect_identical(g$main$type, "string")
  expect_identical(g$xlim$items$type, "number")
  expect_identical(g$probability$type, "boolean")
  # Documented as one kind of value or another: the JSON types named, as
  # alternatives ("logical or character string"), the default shown.
  expect_identical(g$labels[c("anyOf", "default")],
                   list(anyOf = list(list(type = "boolean"), list(type = "string")), default = FALSE))
  expect_false(grepl("guessed", g$labels$description, fixed = TRUE))
  # A literal default does not fix the type ("Sturges" is a string, but
  # breaks = 12 is valid), and "a vector giving the breakpoints" is a vector
  # of no named kind: no type at all, the default still shown.
  expect_null(g$breaks$type)
  expect_null(g$breaks$anyOf)
  expect_identical(g$breaks$default, "Sturges")
  grid <- input_schema(package_tools("graphics", include = "grid", quiet = TRUE)$grid)$properties
  # "character or (integer) numeric"; a numeric "or" a character vector.
  expect_identical(grid$col$anyOf, list(list(type = "string"), list(type = "number")))
  ft <- input_schema(stats_tools(include = "ftable")$ftable)$properties
  expect_identical(ft$row.vars$anyOf, list(list(type = "array", items = list(type = "number")),
                                           list(type = "array", items = list(type = "string"))))
  # How documentation is read: functions drop out (JSON cannot carry them),
  # a last noun goes with the bare adjectives before it, and any
  # alternative of another kind (a matrix) leaves the argument untyped.
  expect_identical(
    doc_types(c("a number, a character string or a function.", "numeric or character vector.",
                "`NULL` or a logical or character string.", "a numeric vector, matrix or data frame.",
                "one of: a vector of breakpoints, a number, or a string.")),
    c("any:number,string", "any:numbers,strings", "any:boolean,string", "any:numbers,matrix,records",
      "several")
  )
  # A literal default of none of the kinds named gets no type.
  expect_true(default_fits(2, c("integer", "string")))
  expect_false(default_fits(TRUE, c("number", "string")))
  expect_false(default_fits("a", c("strings", "boolean")))
  # A list of values ("one of \"n\", \"p\", ...") is no such case.
  loc <- input_schema(package_tools("graphics", include = "locator", quiet = TRUE)$locator)$properties
  expect_identical(loc$type$type, "string")

  # A matrix is an array of rows ("numeric matrix" was once a number); a
  # time series an array of numbers, as a guess; "non-negative parameters of
  # the Beta distribution" numbers.
  more <- stats_tools(include = c("cov2cor", "decompose", "dbeta", "ts", "lowess"))
  expect_identical(input_schema(more$cov2cor)$properties$V$items,
                   list(type = "array", items = list(type = "number")))
  expect_identical(input_schema(package_tools("base", include = "det", quiet = TRUE)$det)$properties$x$type,
                   "array")
  # "a numeric or complex matrix" is a matrix (it was one number, as
  # "numeric" alone), "a numeric or complex vector" an array of numbers.
  lin <- package_tools("base", include = c("solve", "eigen", "cos"), quiet = TRUE)
  expect_identical(input_schema(lin$eigen)$properties$x$items$items$type, "number")
  expect_identical(input_schema(lin$solve)$properties$a$items$items$type, "number")
  expect_identical(input_schema(lin$cos)$properties$x$items$type, "number")
  # "numeric sequences", "integer-valued index vector", "numerical values"
  # are arrays (convolve(x) was one number, arrayInd(ind) one integer).
  expect_identical(input_schema(stats_tools(include = "convolve")$convolve)$properties$x$items$type,
                   "number")
  vec <- package_tools("base", include = c("arrayInd", "ISOdate"), quiet = TRUE)
  expect_identical(input_schema(vec$arrayInd)$properties$ind$type, "array")
  expect_identical(input_schema(vec$ISOdate)$properties$hour$anyOf[[2]]$type, "array")
  res <- call_tool(mcp_handler(lin), "solve", list(a = list(list(2, 0), list(0, 4))))
  expect_false(res$isError)
  expect_identical(res$content[[1]]$text, direct_text(solve(matrix(c(2, 0, 0, 4), 2))))
  # A time series: its values, or an object with a frequency and a start.
  dx <- input_schema(more$decompose)$properties$x
  expect_identical(dx$anyOf[[1]]$items$type, "number")
  expect_identical(names(dx$anyOf[[2]]$properties), c("data", "frequency", "start"))
  expect_identical(dx$anyOf[[2]]$required, list("data"))
  expect_match(dx$description, "(Type guessed.)", fixed = TRUE)
  expect_identical(input_schema(more$dbeta)$properties$shape1$type, "number")
  expect_identical(input_schema(more$lowess)$properties$x$anyOf[[1]]$items$type, "number")
  # "time series comparison tolerance" is a number, not a series.
  expect_identical(input_schema(more$ts)$properties$ts.eps$type, "number")

  # The share of typed arguments (measured in the "Serve a package" guide:
  # stats 84%, graphics 77%; what stays untyped is mostly vectors of no
  # named kind, factors and tables, and values of several kinds).
  st <- stats_tools()
  # numericDeriv(dir = 1), "numeric vector of directions", is a number or an
  # array of them: no path a client could name as a string (RULES R8.8).
  expect_identical(input_schema(st$numericDeriv)$properties$dir$anyOf[[1]], list(type = "number"))
  expect_gte(typed_share(st), 0.80)
  expect_gte(typed_share(package_tools("graphics", quiet = TRUE)), 0.75)
})

# The literal JSON value of an argument in an example call (a number, a
# string, TRUE/FALSE, a negated number or c() of those), or NULL: list(json,
# scalar). NA, Inf and named vectors have no JSON literal here; T and F are
# variables (axTicks' example assigns T).
example_literal <- function(e) {
  if (is.call(e) && identical(e[[1L]], as.name("-")) && length(e) == 2L &&
      is.numeric(e[[2L]]) && length(e[[2L]]) == 1L) {
    e <- -e[[2L]]
  }
  if (is.atomic(e) && length(e) == 1L && typeof(e) %in% c("logical", "integer", "double", "character") &&
      !is.na(e) && (!is.numeric(e) || is.finite(e))) {
    return(list(json = as.character(jsonlite::toJSON(e, auto_unbox = TRUE, digits = NA)), scalar = TRUE))
  }
  if (is.call(e) && identical(e[[1L]], as.name("c")) && length(e) > 1L && is.null(names(e))) {
    parts <- lapply(as.list(e)[-1L], example_literal)
    if (any(vapply(parts, function(p) is.null(p) || !p$scalar, NA))) {
      return(NULL)
    }
    # R's own coercion of the parts (c(1, "a") is a character vector).
    value <- eval(e, baseenv())
    return(list(json = as.character(jsonlite::toJSON(value, digits = NA)), scalar = FALSE))
  }
  NULL
}

# Every call in the examples of `pkg`'s help pages to a function served by
# `tools`, with the literal arguments it names (matched as R matches them;
# for an S3 generic, those named in its `...` too): a data frame of tool,
# argument, page and JSON value.
example_arguments <- function(pkg, tools) {
  ns <- asNamespace(pkg)
  db <- tools::Rd_db(pkg)
  rows <- list()
  walk <- function(e, page) {
    if (!is.call(e)) {
      return()
    }
    head <- e[[1L]]
    if (is.call(head) && identical(head[[1L]], as.name("::")) && identical(as.character(head[[2L]]), pkg)) {
      head <- head[[3L]]
    }
    if (is.symbol(head) && as.character(head) %in% names(tools)) {
      fname <- as.character(head)
      fun <- get(fname, envir = ns)
      mc <- tryCatch(match.call(fun, e, expand.dots = FALSE), error = function(err) NULL)
      args <- if (is.null(mc)) list() else as.list(mc)[-1L]
      args <- c(args[names(args) != "..."], as.list(args[["..."]]))
      for (arg in setdiff(names(args), "")) {
        lit <- example_literal(args[[arg]])
        if (!is.null(lit)) {
          rows[[length(rows) + 1L]] <<- data.frame(tool = fname, arg = arg, page = page, json = lit$json,
                                                   scalar = lit$scalar)
        }
      }
    }
    parts <- as.list(e)[-1L]
    for (i in seq_along(parts)) {
      if (is.call(parts[[i]])) walk(parts[[i]], page)
    }
  }
  for (page in names(db)) {
    file <- tempfile(fileext = ".R")
    tools::Rd2ex(db[[page]], file, commentDontrun = TRUE)
    code <- if (file.exists(file)) tryCatch(parse(file, keep.source = FALSE), error = function(err) NULL)
    unlink(file)
    for (e in as.list(code)) walk(e, page)
  }
  unique(do.call(rbind, rows))
}

test_that("inferred types accept the literal values the help pages' examples pass (RULES R8.2)", {
  py <- venv_python("jsonschema")
  skip_if(is.null(py), "no Python venv with jsonschema")
  packages <- c("stats", "graphics", "utils", if (requireNamespace("data.table", quietly = TRUE)) "data.table")
  schemas <- character()
  cases <- list()
  for (pkg in packages) {
    tools <- package_tools(pkg, quiet = TRUE)
    found <- example_arguments(pkg, tools)
    # Only arguments in the schema (functions and formulas are left out).
    props <- lapply(tools[unique(found$tool)], function(t) names(input_schema(t)$properties))
    found <- found[mapply(function(t, a) a %in% props[[t]], found$tool, found$arg), ]
    found$key <- paste0(pkg, "::", found$tool)
    for (t in unique(found$tool)) {
      schemas[[paste0(pkg, "::", t)]] <- tool_spec(tools[[t]])$input_schema
    }
    cases[[pkg]] <- found
  }
  cases <- do.call(rbind, cases)
  # Enough calls were found for the check to mean something.
  expect_gt(nrow(cases), 500L)
  json_string <- function(x) vapply(x, function(v) as.character(jsonlite::toJSON(v, auto_unbox = TRUE)), "")
  doc <- paste0(
    "{\"schemas\":{", paste0(json_string(names(schemas)), ":", schemas, collapse = ","), "},",
    "\"cases\":[", paste0("[", json_string(cases$key), ",", json_string(cases$arg), ",", cases$json, ",",
                          tolower(cases$scalar), "]", collapse = ","), "]}"
  )
  input <- tempfile(fileext = ".json")
  writeLines(doc, input, useBytes = TRUE)
  script <- '
import json, sys
from jsonschema import Draft202012Validator
doc = json.load(open(sys.argv[1], encoding="utf-8"))
bad = []
for key, arg, value, scalar in doc["cases"]:
    schema = doc["schemas"][key]["properties"][arg]
    # An R scalar is a vector of length one: a bare value or an array of one.
    # match.arg() takes abbreviations ("g" for "greater"); the schema lists
    # the full values, which a client sends.
    enum = schema.get("enum") or schema.get("items", {}).get("enum") or []
    hits = [e for e in enum if isinstance(value, str) and isinstance(e, str) and e.startswith(value)]
    if value not in enum and len(hits) == 1:
        value = hits[0]
    candidates = [value, [value]] if scalar else [value]
    if not any(Draft202012Validator(schema).is_valid(v) for v in candidates):
        bad.append(f"{key}({arg} = {json.dumps(value)}): {json.dumps({k: v for k, v in schema.items() if k != \'description\'})}")
print(json.dumps({"checked": len(doc["cases"]), "bad": sorted(set(bad))}))
'
  script_file <- tempfile(fileext = ".py")
  writeLines(script, script_file)
  out <- system2(py, c(script_file, shQuote(input)), stdout = TRUE, stderr = TRUE)
  res <- jsonlite::parse_json(paste(out, collapse = "\n"))
  expect_identical(res$checked, nrow(cases))
  # Known disagreements, each for a reason the help text does not show:
  # polygon()'s shading angle is documented as one value but vectorised;
  # cdplot()'s bw is only "passed to density" (whose bw takes numbers too);
  # setNames() turns logical names into strings.
  known <- c('graphics::polygon(angle = [-45, 45]): {"type": "number", "default": 45}',
             'graphics::cdplot(bw = 2): {"type": "string", "default": "nrd0"}',
             'stats::setNames(nm = [true, false]): {"type": "array", "items": {"type": "string"}}')
  bad <- setdiff(unlist(res$bad), known)
  expect_identical(bad, character(), info = paste(bad, collapse = "\n"))
})

test_that("functions that need an R object JSON cannot make are skipped (RULES R8.3)", {
  res <- with_messages(package_tools("stats", include = c("predict", "AIC", "hclust", "coef", "median",
                                                          "setNames", "na.omit", "residuals.lm", "screeplot")))
  # A fitted model, a dist object: no client can send one. ("An object
  # containing a sdev component" can come as JSON: {"sdev": [...]}.)
  expect_setequal(names(res$value), c("median", "setNames", "na.omit", "screeplot"))
  msg <- paste(res$messages, collapse = "")
  expect_match(msg, "predict (object: R object)", fixed = TRUE)
  expect_match(msg, "hclust (d: R object)", fixed = TRUE)
  expect_match(msg, "AIC (object: R object)", fixed = TRUE)
  # "an object for which a names attribute will be meaningful", "an R
  # object, typically a data frame" are values JSON can carry.
  expect_true("object" %in% names(input_schema(res$value$setNames)$properties))
  expect_true("object" %in% names(input_schema(res$value$na.omit)$properties))
  # residuals.lm() hands `object` on to predict(), whose methods reach
  # model.frame.default(), which tests missing(formula): still the model it
  # works on, without which it can only fail (`object$residuals`).
  expect_match(msg, "residuals.lm (object: R object)", fixed = TRUE)
  expect_error(stats:::residuals.lm(), "object")
  # An override brings one back, with a way to make the object.
  models <- list(fit = stats::lm(dist ~ speed, data = datasets::cars))
  tl <- stats_tools(include = "coef", overrides = list(coef = list(
    arguments = list(object = type_enum(names(models), "A fitted model, by name.")),
    convert = list(object = function(v) models[[v]])
  )))
  session <- mcp_handler(tl)
  res <- call_tool(session, "coef", list(object = "fit"))
  expect_false(res$isError)
  expect_identical(res$content[[1]]$text, direct_text(stats::coef(models$fit)))
})

test_that("a time series comes with its frequency and start (RULES R8.2)", {
  tl <- stats_tools(include = c("decompose", "stl", "acf"))
  session <- mcp_handler(tl)
  # Two years of monthly values: a frequency decompose() and stl() need,
  # which an array of numbers (a series of frequency one) does not carry.
  values <- as.numeric(datasets::co2[1:48])
  series <- list(data = as.list(values), frequency = 12, start = list(1959, 1))
  res <- call_tool(session, "decompose", list(x = series))
  expect_false(res$isError)
  # A "decomposed.ts" comes as the text R prints for it (RULES R8.5).
  expected <- stats::decompose(stats::ts(values, start = c(1959, 1), frequency = 12))
  expect_identical(res$content[[1]]$text, paste(utils::capture.output(print(expected)), collapse = "\n"))
  res <- call_tool(session, "stl", list(x = series, s.window = "periodic"))
  expect_false(res$isError, info = res$content[[1]]$text)
  res <- call_tool(session, "decompose", list(x = as.list(values)))
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "no or less than 2 periods", fixed = TRUE)
  # An array of values is still a series (of frequency one).
  res <- call_tool(session, "acf", list(x = as.list(values), plot = FALSE, lag.max = 3))
  expect_false(res$isError)
  # A malformed series is the client's error, said in its terms.
  # A malformed series, or one with a member the schema does not name
  # (`start_date` is not `start`), is the client's error, said in its terms.
  for (bad in list(list(data = as.list(values), frequency = "monthly"),
                   list(data = as.list(values), frequency = 12, start_date = 1959),
                   list(data = list("a", "b"), frequency = 12))) {
    res <- call_tool(session, "decompose", list(x = bad))
    expect_true(res$isError)
    expect_match(res$content[[1]]$text, "a time series is {\"data\": [numbers]", fixed = TRUE)
  }
})

test_that("a function argument a model-building function uses is required (RULES R8.3)", {
  # integrate() and by() use match.call(), like lm(), but call the function
  # they are given (match.fun(f), FUN(...)): left out, the tool could only
  # fail, so they are skipped and say why.
  res <- with_messages(package_tools("stats", include = c("integrate", "lm", "xtabs"),
                                     formulas = "string", allow = "evaluate_code"))
  expect_setequal(names(res$value), c("lm", "xtabs"))
  msg <- paste(res$messages, collapse = "")
  expect_match(msg, "integrate (f: function)", fixed = TRUE)
  expect_error(stats::integrate(lower = 0, upper = 1), "\"f\"")
  # lm() never uses na.action by name (only through match.call()): still
  # left out, and lm is served.
  expect_false("na.action" %in% names(input_schema(res$value$lm)$properties))
  res <- with_messages(package_tools("base", include = c("by", "nchar")))
  expect_named(res$value, "nchar")
  expect_match(paste(res$messages, collapse = ""), "by (FUN: function)", fixed = TRUE)
})

test_that("arguments a function handles when missing are not required (RULES R8.3)", {
  # smoothScatter() evaluates its `transformation` (RULES R8.8).
  g <- package_tools("graphics", include = c("hist", "smoothScatter"), quiet = TRUE,
                     allow = "evaluate_code")
  # hist.default() hands `ylab` on to plot.histogram(), which tests
  # missing(ylab); smoothScatter() hands `bandwidth` to a helper that does.
  expect_identical(unlist(input_schema(g$hist)$required), "x")
  expect_false("bandwidth" %in% unlist(input_schema(g$smoothScatter)$required))
  expect_true("bandwidth" %in% names(input_schema(g$smoothScatter)$properties))
  expect_identical(unlist(input_schema(stats_tools(include = "dbinom")$dbinom)$required),
                   c("x", "size", "prob"))
  res <- call_tool(mcp_handler(g), "hist", list(x = list(1, 2, 2, 3, 3, 3), plot = FALSE))
  expect_false(res$isError)
})

test_that("descriptions keep their first paragraph and every argument within a budget (RULES R8.1)", {
  tl <- stats_tools()
  manifest <- mcp_manifest(tl)
  expect_lte(nchar(manifest, "bytes"), 400000)
  docs <- package_docs("stats", find.package("stats"), "markdown", TRUE, names(tl))
  for (fname in names(tl)) {
    doc <- function_doc(fname, docs)$topic
    if (is.null(doc)) next
    first <- strsplit(doc$description, "\n\n", fixed = TRUE)[[1]][[1]]
    expect_true(grepl(first, tool_spec(tl[[fname]])$description, fixed = TRUE), info = fname)
    props <- input_schema(tl[[fname]])$properties
    for (arg in intersect(names(props), names(doc$arguments))) {
      expect_true(nzchar(props[[arg]]$description %||% ""), info = paste(fname, arg))
    }
  }
  # A shortened description says where the rest is.
  expect_match(tool_spec(tl$fft)$description, "(More: `?stats::fft`.)", fixed = TRUE)
})

test_that("formulas are left out unless a string form is chosen", {
  # Model functions evaluate expressions built from their arguments
  # (RULES R8.8): served only with "evaluate_code" allowed.
  expect_message(
    tl <- package_tools("stats", include = c("lm", "xtabs"), allow = "evaluate_code"),
    "lm \\(formula: formula\\)"
  )
  expect_named(tl, "xtabs")
  expect_false("formula" %in% names(input_schema(tl$xtabs)$properties))

  tl <- stats_tools(include = "lm", formulas = "string", allow = "evaluate_code")
  schema <- input_schema(tl$lm)
  expect_identical(schema$properties$formula$type, "string")
  # Model functions (match.call()) only require their first argument.
  expect_identical(schema$required, list("formula"))
  # Functions (na.action) are never accepted from a client.
  expect_false("na.action" %in% names(schema$properties))

  session <- mcp_handler(tl)
  df <- data.frame(y = c(1, 3, 2, 5, 4), x = 1:5)
  records <- lapply(seq_len(nrow(df)), function(i) as.list(df[i, ]))
  res <- call_tool(session, "lm", list(formula = "y ~ x", data = records))
  expect_false(res$isError)
  fit <- stats::lm(y ~ x, data = df)
  expect_match(res$content[[1]]$text, format(stats::coef(fit)[["x"]], digits = 4), fixed = TRUE)
  # Only a formula is accepted: the string is not evaluated.
  marker <- file.path(tempdir(), "mcplite-formula-marker")
  bad <- call_tool(session, "lm", list(formula = sprintf("file.create('%s')", marker)))
  expect_true(bad$isError)
  expect_match(bad$content[[1]]$text, "is not a formula")
  expect_false(file.exists(marker))
  # Its terms may call formula operators and arithmetic only (the model
  # function would evaluate them), and see no global variable.
  bad <- call_tool(session, "lm", list(formula = sprintf("y ~ x + file.create('%s')", marker),
                                       data = records))
  expect_true(bad$isError)
  expect_match(bad$content[[1]]$text, "calls file.create\\(\\), which a formula may not")
  expect_false(file.exists(marker))
  ok <- call_tool(session, "lm", list(formula = "log(y) ~ poly(x, 2)", data = records))
  expect_false(ok$isError)
  assign("mcplite_secret_column", 1:5, envir = globalenv())
  withr::defer(rm("mcplite_secret_column", envir = globalenv()))
  hidden <- call_tool(session, "lm", list(formula = "y ~ mcplite_secret_column", data = records))
  expect_true(hidden$isError)
  expect_match(hidden$content[[1]]$text, "mcplite_secret_column")
})

test_that("tools called through the server return what a direct call returns", {
  tl <- stats_tools(include = c("median", "qnorm", "p.adjust", "quantile", "sd", "t.test", "cor", "cov2cor",
                                "kruskal.test", "lowess"))
  session <- mcp_handler(tl)
  same <- function(name, args, value) {
    res <- call_tool(session, name, args)
    expect_false(res$isError, info = name)
    expect_identical(res$content[[1]]$text, direct_text(value), info = name)
  }
  same("median", list(x = list(1, 5, 2, 10)), stats::median(c(1, 5, 2, 10)))
  same("qnorm", list(p = 0.975, mean = 1, sd = 2), stats::qnorm(0.975, mean = 1, sd = 2))
  same("p.adjust", list(p = list(0.01, 0.02, 0.04), method = "BH"),
       stats::p.adjust(c(0.01, 0.02, 0.04), method = "BH"))
  same("quantile", list(x = as.list(1:9), probs = list(0.1, 0.5), type = 6L),
       stats::quantile(1:9, probs = c(0.1, 0.5), type = 6L))
  same("sd", list(x = list(2, 4, 4, 4, 5, 5, 7, 9)), stats::sd(c(2, 4, 4, 4, 5, 5, 7, 9)))
  same("cor", list(x = list(1, 2, 3, 4), y = list(2, 4, 5, 9), method = "spearman"),
       stats::cor(c(1, 2, 3, 4), c(2, 4, 5, 9), method = "spearman"))
  # A matrix comes as an array of rows ("a numeric vector, matrix or data
  # frame"; "symmetric numeric matrix").
  m <- cbind(c(1, 2, 3, 4), c(2, 4, 5, 9), c(1, 0, 1, 3))
  rows <- lapply(seq_len(nrow(m)), function(i) as.list(m[i, ]))
  same("cor", list(x = rows), stats::cor(m))
  same("cov2cor", list(V = lapply(1:3, function(i) as.list(stats::cov(m)[i, ]))), stats::cov2cor(stats::cov(m)))
  # Untyped ("a numeric vector of data values, or a list of numeric data
  # vectors"), samples of one length stay a list: a matrix would be one
  # sample and fail for want of `g`.
  samples <- list(c(2.9, 3.0, 2.5, 2.6, 3.2), c(3.8, 2.7, 4.0, 2.4, 3.1), c(2.8, 3.4, 3.7, 2.2, 2.0))
  res <- call_tool(session, "kruskal.test", list(x = lapply(samples, as.list)))
  expect_false(res$isError)
  expect_match(res$content[[1]]$text, sprintf("Kruskal-Wallis chi-squared = %s",
                                              format(stats::kruskal.test(samples)$statistic, digits = 4)),
               fixed = TRUE)
  # Coordinates as xy.coords() takes them: vectors, a two-column matrix or
  # an object with x and y.
  xs <- c(1, 2, 3, 4, 5, 6)
  ys <- c(2, 4, 3, 6, 5, 8)
  expect_length(input_schema(tl$lowess)$properties$x$anyOf, 3L)
  same("lowess", list(x = as.list(xs), y = as.list(ys)), stats::lowess(xs, ys))
  same("lowess", list(x = lapply(seq_along(xs), function(i) list(xs[[i]], ys[[i]]))), stats::lowess(cbind(xs, ys)))
  same("lowess", list(x = list(x = as.list(xs), y = as.list(ys))), stats::lowess(list(x = xs, y = ys)))
  # A data frame as an array of records.
  same("cor", list(x = list(list(a = 1, b = 2), list(a = 2, b = 4), list(a = 3, b = 5))),
       stats::cor(data.frame(a = c(1, 2, 3), b = c(2, 4, 5))))
  # A result that JSON cannot carry (class htest) is sent as R prints it.
  res <- call_tool(session, "t.test", list(x = list(1, 2, 3, 5), mu = 1))
  expect_identical(
    res$content[[1]]$text,
    paste(utils::capture.output(print(stats::t.test(c(1, 2, 3, 5), mu = 1))), collapse = "\n")
  )
  # R errors are tool errors, the server keeps going.
  err <- call_tool(session, "qnorm", list(p = "a"))
  expect_true(err$isError)
  expect_false(call_tool(session, "median", list(x = list(1)))$isError)
})

test_that("JSON values are converted to R vectors and data frames", {
  expect_identical(as_atomic(list(1L, 2.5, NULL), "number"), c(1, 2.5, NA))
  expect_identical(as_atomic(list(1L, 2L), "number"), c(1, 2))
  expect_identical(as_atomic(3, "integer"), 3L)
  expect_identical(as_atomic(list("a", NULL), "string"), c("a", NA))
  expect_identical(simplify_json(list(TRUE, FALSE)), c(TRUE, FALSE))
  expect_identical(simplify_json(list(1L, "a")), list(1L, "a"))
  expect_identical(
    simplify_json(list(list(a = 1L, b = "x"), list(a = 2L))),
    data.frame(a = 1:2, b = c("x", NA), stringsAsFactors = FALSE)
  )
  expect_identical(simplify_json(list(k = list(1L, 2L))), list(k = 1:2))
  # Where the schema names a matrix, arrays of one length and kind are a
  # matrix, one row each (as jsonlite simplifies them); ragged or mixed
  # arrays stay a list. Untyped, they stay a list of vectors.
  expect_identical(simplify_json(list(list(1, 2), list(3L, 4)), matrix = TRUE), rbind(c(1, 2), c(3, 4)))
  expect_identical(simplify_json(list(list("a"), list("b")), matrix = TRUE), rbind("a", "b"))
  expect_identical(simplify_json(list(list(1, 2), list(3)), matrix = TRUE), list(c(1, 2), 3))
  expect_identical(simplify_json(list(list(1, 2), list("a", "b")), matrix = TRUE), list(c(1, 2), c("a", "b")))
  expect_identical(simplify_json(list(list(1, 2), list(3L, 4))), list(c(1, 2), c(3, 4)))
  expect_s3_class(formula_from_json("y ~ x + z"), "formula")
  expect_error(formula_from_json("q()"), "not a formula")
})

test_that("data-frame results are shaped with .limit, .offset, .columns and .format", {
  withr::local_options(mcplite.shape.limit = 4L, mcplite.shape.max_limit = 6L)
  tl <- package_tools("utils", include = c("read.csv", "head"), shape = "read.csv", quiet = TRUE,
                      allow = "read_files", root = tempdir())
  schema <- input_schema(tl$read.csv)
  expect_identical(schema$properties$.limit[c("type", "minimum", "maximum", "default")],
                   list(type = "integer", minimum = 0L, maximum = 6L, default = 4L))
  expect_identical(unlist(schema$properties$.format$enum), c("records", "csv", "markdown"))
  expect_false(".limit" %in% names(input_schema(tl$head)$properties))

  csv <- paste(c("id,name,score", sprintf("%d,n%d,%s", 1:10, 1:10, 1:10 / 4)), collapse = "\n")
  full <- utils::read.csv(text = csv)
  session <- mcp_handler(tl)

  res <- call_tool(session, "read.csv", list(text = csv, .limit = 3L, .offset = 4L))
  sc <- res$structuredContent
  expect_identical(sc[c("total_rows", "offset", "limit", "returned_rows")],
                   list(total_rows = 10L, offset = 4L, limit = 3L, returned_rows = 3L))
  expect_identical(vapply(sc$rows, function(r) r$id, 1L), full$id[5:7])
  expect_identical(vapply(sc$rows, function(r) r$score, 1), full$score[5:7])
  expect_identical(jsonlite::parse_json(res$content[[1]]$text, simplifyVector = FALSE), sc)

  # The default limit and the hard maximum come from the options.
  expect_identical(call_tool(session, "read.csv", list(text = csv))$structuredContent$returned_rows, 4L)
  big <- call_tool(session, "read.csv", list(text = csv, .limit = 100L))$structuredContent
  expect_identical(big[c("limit", "returned_rows")], list(limit = 6L, returned_rows = 6L))
  # Past the end: no rows, still the total.
  end <- call_tool(session, "read.csv", list(text = csv, .offset = 20L))$structuredContent
  expect_identical(end[c("total_rows", "returned_rows")], list(total_rows = 10L, returned_rows = 0L))

  cols <- call_tool(session, "read.csv", list(text = csv, .columns = list("score", "id"), .limit = 2L))
  expect_identical(unlist(cols$structuredContent$columns), c("score", "id"))
  expect_identical(names(cols$structuredContent$rows[[1]]), c("score", "id"))

  as_csv <- call_tool(session, "read.csv", list(text = csv, .format = "csv", .offset = 2L, .limit = 2L))
  expect_identical(as_csv$content[[1]]$text, "Rows 3 to 4 of 10.")
  expect_identical(
    as_csv$content[[2]]$text,
    paste(utils::capture.output(utils::write.csv(full[3:4, ], row.names = FALSE)), collapse = "\n")
  )
  expect_identical(as_csv$structuredContent$total_rows, 10L)

  md <- call_tool(session, "read.csv", list(text = csv, .format = "markdown", .limit = 2L,
                                             .columns = list("name", "score")))
  expect_identical(md$content[[2]]$text, "| name | score |\n| --- | --- |\n| n1 | 0.25 |\n| n2 | 0.50 |")

  bad_col <- call_tool(session, "read.csv", list(text = csv, .columns = list("nope")))
  expect_true(bad_col$isError)
  expect_match(bad_col$content[[1]]$text, "nope")
  expect_true(call_tool(session, "read.csv", list(text = csv, .format = "xml"))$isError)
  expect_true(call_tool(session, "read.csv", list(text = csv, .limit = -1L))$isError)

  # Results that are not data frames are returned unchanged.
  shaped_head <- package_tools("utils", include = "head", shape = TRUE, quiet = TRUE)
  res <- call_tool(mcp_handler(shaped_head), "head", list(x = list(3, 1, 2), n = 2L, .limit = 1L))
  expect_identical(res$content[[1]]$text, direct_text(utils::head(c(3, 1, 2), n = 2L)))
  expect_null(res$structuredContent)
})

test_that("overrides replace inferred pieces without writing the tool", {
  tl <- stats_tools(
    include = c("median", "qnorm"),
    annotations = list(read_only_hint = TRUE),
    overrides = list(median = list(
      name = "sample_median", title = "Median", description = "The median of numbers.",
      arguments = list(x = type_array(type_number(), "The numbers.")),
      annotations = list(idempotent_hint = TRUE)
    ))
  )
  expect_named(tl, c("sample_median", "qnorm"))
  spec <- tool_spec(tl$sample_median)
  expect_identical(spec$description, "The median of numbers.")
  expect_identical(spec$annotations,
                   c(title = "\"Median\"", openWorldHint = "false", readOnlyHint = "true",
                     idempotentHint = "true"))
  expect_identical(input_schema(tl$sample_median)$properties$x,
                   list(type = "array", items = list(type = "number"), description = "The numbers."))
  expect_identical(tool_spec(tl$qnorm)$annotations[["readOnlyHint"]], "true")

  hidden <- stats_tools(include = "qnorm", overrides = list(qnorm = list(
    arguments = list(log.p = type_ignore(), mean = type_integer("Mean.", required = TRUE)),
    convert = list(p = function(v) 1 - unlist(v))
  )))
  schema <- input_schema(hidden$qnorm)
  expect_false("log.p" %in% names(schema$properties))
  expect_identical(schema$required, list("p", "mean"))
  res <- call_tool(mcp_handler(hidden), "qnorm", list(p = 0.025, mean = 1L))
  expect_identical(res$content[[1]]$text, direct_text(stats::qnorm(0.975, mean = 1)))

  expect_field_error(stats_tools(include = "qnorm", overrides = list(nope = list())), "overrides")
  expect_field_error(stats_tools(include = "qnorm", overrides = list(qnorm = list(colour = 1))),
                     "overrides$qnorm")
  expect_field_error(
    stats_tools(include = "qnorm", overrides = list(qnorm = list(arguments = list(p = "number")))),
    "overrides$qnorm$arguments$p"
  )
  expect_field_error(
    stats_tools(include = "qnorm", overrides = list(qnorm = list(arguments = list(zz = type_string())))),
    "overrides$qnorm$arguments"
  )
})

test_that("bad input gives clear errors naming the argument", {
  err <- expect_field_error(package_tools("mcpliteNoSuchPackage"), "package")
  expect_match(conditionMessage(err), "\"mcpliteNoSuchPackage\" is not installed")
  expect_field_error(package_tools(c("stats", "utils")), "package")
  err <- expect_field_error(package_tools("base", include = "pi"), "include")
  expect_match(conditionMessage(err), "\"pi\".*not a function")
  err <- expect_field_error(package_tools("stats", include = "no_such_export"), "include")
  expect_match(conditionMessage(err), "no_such_export")
  expect_field_error(package_tools("stats", pattern = "("), "pattern")
  expect_field_error(package_tools("stats", docs = "html"), "docs")
  expect_field_error(package_tools("stats", shape = "no_such_fun", include = "median"), "shape")
  expect_field_error(package_tools("stats", annotations = list(read_only_hint = "yes")),
                     "annotations$read_only_hint")
  # Exports that are not functions are simply not candidates.
  expect_false("pi" %in% names(package_tools("base", pattern = "^p", quiet = TRUE)))
})

test_that("include, exclude, patterns and prefix select and name the tools", {
  tl <- stats_tools(pattern = "^p(norm|binom|t)$", exclude = "pt", prefix = "stats_")
  expect_named(tl, c("stats_pbinom", "stats_pnorm"))
  tl <- stats_tools(include = c("qnorm", "pnorm", "dnorm"), exclude_pattern = "^d")
  expect_named(tl, c("pnorm", "qnorm"))
  expect_message(package_tools("stats", include = "tsp<-"), "not a valid tool name")
})

# -- a package built by the tests ------------------------------------------------

fixture_lib <- local({
  lib <- NULL
  function() {
    if (!is.null(lib)) {
      return(lib)
    }
    src <- file.path(tempdir(), "mcplitefixture")
    dir.create(file.path(src, "R"), recursive = TRUE, showWarnings = FALSE)
    dir.create(file.path(src, "man"), showWarnings = FALSE)
    writeLines(c(
      "Package: mcplitefixture", "Version: 1.2.3", "Title: Fixture", "Description: Fixture.",
      "License: MIT", "Author: a", "Maintainer: a <a@example.org>", "Encoding: UTF-8"
    ), file.path(src, "DESCRIPTION"))
    writeLines(c("export(documented, undocumented, titled_twice, some_data, apply_fun, in_env)"),
               file.path(src, "NAMESPACE"))
    writeLines(c(
      "documented <- function(n = 2L, label = c('a', 'b'), flag = FALSE) {",
      "  label <- match.arg(label); data.frame(i = seq_len(n), label = label, flag = flag)",
      "}",
      "undocumented <- function(x, y = 1.5) x * y",
      "titled_twice <- function(z) z",
      "apply_fun <- function(f, x) f(x)",
      "in_env <- function(x, envir = parent.frame()) x",
      "some_data <- 1:3"
    ), file.path(src, "R", "code.R"))
    writeLines(c(
      "\\name{documented}", "\\alias{documented}", "\\alias{titled_twice}",
      "\\title{Make a \\emph{small} table}",
      "\\description{Builds a data frame with \\code{n} rows.}",
      "\\usage{documented(n = 2L, label = c('a', 'b'), flag = FALSE)\ntitled_twice(z)}",
      "\\arguments{\\item{n}{an integer: the number of rows.}",
      "\\item{label}{the label.}\\item{flag}{logical flag.}\\item{z}{a character string.}}",
      "\\value{A data frame.}"
    ), file.path(src, "man", "documented.Rd"))
    writeLines(c(
      "\\name{apply_fun}", "\\alias{apply_fun}", "\\alias{in_env}", "\\title{Apply}",
      "\\description{Apply.}", "\\usage{apply_fun(f, x)\nin_env(x, envir = parent.frame())}",
      "\\arguments{\\item{f}{a function to apply.}\\item{x}{anything.}",
      "\\item{envir}{an environment.}}"
    ), file.path(src, "man", "apply_fun.Rd"))
    out <- file.path(tempdir(), "mcplite-fixture-lib")
    dir.create(out, showWarnings = FALSE)
    status <- system2(file.path(R.home("bin"), "R"),
                      c("CMD", "INSTALL", "--no-test-load", paste0("--library=", shQuote(out)), shQuote(src)),
                      stdout = FALSE, stderr = FALSE)
    if (status != 0) stop("could not install the fixture package")
    lib <<- out
    out
  }
})

# A copy of the installed fixture in a new library, with its help database
# rewritten from `edit(<parsed help pages>)` (the way R stores them at install
# time) or overwritten with `bytes`. A new path each time: R keeps lazy-load
# databases it has read in memory.
damaged_fixture <- function(edit = NULL, bytes = NULL) {
  lib <- fixture_lib()
  out <- tempfile("mcplite-damaged-lib")
  dir.create(out)
  file.copy(file.path(lib, "mcplitefixture"), out, recursive = TRUE)
  help <- file.path(out, "mcplitefixture", "help", "mcplitefixture")
  if (!is.null(edit)) {
    db <- edit(tools::Rd_db("mcplitefixture", lib.loc = lib))
    env <- new.env()
    for (nm in names(db)) assign(sub("\\.Rd$", "", nm), db[[nm]], envir = env)
    makeLazyLoadDB <- get("makeLazyLoadDB", envir = asNamespace("tools"))
    makeLazyLoadDB(env, help)
  }
  if (!is.null(bytes)) {
    writeBin(bytes, paste0(help, ".rdb"))
  }
  out
}

test_that("undocumented functions keep their signature; unusable ones are skipped", {
  lib <- fixture_lib()
  withr::local_libpaths(lib, action = "prefix")
  res <- with_messages(package_tools("mcplitefixture", cache = FALSE))
  tl <- res$value
  msgs <- res$messages
  expect_named(tl, c("documented", "in_env", "titled_twice", "undocumented"))
  expect_true(any(grepl("without a help page.*\"undocumented\"", msgs)))
  expect_true(any(grepl("apply_fun \\(f: function\\)", msgs)))
  expect_identical(
    tool_spec(tl$undocumented)$description,
    "R function `mcplitefixture::undocumented(x, y = 1.5)` (no help page)."
  )
  u <- input_schema(tl$undocumented)
  expect_identical(u$required, list("x"))
  expect_identical(u$properties$y, list(type = "number", default = 1.5))
  # An optional environment argument is left out, the R default applies.
  expect_named(input_schema(tl$in_env)$properties, "x")
  # Two functions on one help page: each title names its function (RULES R8.1).
  expect_identical(tool_spec(tl$titled_twice)$annotations[["title"]],
                   "\"titled_twice(): Make a small table\"")
  expect_identical(input_schema(tl$titled_twice)$properties$z$type, "string")
  d <- input_schema(tl$documented)
  expect_identical(d$properties$n[c("type", "default")], list(type = "integer", default = 2L))
  expect_identical(unlist(d$properties$label$enum), c("a", "b"))
  res <- call_tool(mcp_handler(tl), "documented", list(n = 3L, label = "b"))
  expect_identical(res$content[[1]]$text, direct_text(getExportedValue("mcplitefixture", "documented")(3L, "b")))
})

test_that("a help page that cannot be rendered, or a damaged help database, never breaks the catalogue", {
  # One page without a title: its functions are served without docs.
  lib <- damaged_fixture(edit = function(db) {
    rd <- db[["documented.Rd"]]
    keep <- vapply(rd, function(s) !identical(attr(s, "Rd_tag"), "\\title"), logical(1))
    db[["documented.Rd"]] <- structure(rd[keep], class = "Rd")
    db
  })
  withr::local_libpaths(lib, action = "prefix")
  # Docs are read from the copy the namespace is loaded from.
  unloadNamespace("mcplitefixture")
  withr::defer(unloadNamespace("mcplitefixture"))
  res <- with_messages(package_tools("mcplitefixture", cache = FALSE))
  tl <- res$value
  expect_true(any(grepl("could not be used: documented \\(help page documented: .*title", res$messages)))
  expect_true(all(c("documented", "titled_twice", "undocumented") %in% names(tl)))
  expect_match(tool_spec(tl$documented)$description, "no help page")
  expect_identical(tool_spec(tl$in_env)$annotations[["title"]], "\"in_env(): Apply\"")

  # A help database that cannot be read at all.
  lib <- damaged_fixture(bytes = as.raw(rep(0x42, 64)))
  withr::local_libpaths(lib, action = "prefix")
  unloadNamespace("mcplitefixture")
  res <- with_messages(package_tools("mcplitefixture", cache = FALSE))
  tl <- res$value
  expect_true(any(grepl("no help pages used, its help pages could not be read", res$messages)))
  expect_true(all(c("documented", "undocumented") %in% names(tl)))
  expect_match(tool_spec(tl$documented)$description, "^R function")
})

test_that("rendered help pages and inferred schemas are cached, keyed by the installed files", {
  dir <- file.path(tempdir(), "mcplite-cache-test")
  unlink(dir, recursive = TRUE)
  rm(list = ls(docs_memory), envir = docs_memory)
  a <- package_tools("tools", cache = dir, quiet = TRUE)
  file <- file.path(dir, "rd-tools-markdown.rds")
  expect_true(file.exists(file))
  # A fresh session (empty memory cache) reads the file, with the same result.
  rm(list = ls(docs_memory), envir = docs_memory)
  cached <- readRDS(file)
  expect_true(all(names(a) %in% names(cached$inferred$omit)))
  cached$inferred$omit$file_ext$description <- "Changed in the cache"
  saveRDS(cached, file)
  b <- package_tools("tools", cache = dir, quiet = TRUE)
  expect_identical(tool_spec(b$file_ext)$description, "Changed in the cache")
  expect_identical(mcp_manifest(b[names(b) != "file_ext"]), mcp_manifest(a[names(a) != "file_ext"]))
  # A stale key (other package files) is ignored and the file rewritten.
  rm(list = ls(docs_memory), envir = docs_memory)
  cached$key$files <- c("0@0", "0@0")
  saveRDS(cached, file)
  c2 <- package_tools("tools", cache = dir, quiet = TRUE)
  expect_identical(mcp_manifest(c2), mcp_manifest(a))
  expect_identical(readRDS(file)$key, docs_cache_key("tools", find.package("tools"), "markdown"))
  # Without a cache the result is the same.
  expect_identical(mcp_manifest(package_tools("tools", cache = FALSE, quiet = TRUE)), mcp_manifest(a))
})

# -- manifest ----------------------------------------------------------------------

test_that("the manifest lists the catalogue exactly as the server sends it", {
  tl <- c(stats_tools(include = c("median", "qnorm")),
          list(tool(function(x) x, "Echo.", name = "echo", arguments = list(x = type_string()),
                    output_schema = type_object(x = type_string()))))
  text <- mcp_manifest(tl, instructions = "Use the tools.")
  expect_s3_class(text, "json")
  m <- jsonlite::parse_json(text, simplifyVector = FALSE)
  expect_named(m, c("manifestVersion", "server", "protocolVersions", "instructions", "packages", "tools"))
  expect_identical(m$server, list(name = "mcplite", version = as.character(utils::packageVersion("mcplite"))))
  expect_identical(unlist(m$protocolVersions), c("2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"))
  expect_identical(m$instructions, "Use the tools.")
  expect_identical(m$packages, list(list(package = "stats", version = as.character(getRversion()))))
  expect_identical(vapply(m$tools, function(t) t$name, ""), c("median", "qnorm", "echo"))

  # Each tool line is, byte for byte, an element of the server's tools/list.
  listing <- mcp_handle(mcp_handler(tl, "Use the tools."), list(
    jsonrpc = "2.0", id = 7L, method = "tools/list", params = list(`_meta` = modern_meta())
  ))
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  tool_lines <- sub(",$", "", sub("^    ", "", lines[grepl("^    \\{", lines)]))
  expect_length(tool_lines, 3L)
  expect_true(grepl(paste0("\"tools\":[", paste(tool_lines, collapse = ","), "]"), listing, fixed = TRUE))

  expect_match(mcp_manifest(list()), "\"tools\": []", fixed = TRUE)
  expect_match(mcp_manifest(list()), "\"instructions\": null", fixed = TRUE)
  expect_field_error(mcp_manifest(tl, path = 1), "path")
  expect_field_error(mcp_manifest(list(1)), "tools[[1]]")
})

test_that("the manifest is byte-identical across runs and processes", {
  skip_if_not_installed("processx")
  code <- '
    args <- commandArgs(TRUE)
    options(mcplite.cache_dir = args[[2]])
    tools <- c(mcplite::package_tools("stats", quiet = TRUE),
               mcplite::package_tools("utils", include = c("head", "read.csv"), shape = TRUE, quiet = TRUE,
                                      allow = "read_files", root = tempdir()))
    mcplite::mcp_manifest(tools, instructions = "Statistics.", path = args[[1]])
  '
  run <- function(path, cache) {
    res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", code, path, cache),
                         env = c("current", R_LIBS = paste(.libPaths(), collapse = ":")),
                         error_on_status = FALSE)
    expect_identical(res$status, 0L, info = res$stderr)
    readBin(path, "raw", file.info(path)$size)
  }
  cold <- file.path(tempdir(), "mcplite-cold-cache")
  unlink(cold, recursive = TRUE)
  first <- run(tempfile(fileext = ".json"), cold)
  second <- run(tempfile(fileext = ".json"), cold)
  expect_identical(first, second)

  tools <- c(package_tools("stats", quiet = TRUE),
             package_tools("utils", include = c("head", "read.csv"), shape = TRUE, quiet = TRUE,
                           allow = "read_files", root = tempdir()))
  here <- tempfile(fileext = ".json")
  mcp_manifest(tools, instructions = "Statistics.", path = here)
  expect_identical(readBin(here, "raw", file.info(here)$size), first)
  expect_identical(charToRaw(mcp_manifest(tools, instructions = "Statistics.")), first)
  expect_false(any(first == as.raw(0x0d)))
})

# -- schema validity ------------------------------------------------------------------

test_that("every generated tool of stats, utils and tools is valid against every MCP schema", {
  py <- venv_python()
  skip_if(is.null(py), "no Python venv with jsonschema")
  schemas <- test_data_dir("mcp-schema", "MCPLITE_SCHEMA_DIR", "2026-07-28.json")
  # Every capability allowed, so that the guarded tools are validated too.
  everything <- names(capability_labels)
  tools <- c(package_tools("stats", quiet = TRUE, formulas = "string", allow = everything, root = tempdir()),
             package_tools("utils", shape = TRUE, quiet = TRUE, allow = everything, root = tempdir()),
             package_tools("tools", formulas = "string", quiet = TRUE, allow = everything, root = tempdir()))
  expect_gt(length(tools), 600L)
  # The tools/list result the server sends in each protocol version.
  listings <- list()
  for (version in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    session <- mcp_handler(tools)
    mcp_handle(session, list(jsonrpc = "2.0", id = 0L, method = "initialize", params = list(
      protocolVersion = version, capabilities = structure(list(), names = character()),
      clientInfo = list(name = "test", version = "1")
    )))
    listings[[version]] <- mcp_handle(session, list(jsonrpc = "2.0", id = 1L, method = "tools/list"))
  }
  listings[["2026-07-28"]] <- mcp_handle(mcp_handler(tools), list(
    jsonrpc = "2.0", id = 1L, method = "tools/list", params = list(`_meta` = modern_meta())
  ))
  responses <- tempfile(fileext = ".json")
  writeLines(paste0("{", paste0("\"", names(listings), "\":", unlist(listings), collapse = ","), "}"),
             responses, useBytes = TRUE)
  script <- '
import json, sys
import jsonschema
from referencing import Registry, Resource
responses = json.load(open(sys.argv[1], encoding="utf-8"))
schema_dir = sys.argv[2]
bad = []
counts = {}
for version, response in responses.items():
    doc = json.load(open(f"{schema_dir}/{version}.json", encoding="utf-8"))
    section = "$defs" if "$defs" in doc else "definitions"
    uri = f"urn:mcp-schema:{version}"
    registry = Registry().with_resource(uri, Resource.from_contents(doc))
    cls = jsonschema.validators.validator_for(doc)
    validator = cls({"$ref": f"{uri}#/{section}/ListToolsResult"}, registry=registry)
    result = response["result"]
    for err in validator.iter_errors(result):
        bad.append(f"{version}: {list(err.absolute_path)[:3]}: {err.message[:200]}")
    for tool in result["tools"]:
        try:
            jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        except jsonschema.SchemaError as e:
            bad.append(f"{version} {tool[\'name\']}: not valid JSON Schema: {e.message[:200]}")
    counts[version] = len(result["tools"])
print(json.dumps({"counts": counts, "errors": bad[:20]}))
'
  script_file <- tempfile(fileext = ".py")
  writeLines(script, script_file)
  out <- system2(py, c(script_file, shQuote(responses), shQuote(schemas)), stdout = TRUE, stderr = TRUE)
  res <- jsonlite::parse_json(paste(out, collapse = "\n"))
  expect_identical(unlist(res$counts), stats::setNames(rep(length(tools), 4L), names(listings)))
  expect_identical(unlist(res$errors), NULL, info = paste(unlist(res$errors), collapse = "\n"))
})

# -- capabilities (RULES R8.8) ------------------------------------------------------

# The whole JSON-RPC answer of a tools/call (an unknown tool is an error, not
# a result).
call_raw <- function(session, name, args = structure(list(), names = character())) {
  line <- mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = name, arguments = args, `_meta` = modern_meta())
  ))
  jsonlite::parse_json(line, simplifyVector = FALSE)
}

# What package_tools() decides for each of `funs`: the classification frame
# (fun, served, capabilities), selected by pattern so that no refusal
# interrupts. A function whose required argument JSON cannot carry
# (do.call's `what`) is no tool at all and has no row.
decisions <- function(package, funs, ...) {
  pat <- paste0("^(", paste(gsub(".", "\\.", funs, fixed = TRUE), collapse = "|"), ")$")
  attr(package_tools(package, pattern = pat, quiet = TRUE, ...), "capabilities")
}

test_that("well-known functions keep being served or left out as reviewed", {
  skip_if_not_installed("data.table")
  safe <- list(
    base = c("mean", "toupper", "seq", "paste", "sort", "order", "table", "data.frame", "strsplit",
             "gsub", "rev", "unique", "sum", "round", "nchar", "sprintf", "format", "rep", "max",
             "merge", "Sys.time", "identity", "message"),
    stats = c("median", "quantile", "t.test", "sd", "var", "cor", "qnorm", "p.adjust", "fisher.test",
              "chisq.test", "wilcox.test", "weighted.mean", "fivenum", "IQR", "mad"),
    utils = c("head", "tail", "combn", "type.convert", "URLencode", "compareVersion", "modifyList",
              "glob2rx", "object.size"),
    tools = c("file_ext", "toTitleCase"),
    grDevices = c("rgb", "col2rgb", "hcl.colors"),
    jsonlite = c("toJSON", "prettify", "minify", "validate", "unbox"),
    data.table = c("data.table", "setkey", "rbindlist", "melt", "year", "month", "shift", "frollmean",
                   "fifelse", "uniqueN", "between")
  )
  unsafe <- list(
    base = c(system = "run_commands", system2 = "run_commands", dyn.load = "run_commands",
             quit = "processes", q = "processes", Sys.getenv = "read_secrets",
             Sys.setenv = "change_session", setwd = "change_session", assign = "change_session",
             options = "change_session", library = "change_session", dyn.unload = "change_session",
             autoloader = "change_session", source = "evaluate_code", readLines = "read_files",
             readRDS = "read_files", list.files = "read_files", file.exists = "read_files",
             unlink = "write_files", writeLines = "write_files", file.remove = "write_files",
             file.rename = "write_files", file.copy = "write_files", get = "call_functions",
             do.call = "call_functions", match.fun = "call_functions", url = "network",
             socketConnection = "network", cat = "run_commands", textConnection = "change_session",
             .Call = "call_functions", .C = "call_functions", .External = "call_functions"),
    stats = c(read.ftable = "read_files", write.ftable = "write_files", formula = "evaluate_code",
              C = "call_functions"),
    utils = c(read.csv = "read_files", write.table = "write_files", write.csv = "write_files",
              download.file = "network", install.packages = "network",
              remove.packages = "write_files", browseURL = "run_commands", Rprof = "write_files",
              zip = "run_commands", make.socket = "network", nsl = "network"),
    tools = c(pskill = "processes", psnice = "processes", md5sum = "read_files",
              texi2pdf = "run_commands", startDynamicHelp = "network"),
    jsonlite = c(fromJSON = "read_files", read_json = "read_files", write_json = "write_files",
                 unserializeJSON = "evaluate_code"),
    data.table = c(fread = "run_commands", fwrite = "write_files", setDTthreads = "change_session"),
    grDevices = c(pdf.options = "change_session", ps.options = "change_session")
  )
  for (pkg in names(safe)) {
    d <- decisions(pkg, c(safe[[pkg]], names(unsafe[[pkg]])))
    for (f in safe[[pkg]]) {
      expect_identical(d$capabilities[d$fun == f], "", info = paste0(pkg, "::", f))
      expect_identical(d$served[d$fun == f], TRUE, info = paste0(pkg, "::", f))
    }
    for (f in names(unsafe[[pkg]])) {
      info <- paste0(pkg, "::", f, " has ", paste(d$capabilities[d$fun == f], collapse = ""))
      expect_false(isTRUE(d$served[d$fun == f]), info = info)
      if (f %in% d$fun) {
        expect_true(unsafe[[pkg]][[f]] %in% strsplit(d$capabilities[d$fun == f], ",", fixed = TRUE)[[1]],
                    info = info)
      }
    }
  }
})

test_that("every .Internal() function of this R has been reviewed", {
  known <- c(names(capability_internal), capability_pure)
  expect_identical(setdiff(builtins(internal = TRUE), known), character())
})

test_that("a package whose code quotes an empty argument is analysed (RULES R8.8)", {
  skip_if_not_installed("hms")
  # hms's code holds `quote(expr = )`, which once stopped the analysis with
  # 'argument "q" is missing'. (What its functions reach through vctrs is
  # more than computing: only is_hms() is served by default.)
  tl <- package_tools("hms", quiet = TRUE)
  expect_true("is_hms" %in% names(tl))
})

test_that("commands do not run unless allowed (run_commands)", {
  skip_if_not_installed("data.table")
  marker <- tempfile("mcplite-cmd-")
  msgs <- with_messages(tl <- package_tools("base", pattern = "^(system|mean)$"))$messages
  expect_named(tl, "mean")
  expect_true(any(grepl("left out 1 function.*runs commands or programs \\(1\\): system", msgs)))
  res <- call_raw(mcp_handler(tl), "system", list(command = paste("touch", shQuote(marker))))
  expect_identical(res$error$code, -32602L)
  expect_false(file.exists(marker))
  # fread(cmd = ) (issue 28) is left out too.
  expect_false("fread" %in% names(package_tools("data.table", pattern = "^(fread|fifelse)$", quiet = TRUE)))
  # Named in `include`: refused, saying which capability and how to allow it.
  err <- expect_error(package_tools("base", include = "system"), class = "mcplite_error")
  expect_match(conditionMessage(err), "system\\(\\) runs commands or programs")
  expect_match(conditionMessage(err), "allow = \"run_commands\"", fixed = TRUE)
  tl <- package_tools("base", include = "system", allow = "run_commands", quiet = TRUE)
  res <- call_tool(mcp_handler(tl), "system", list(command = paste("touch", shQuote(marker))))
  expect_false(res$isError)
  expect_true(file.exists(marker))
  expect_identical(attr(tl, "capabilities")$capabilities, "run_commands")
})

test_that("files are neither read nor written unless allowed, and then only inside `root`", {
  root <- file.path(tempdir(), "mcplite-root")
  unlink(root, recursive = TRUE)
  dir.create(root)
  outside <- tempfile("mcplite-secret-")
  writeLines("TOP SECRET", outside)
  writeLines("hello", file.path(root, "inside.txt"))
  funs <- c("readLines", "writeLines", "unlink", "file.exists")
  tl <- package_tools("base", include = "nchar", quiet = TRUE)
  for (f in funs) {
    expect_identical(call_raw(mcp_handler(tl), f, list(con = outside))$error$code, -32602L)
  }
  expect_false(any(funs %in% names(package_tools("base", pattern = "^(readLines|writeLines|unlink)$",
                                                 quiet = TRUE))))
  err <- expect_error(package_tools("base", include = c("readLines", "writeLines")), class = "mcplite_error")
  expect_match(conditionMessage(err), "allow = c(\"read_files\", \"write_files\")` and a `root`", fixed = TRUE)

  tl <- package_tools("base", include = c("readLines", "writeLines", "unlink"),
                      allow = c("read_files", "write_files"), root = root, quiet = TRUE)
  s <- mcp_handler(tl)
  expect_identical(call_tool(s, "readLines", list(con = "inside.txt"))$content[[1]]$text,
                   direct_text("hello"))
  expect_identical(call_tool(s, "readLines", list(con = file.path(root, "inside.txt")))$isError, FALSE)
  for (path in list(outside, paste0("../", basename(outside)), "/etc/hostname", "|cat /etc/hostname",
                    "~/.Renviron", "http://127.0.0.1:9/")) {
    res <- call_tool(s, "readLines", list(con = path))
    expect_true(res$isError, info = path)
    expect_false(grepl("TOP SECRET", res$content[[1]]$text), info = path)
  }
  # A symbolic link inside the root that points outside is outside.
  file.symlink(outside, file.path(root, "link.txt"))
  res <- call_tool(s, "readLines", list(con = "link.txt"))
  expect_true(res$isError)
  expect_false(grepl("TOP SECRET", res$content[[1]]$text))
  # Writing: relative paths land in the root (the working directory during
  # the call), not in the server's working directory.
  expect_false(call_tool(s, "writeLines", list(text = "new", con = "new.txt"))$isError)
  expect_identical(readLines(file.path(root, "new.txt")), "new")
  expect_false(file.exists("new.txt"))
  target <- tempfile("mcplite-write-")
  expect_true(call_tool(s, "writeLines", list(text = "x", con = target))$isError)
  expect_false(file.exists(target))
  expect_true(call_tool(s, "unlink", list(x = outside))$isError)
  expect_true(file.exists(outside))
  expect_false(call_tool(s, "unlink", list(x = "new.txt"))$isError)
  expect_false(file.exists(file.path(root, "new.txt")))
  # Tools that change files say so (MCP tool annotations).
  ann <- tool_spec(tl$writeLines)$annotations
  expect_identical(ann[c("readOnlyHint", "destructiveHint", "openWorldHint")],
                   c(readOnlyHint = "false", destructiveHint = "true", openWorldHint = "false"))
  expect_identical(tool_spec(tl$readLines)$annotations[["readOnlyHint"]], "true")
})

test_that("the network is not reached unless allowed (network)", {
  skip_if_not_installed("processx")
  py <- Sys.which("python3")
  skip_if(!nzchar(py), "python3 not found")
  dir <- tempfile("mcplite-www-")
  dir.create(dir)
  writeLines("ok", file.path(dir, "index.html"))
  port <- local({
    s <- serverSocket(0L)
    on.exit(close(s))
    NULL
  })
  srv <- processx::process$new(py, c("-u", "-m", "http.server", "0", "--bind", "127.0.0.1"), wd = dir,
                               stdout = "|", stderr = "2>&1")
  withr::defer(srv$kill())
  line <- ""
  deadline <- Sys.time() + 30
  while (!grepl("port [0-9]+", line) && Sys.time() < deadline) {
    srv$poll_io(500L)
    line <- paste(line, paste(srv$read_output_lines(), collapse = "\n"))
  }
  port <- sub("^.*port ([0-9]+).*$", "\\1", line)
  url <- paste0("http://127.0.0.1:", port, "/index.html")
  tl <- package_tools("base", pattern = "^(curlGetHeaders|nchar)$", quiet = TRUE)
  expect_named(tl, "nchar")
  expect_identical(call_raw(mcp_handler(tl), "curlGetHeaders", list(url = url))$error$code, -32602L)
  tl <- package_tools("base", include = "curlGetHeaders", allow = "network", quiet = TRUE)
  expect_identical(tool_spec(tl$curlGetHeaders)$annotations[["openWorldHint"]], "true")
  res <- call_tool(mcp_handler(tl), "curlGetHeaders", list(url = url))
  expect_false(res$isError)
  expect_match(res$content[[1]]$text, "200")
  # Only the allowed call reached the server.
  srv$poll_io(1000L)
  log <- paste(srv$read_output_lines(), collapse = "\n")
  expect_identical(lengths(regmatches(log, gregexpr("\"HEAD /index.html", log))), 1L)
})

test_that("processes are not signalled unless allowed (processes)", {
  skip_if_not_installed("processx")
  p <- processx::process$new("sleep", "60")
  withr::defer(p$kill())
  tl <- package_tools("tools", pattern = "^(pskill|file_ext)$", quiet = TRUE)
  expect_named(tl, "file_ext")
  expect_identical(call_raw(mcp_handler(tl), "pskill", list(pid = p$get_pid()))$error$code, -32602L)
  expect_true(p$is_alive())
  tl <- package_tools("tools", include = "pskill", allow = "processes", quiet = TRUE)
  expect_false(call_tool(mcp_handler(tl), "pskill", list(pid = p$get_pid()))$isError)
  p$wait(10000)
  expect_false(p$is_alive())
})

test_that("the session is not changed unless allowed (change_session)", {
  wd <- getwd()
  dir <- tempfile("mcplite-wd-")
  dir.create(dir)
  tl <- package_tools("base", pattern = "^(setwd|getwd)$", quiet = TRUE)
  expect_named(tl, "getwd")
  expect_identical(call_raw(mcp_handler(tl), "setwd", list(dir = dir))$error$code, -32602L)
  expect_identical(getwd(), wd)
  # A text connection opened for writing assigns a global variable.
  tl <- package_tools("base", pattern = "^(textConnection|nchar)$", quiet = TRUE)
  expect_named(tl, "nchar")
  res <- call_raw(mcp_handler(tl), "textConnection", list(object = "mcplite_tc_probe", open = "w"))
  expect_identical(res$error$code, -32602L)
  expect_false(exists("mcplite_tc_probe", envir = globalenv()))
  tl <- package_tools("base", include = "setwd", allow = "change_session", quiet = TRUE)
  withr::defer(setwd(wd))
  expect_false(call_tool(mcp_handler(tl), "setwd", list(dir = dir))$isError)
  expect_identical(normalizePath(getwd()), normalizePath(dir))
})

test_that("environment variables are not read unless allowed (read_secrets)", {
  withr::local_envvar(MCPLITE_TEST_SECRET = "s3cr3t-token")
  tl <- package_tools("base", pattern = "^(Sys.getenv|Sys.time)$", quiet = TRUE)
  expect_named(tl, "Sys.time")
  res <- call_raw(mcp_handler(tl), "Sys.getenv", list(x = "MCPLITE_TEST_SECRET"))
  expect_identical(res$error$code, -32602L)
  expect_false(grepl("s3cr3t", jsonlite::toJSON(res)))
  tl <- package_tools("base", include = "Sys.getenv", allow = "read_secrets", quiet = TRUE)
  res <- call_tool(mcp_handler(tl), "Sys.getenv", list(x = "MCPLITE_TEST_SECRET"))
  expect_match(res$content[[1]]$text, "s3cr3t-token", fixed = TRUE)
})

test_that("code is not evaluated unless allowed (evaluate_code)", {
  marker <- tempfile("mcplite-eval-")
  # formula.character() evaluates a string in parentheses.
  code <- sprintf("(file.create('%s'))", marker)
  tl <- package_tools("stats", pattern = "^(formula|median)$", quiet = TRUE)
  expect_named(tl, "median")
  expect_identical(call_raw(mcp_handler(tl), "formula", list(x = code))$error$code, -32602L)
  expect_false(file.exists(marker))
  # Allowed, it really does (with a deprecation warning).
  tl <- package_tools("stats", include = "formula", allow = "evaluate_code", quiet = TRUE)
  suppressWarnings(call_tool(mcp_handler(tl), "formula", list(x = code)))
  expect_true(file.exists(marker))
})

test_that("functions named by the client are not called unless allowed (call_functions)", {
  marker <- tempfile("mcplite-fun-")
  tl <- package_tools("base", pattern = "^(outer|rev)$", quiet = TRUE)
  expect_named(tl, "rev")
  res <- call_raw(mcp_handler(tl), "outer", list(X = marker, Y = "", FUN = "file.create"))
  expect_identical(res$error$code, -32602L)
  expect_false(file.exists(marker))
  tl <- package_tools("base", include = "outer", allow = "call_functions", quiet = TRUE)
  res <- call_tool(mcp_handler(tl), "outer", list(X = list(1, 2), Y = list(10), FUN = "+"))
  expect_identical(res$content[[1]]$text, direct_text(outer(c(1, 2), 10, "+")))
})

test_that("`allow` and `root` are checked, the classification is published", {
  expect_field_error(package_tools("base", include = "mean", allow = "everything"), "allow")
  expect_field_error(package_tools("base", include = "mean", allow = NA_character_), "allow")
  expect_field_error(package_tools("base", include = "readLines", allow = "read_files"), "root")
  expect_field_error(package_tools("base", include = "readLines", allow = "read_files",
                                   root = tempfile()), "root")
  expect_field_error(package_tools("base", include = "mean", root = tempdir()), "root")
  tl <- package_tools("base", pattern = "^(mean|system|readLines)$", quiet = TRUE)
  cl <- attr(tl, "capabilities")
  expect_identical(cl$fun, c("mean", "readLines", "system"))
  expect_identical(cl$served, c(TRUE, FALSE, FALSE))
  expect_identical(cl$capabilities, c("", "read_files", "run_commands"))
  expect_identical(environment(tl$mean)$package_info$capabilities, character())
  ann <- tool_spec(tl$mean)$annotations
  expect_identical(ann[c("readOnlyHint", "openWorldHint")], c(readOnlyHint = "true", openWorldHint = "false"))
  expect_false("destructiveHint" %in% names(ann))
  # Annotations the user gives win.
  tl <- package_tools("base", include = "mean", annotations = list(readOnlyHint = FALSE), quiet = TRUE)
  expect_identical(tool_spec(tl$mean)$annotations[["readOnlyHint"]], "false")
})

test_that("paths are confined to the root", {
  root <- normalizePath(tempdir())
  expect_true(path_inside("a/b.txt", root))
  expect_true(path_inside(file.path(root, "x"), root))
  expect_true(path_inside(root, root))
  expect_false(path_inside("../x", root))
  expect_false(path_inside("a/../../x", root))
  expect_false(path_inside("/etc/passwd", root))
  expect_false(path_inside("|ls", root))
  expect_false(path_inside(paste0(root, "-other/x"), root))
})
