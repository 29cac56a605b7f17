# package_tools(): argument types inferred from defaults, documentation and
# names (RULES R8.2, R8.3), on real installed packages (R/package-types.R).

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
