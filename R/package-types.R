# package_tools(), the type of each argument (RULES R8.2, R8.3): inferred from
# its default, its documentation and its name.

# -- type inference --------------------------------------------------------------

# list(schema, required, formula) or list(unsupported = reason, required).
infer_argument <- function(arg, default, sig, argdocs, formulas, md) {
  doc <- argdocs$docs[arg]
  doc <- if (length(doc) == 1L && !is.na(doc)) unname(doc) else NULL
  doc_kind <- if (is.null(doc)) "none" else argdocs$kinds[[arg]]
  doc_guessed <- startsWith(doc_kind, "guess:")
  doc_kind <- sub("^guess:", "", doc_kind)
  guessed <- FALSE
  optional <- !is.null(doc) && isTRUE(argdocs$optional[[arg]])
  has_default <- !is_missing_arg(default)
  required <- !has_default && !(arg %in% sig$tested_missing) && !optional &&
    !(sig$match_call && !identical(arg, sig$first_without_default)) && !(arg %in% sig$up_to_methods)
  lit <- if (has_default) default_literal(default, sig, arg) else list(kind = "none")
  if (lit$kind == "value" && is.logical(lit$value) && length(lit$value) == 1L && is.na(lit$value)) {
    # NA is R's "no value" (mtext(cex = NA), fifelse(na = NA)), not a sign of
    # a logical: typed as a NULL default is (RULES R8.2).
    lit <- list(kind = "null")
  }
  if (lit$kind == "function" || (lit$kind %in% c("none", "null", "unknown") &&
                                  doc_kind %in% c("function", "environment", "robject"))) {
    kind <- if (lit$kind == "function") "function" else if (doc_kind == "robject") "R object" else doc_kind
    # Model-building functions (those using match.call()) treat functions
    # and environments they never use by name as optional (lm(na.action =)):
    # leave them out instead of skipping the tool. One the function calls or
    # hands on by name is needed (integrate(f), by(FUN), stats4::mle(minuslogl)),
    # and an R object without a default is what such a function works on
    # (hclust(d =)).
    if (sig$match_call && kind != "R object" && !has_default && !optional &&
        !(arg %in% sig$tested_missing)) {
      required <- arg %in% sig$used
    }
    if (kind == "R object" && !has_default && !optional && !(arg %in% sig$own_missing) &&
        !(sig$match_call && !identical(arg, sig$first_without_default))) {
      # Handed on to a function that copes with it missing (residuals.lm(object)
      # reaches model.frame.default(formula) through predict()), an R object
      # without a default is still what the function works on: left out, the
      # tool could only fail.
      required <- TRUE
    }
    return(list(unsupported = kind, required = required))
  }
  if (lit$kind %in% c("none", "null", "unknown") && doc_kind == "formula" && formulas == "omit") {
    return(list(unsupported = "formula", required = required))
  }
  schema <- NULL
  default_json <- NULL
  if (lit$kind == "value") {
    v <- lit$value
    if (is.character(v) && length(v) > 1L && arg %in% sig$match_arg) {
      enum <- list(type = "string", enum = as.list(unique(v)))
      if (arg %in% sig$several_ok) {
        schema <- list(type = "array", items = enum)
      } else {
        schema <- enum
        default_json <- v[[1L]]
      }
    } else if (doc_kind == "several" || startsWith(doc_kind, "any:")) {
      # The documentation allows other kinds of value than the default's
      # (hist(breaks = "Sturges") also takes numbers): the kinds it names
      # when the default is one of them, else no type; the default is shown
      # (RULES R8.2).
      kinds <- alternatives_of(doc_kind)
      if (default_fits(v, kinds)) {
        schema <- alternatives_schema(kinds)
        guessed <- doc_guessed
      }
      if (length(v) == 1L && !is.na(v)) default_json <- v
    } else {
      kind <- json_kind(v, doc_kind)
      if (!is.null(kind)) {
        if (length(v) == 1L) {
          kinds <- widened_kinds(kind, doc, doc_kind)
          schema <- alternatives_schema(kinds)
          # A vector of the default's kind is no guess (a scalar is a vector
          # of length one); another kind is.
          guessed <- any(!kinds %in% c(kind, "numbers", "strings"))
          if (!is.na(v)) default_json <- v
        } else if (length(v) > 1L) {
          schema <- list(type = "array", items = list(type = kind))
        }
      }
    }
  } else if (lit$kind %in% c("none", "null", "unknown")) {
    kind <- doc_kind
    guessed <- doc_guessed
    if (kind == "none" && lit$kind == "unknown") {
      # A computed default: the kind of value it computes.
      kind <- default_expression_kind(default, sig) %||% "none"
      # Numbers computed by default (seq_along(x)) where the text speaks of
      # character values (rowid(cols =): column names or numbers).
      if (kind == "numbers" && !is.null(doc) && grepl("\\bcharacter\\b", tolower(doc), perl = TRUE)) {
        kind <- "none"
      }
      guessed <- kind != "none"
    }
    if (kind == "none" && arg %in% names(name_kinds) && !is.null(doc) &&
        !grepl("\\b(expression|vector|or)\\b", tolower(doc), perl = TRUE)) {
      kind <- name_kinds[[arg]]
      guessed <- TRUE
    }
    if (startsWith(kind, "any:")) {
      kind <- "alternatives"
    }
    schema <- switch(kind,
      alternatives = alternatives_schema(alternatives_of(doc_kind)),
      colours = alternatives_schema("colours"),
      boolean = list(type = "boolean"),
      booleans = list(type = "array", items = list(type = "boolean")),
      integer = list(type = "integer"),
      number = list(type = "number"),
      numbers = list(type = "array", items = list(type = "number")),
      series = series_schema,
      string = list(type = "string"),
      strings = list(type = "array", items = list(type = "string")),
      # A named list (control = list()) is a JSON object; a data frame an
      # array of records, as jsonlite writes one.
      object = list(type = "object"),
      records = list(type = "array", items = list(type = "object")),
      matrix = matrix_schema,
      coords = coords_schema,
      formula = list(type = "string"),
      NULL
    )
  }
  if (is.null(schema)) {
    schema <- structure(list(), names = character())
  }
  formula <- doc_kind == "formula" && identical(schema$type, "string") && lit$kind != "value"
  # The argument's first paragraph within the budget (RULES R8.1), then
  # what the client must know: how to write a formula, a guessed type.
  text <- c(if (!is.null(doc) && nzchar(doc)) argument_text(doc, md),
            if (formula) "Write the formula as a string, e.g. \"y ~ x\".",
            if (guessed && (!is.null(schema$type) || !is.null(schema$anyOf))) "(Type guessed.)")
  if (length(text) > 0L) {
    schema$description <- paste(text, collapse = " ")
  }
  if (!is.null(default_json)) {
    schema$default <- default_json
  }
  list(schema = schema, required = required, formula = formula)
}

# The kinds a scalar literal default's argument takes, by its documentation
# (RULES R8.2): a vector when the text says so ("an integer vector",
# "vector of means", "dimension(s)", "one or more"), a string when it quotes
# one beside a logical default (frank(na.last = TRUE): "keep"), a boolean
# when it names `TRUE` beside a string default, a number when it describes a
# quantity or a colour beside a string default (density(bw = "nrd0")), a
# string beside a numeric colour (a colour name).
widened_kinds <- function(kind, doc, doc_kind) {
  if (is.null(doc)) {
    return(kind)
  }
  lower <- tolower(doc)
  kinds <- kind
  if (kind %in% c("integer", "number", "string") &&
      (doc_kind %in% c("numbers", "strings") ||
       grepl("\\bvectors?\\b|\\w\\(s\\)|\\bone or more\\b", lower, perl = TRUE))) {
    kinds <- c(kinds, if (kind == "string") "strings" else "numbers")
  }
  colour <- grepl("\\bcolou?rs?\\b", lower, perl = TRUE)
  if (kind == "boolean" && grepl("`\"[^\"`]+\"`", doc, perl = TRUE)) {
    kinds <- c(kinds, "string")
  }
  if (kind == "string" && grepl("`(TRUE|FALSE)`", doc, perl = TRUE)) {
    kinds <- c(kinds, "boolean")
  }
  if (kind == "string" && (doc_kind %in% c("number", "numbers") || colour ||
                           grepl("\\bline type", lower, perl = TRUE))) {
    kinds <- c(kinds, "number")
  }
  if (kind %in% c("integer", "number") && colour) {
    kinds <- c(kinds, "string")
  }
  unique(kinds)
}

# A numeric matrix as JSON: an array of rows, each an array of numbers
# (jsonlite's simplification makes it a matrix again, RULES R8.3).
matrix_schema <- list(type = "array", items = list(type = "array", items = list(type = "number")))

# Coordinates as xy.coords() takes them: an array of numbers, a two-column
# matrix (an array of rows) or an object with `x` and `y` (RULES R8.2).
coords_schema <- list(anyOf = list(
  list(type = "array", items = list(type = "number")),
  matrix_schema,
  list(type = "object", properties = list(x = list(type = "array", items = list(type = "number")),
                                          y = list(type = "array", items = list(type = "number"))))
))

# A time series: an array of its values (a frequency of 1), or an object with
# the values and the `frequency` and `start` that stats::ts() takes, which
# decompose(), stl() and monthplot() need (RULES R8.2, R8.3).
series_schema <- list(anyOf = list(
  list(type = "array", items = list(type = "number")),
  list(type = "object",
       properties = list(
         data = list(type = "array", items = list(type = "number"),
                     description = "The values, in time order."),
         frequency = list(type = "number",
                          description = "Observations per unit of time (12: monthly values by year)."),
         start = list(anyOf = list(list(type = "number"),
                                   list(type = "array", items = list(type = "number"))),
                      description = "The time of the first value: a number, or a unit and a period in it ([2020, 3]).")
       ),
       required = list("data"), additionalProperties = FALSE)
))

# The kinds of documented alternatives ("any:boolean,string"), none for
# "several".
alternatives_of <- function(doc_kind) {
  if (!startsWith(doc_kind, "any:")) {
    return(character())
  }
  strsplit(sub("^any:", "", doc_kind), ",", fixed = TRUE)[[1L]]
}

# Is the literal default `v` one of the documented kinds? (A whole number is
# also an integer.)
default_fits <- function(v, kinds) {
  kind <- json_kind(v, "none")
  if (is.null(kind) || length(kinds) == 0L) {
    return(FALSE)
  }
  if (length(v) > 1L) {
    return(switch(kind, integer = , number = "numbers" %in% kinds, string = "strings" %in% kinds, FALSE))
  }
  whole <- is.numeric(v) && (is.na(v) || v == round(v))
  kind %in% kinds || (kind == "integer" && "number" %in% kinds) ||
    (kind == "number" && whole && "integer" %in% kinds)
}

# The schema of documented alternatives: one kind's type, or an `anyOf` of
# single types (the house spelling of alternatives, RULES R2.3).
alternatives_schema <- function(kinds) {
  branch <- function(kind) {
    switch(kind,
      numbers = list(type = "array", items = list(type = "number")),
      strings = list(type = "array", items = list(type = "string")),
      booleans = list(type = "array", items = list(type = "boolean")),
      matrix = matrix_schema,
      records = list(type = "array", items = list(type = "object")),
      coords = coords_schema,
      series = series_schema,
      list(type = kind)
    )
  }
  # A colour is a name, "#RRGGBB" or a palette index, one or several.
  kinds <- unique(unlist(lapply(kinds, function(k) {
    if (k == "colours") c("strings", "numbers", "string", "number") else k
  })))
  if (length(kinds) == 1L) {
    return(branch(kinds))
  }
  list(anyOf = lapply(kinds, branch))
}

# The JSON kind of a default expression that is not a constant, from what
# it computes, without evaluating it (RULES R8.2): "number", "integer",
# "numbers", "string" or "boolean"; NULL when it cannot tell. `depth` stops
# the walk through other arguments' defaults.
default_expression_kind <- function(expr, sig, depth = 2L) {
  if (is.symbol(expr) && !as.character(expr) %in% names(sig$formals)) {
    expr <- constant_value(expr, sig)
  }
  if (is.numeric(expr) && length(expr) == 1L) {
    return(if (is.integer(expr)) "integer" else "number")
  }
  if (is.symbol(expr)) {
    nm <- as.character(expr)
    if (nm == "pi") {
      return("number")
    }
    if (depth > 0L && nm %in% names(sig$formals) && !is_missing_arg(sig$formals[[nm]])) {
      lit <- default_literal(sig$formals[[nm]], sig, nm)
      if (lit$kind == "value" && length(lit$value) == 1L) {
        return(json_kind(lit$value, "none"))
      }
      return(default_expression_kind(sig$formals[[nm]], sig, depth - 1L))
    }
    return(NULL)
  }
  if (!is.call(expr) || !is.symbol(expr[[1L]])) {
    return(NULL)
  }
  fn <- as.character(expr[[1L]])
  parts <- as.list(expr)[-1L]
  kinds <- function() lapply(parts, default_expression_kind, sig = sig, depth = depth)
  if (fn == "$" && identical(parts[[1L]], as.name(".Machine"))) {
    return(if (startsWith(as.character(parts[[2L]]), "integer")) "integer" else "number")
  }
  if (fn %in% c("+", "-", "*", "/", "^", "(")) {
    k <- kinds()
    if (length(k) > 0L && all(vapply(k, function(x) identical(x, "number") || identical(x, "integer"), NA))) {
      return("number")
    }
    return(NULL)
  }
  if (fn %in% c("sqrt", "exp", "log", "log10", "log2", "abs", "ceiling", "floor", "round", "signif",
                "min", "max", "mean", "median", "IQR", "sd", "mad", "var", "sum", "prod")) {
    return("number")
  }
  if (fn == "list" && (length(parts) == 0L || all(nzchar(names(parts) %||% "")))) {
    return("object")
  }
  if (fn %in% c("length", "nrow", "ncol", "NROW", "NCOL", "nlevels", "nchar")) {
    return("integer")
  }
  if (fn %in% c("seq", "seq_len", "seq_along", "range", ":", "rev", "sort", "cumsum", "numeric",
                "double", "integer")) {
    return("numbers")
  }
  if (fn %in% c("paste", "paste0", "deparse", "deparse1", "sprintf", "format", "gettext", "gettextf",
                "toupper", "tolower", "sQuote", "dQuote", "file.path", "basename")) {
    return("string")
  }
  if (fn %in% c("!", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "isTRUE", "isFALSE",
                "interactive", "identical", "any", "all", "inherits", "is.null", "is.na",
                "is.numeric", "is.character", "is.logical", "is.factor", "is.matrix",
                "is.data.frame", "is.list", "is.function", "nzchar", "exists")) {
    return("boolean")
  }
  if (fn == "if" && length(parts) == 3L) {
    k <- lapply(parts[2:3], default_expression_kind, sig = sig, depth = depth)
    if (!is.null(k[[1L]]) && identical(k[[1L]], k[[2L]])) {
      return(k[[1L]])
    }
  }
  if (fn == "par" && length(parts) == 1L && is.character(parts[[1L]])) {
    if (parts[[1L]] %in% c("lwd", "cex", "cex.axis", "cex.lab", "cex.main", "cex.sub", "adj",
                           "srt", "mex", "lheight")) {
      return("number")
    }
  }
  NULL
}

# Argument names whose meaning is fixed by convention across R's graphics
# (titles and axis labels, axis limits): a guessed kind (RULES R8.2).
name_kinds <- c(main = "string", sub = "string", xlab = "string", ylab = "string",
                zlab = "string", xlim = "numbers", ylim = "numbers", zlim = "numbers")

# The JSON kind of an atomic default, refined by the documentation (a whole
# number documented as an integer is an integer).
json_kind <- function(v, doc_kind) {
  if (is.logical(v)) {
    return("boolean")
  }
  if (is.integer(v)) {
    return("integer")
  }
  if (is.double(v)) {
    whole <- all(is.na(v) | (is.finite(v) & v == round(v)))
    return(if (whole && doc_kind == "integer") "integer" else "number")
  }
  if (is.character(v)) {
    return("string")
  }
  NULL
}

# What a default expression is, without evaluating calls: list(kind = "value",
# value) for an atomic constant (literals, c() of literals, negated numbers,
# and symbols bound to atomic constants in the function's environment);
# kind "null", "function" or "unknown" otherwise.
default_literal <- function(expr, sig, arg) {
  v <- constant_value(expr, sig)
  if (inherits(v, "mcplite_not_constant")) {
    return(list(kind = "unknown"))
  }
  if (is.null(v)) {
    return(list(kind = "null"))
  }
  if (is.function(v)) {
    return(list(kind = "function"))
  }
  if (is.atomic(v) && !is.object(v) && typeof(v) %in% c("logical", "integer", "double", "character") &&
      length(v) >= 1L && !(is.double(v) && any(is.infinite(v) | is.nan(v)))) {
    return(list(kind = "value", value = unname(v)))
  }
  list(kind = "unknown")
}

not_constant <- structure(list(), class = "mcplite_not_constant")

# A constant, or `not_constant` when the expression is not a constant.
constant_value <- function(expr, sig) {
  unknown <- not_constant
  if (is.null(expr) || (is.atomic(expr) && length(expr) <= 1L)) {
    return(expr)
  }
  if (is.symbol(expr)) {
    nm <- as.character(expr)
    if (nm %in% names(sig$formals) || !nzchar(nm)) {
      return(unknown)
    }
    if (nm %in% c("T", "F")) {
      return(nm == "T")
    }
    if (!exists(nm, envir = sig$env, inherits = TRUE)) {
      return(unknown)
    }
    where <- env_of(nm, sig$env)
    if (!is.null(where) && bindingIsActive(nm, where)) {
      return(unknown)
    }
    value <- get(nm, envir = sig$env, inherits = TRUE)
    if (is.function(value) || (is.atomic(value) && !is.object(value) && length(value) <= 64L)) {
      return(value)
    }
    return(unknown)
  }
  if (is.call(expr) && is.symbol(expr[[1L]])) {
    fn <- as.character(expr[[1L]])
    parts <- as.list(expr)[-1L]
    if (fn == "c" && is.null(names(parts)) && length(parts) > 0L) {
      vals <- lapply(parts, constant_value, sig = sig)
      ok <- all(vapply(vals, function(v) {
        is.atomic(v) && !is.null(v) && length(v) == 1L && !is.object(v)
      }, logical(1)))
      if (ok) {
        return(do.call(c, vals))
      }
    }
    if (fn == "-" && length(parts) == 1L && is.numeric(parts[[1L]]) && length(parts[[1L]]) == 1L) {
      return(-parts[[1L]])
    }
    if (fn == "function") {
      return(function() NULL)
    }
  }
  unknown
}

env_of <- function(nm, env) {
  while (!identical(env, emptyenv())) {
    if (exists(nm, envir = env, inherits = FALSE)) {
      return(env)
    }
    env <- parent.env(env)
  }
  NULL
}

# "an optional data frame ...", "optional; ..." (vectorised).
doc_optional <- function(docs) {
  !is.na(docs) & grepl("^\\W*(an? )?optional\\b", tolower(docs), perl = TRUE)
}

# The kind of value each argument documentation starts by describing
# (vectorised; computed once per help page and cached with it).
doc_types <- function(docs) {
  out <- rep("none", length(docs))
  text <- tolower(gsub("[`*'\"]", "", docs, perl = TRUE))
  # "a vector (or scalar) of ...": a scalar is a vector of length one.
  text <- gsub("vector \\(or scalar\\)", "vector", text, perl = TRUE)
  # "vector of (non-negative integer) quantiles": a qualifier, not an
  # alternative.
  text <- gsub("vectors? of \\((non-negative |positive )?integer\\) ", "vector of ", text, perl = TRUE)
  # "a numeric or complex matrix" (eigen(), qr(), solve()), "numeric (or
  # logical)": JSON has no complex numbers, and a logical matrix is coerced
  # to numeric, so these are what the numeric kind is, not alternatives
  # (read as "numeric" alone they were one number).
  text <- gsub("\\bnumeric (or complex|\\(or logical\\))(?= )", "numeric", text, perl = TRUE)
  # "either X or Y": alternatives whatever X and Y are.
  either <- grepl("^\\s*\\(?\\s*either\\s", text, perl = TRUE)
  text <- sub("^\\s*(\\(|either\\s)?\\s*", "", text, perl = TRUE)
  # "`NULL` (default) or a logical ...": leaving the argument out gives NULL.
  text <- sub("^null( \\(default\\))?,? or\\s+", "", text, perl = TRUE)
  # "one of: a vector ..., a single number ..., a character string ..."
  # (hist(breaks =)): a list of alternatives.
  alternatives <- grepl("^one of:", text, perl = TRUE) | either
  filler <- paste0(
    "^((an?|the|optional|single|one|positive|non-negative|nonnegative|strictly|scalar|",
    "length-one|length one|non-empty|\\(non-empty\\)|usually|typically|each|any|square)\\s+)+"
  )
  text <- sub(filler, "", text, perl = TRUE)
  rules <- c(
    "function" = "^(function\\b|r function\\b)",
    "formula" = "^(formula\\b|object of class formula|model formula|symbolic description)",
    "environment" = "^environment\\b",
    # R objects only R code makes (a fitted model, a terms object, a
    # "tskernel"): JSON cannot carry them, like functions (RULES R8.3).
    "robject" = paste0(
      "^((fitted )?model object\\b|fitted (time-series )?model\\b|(linear model|time-series|suitable) fit\\b|",
      "(original )?fitted model\\b|fitted object\\b|existing fit from|",
      "(r )?object[,;]? (typically|usually)?,? ?(as )?(returned by|resulting from|the result of|",
      "produced by) (lm|glm|aov|a model fitting function|a model function|a fitter)\\b|",
      "(r )?object[,;]? typically,? (a fitted model|the result of a model fitting function|of class (lm|glm))\\b|",
      "(r )?object representing a (hierarchical clustering|fitted model)|",
      "object from which a log-likelihood|result of lsfit\\b|",
      "object for which (the extraction of model|the deviance|the degrees-of-freedom|prediction)|",
      "object containing the results returned by a model|object representing a fitted model|",
      "object from which a log-likelihood|object (as )?returned by (lm|glm)\\b|",
      "(r )?object (of class|inheriting from( class)?) (lm|glm|mlm|ssd|spec|manova|factanal|princomp|aov|",
      "stepfun|tskernel|hclust|dendrogram|dist|sortedxydata)\\b|object of the type produced by hclust|",
      "(smoothing )?tskernel object|sortedxydata object|terms object|model frame\\b|",
      "dissimilarity structure|hierarchical clustering object|tree as produced by hclust|",
      "dendrogram\\b|influence structure as returned|result of a call to aov|",
      "object produced by an na.action|typically the result of lsfit)"
    ),
    "booleans" = "^(logical vector|vector of logicals)",
    "boolean" = "^logical\\b",
    # "integer-valued index vector" (arrayInd(ind)), "numeric sequences"
    # (convolve(x)), "numerical values for a time" (ISOdate(hour)).
    "numbers" = paste0("^((integer|numeric|numerical)(-valued)?( [a-z-]+)? (vectors?\\b|sequences\\b|values\\b)|",
                       "vector of integers|vector of numbers)"),
    # A matrix comes as an array of rows (RULES R8.3).
    "matrix" = "^((symmetric )?(numeric|real) matri(x|ces)\\b)",
    "integer" = "^(integer\\b|whole number)",
    "number" = "^(numeric value|number\\b|numeric scalar|real number|numeric(\\W|$))",
    "strings" = "^(character vector|vector of character|vector of strings)",
    "string" = "^(character string|string\\b|character(?! (expansion|size|height|width))(\\W|$))"
  )
  # Guesses from what the argument is (a quantity, a title), marked as
  # such: "guess:number".
  guesses <- c(
    # A time series: its values, or with the frequency and start that
    # decompose(), stl() and monthplot() need (RULES R8.2).
    "series" = paste0("^(((univariate|univariate or multivariate) )?(numeric )?times?[- ]series\\b(?! comparison)|",
                      "(an )?object of class \"?ts\"?(\\W|$))"),
    "numbers" = paste0("^(data from which the estimate|",
                       "(first|second)( or only)? (data )?sample\\b|",
                       "response vector|[xy] values for smoothing|input [xy] values|dependent variable to be smoothed|",
                       "case weights|points at which to evaluate|",
                       "set of (numeric )?values specifying where|vector of (filter|differencing) coefficients|",
                       "vector of (odd )?integers|vector of slopes|vector of length k of integers|",
                       "starting values for|initial values of the|",
                       "points at which tick-marks|locations of grid lines|set of levels which|",
                       "set of finite numeric breakpoints|",
                       "vectors? of (\\([a-z -]+\\) )?",
                       "(means|quantiles|probabilities|observations|counts|weights|numbers|",
                       "numeric values|real numbers|(data )?values|positive numbers|non-negative numbers|",
                       "\\(non-negative\\) (quantiles|numbers))\\b)"),
    "number" = paste0("^(degrees? of freedom|probability (of|that)|non-centrality parameter|",
                      "numbers? of|maximum number|minimum number|(numerical |relative |absolute |",
                      "convergence )?tolerance|confidence level|significance level|power of|",
                      "tuning constant|smoothing parameter|(smoothing )?bandwidth\\b|(character )?expansion factor|",
                      "maximum (order|lag)\\b|",
                      "(non-negative |positive )?(shape|scale|rate|location) parameters?\\b|",
                      "shape and scale parameters|non-negative parameters\\b|target for number|",
                      "alternative parametrization via mean|parameters? of the [a-z]+ distribution|",
                      "range over which to minimi[sz]e|limits of integration|probability(,| in (one|other) group)|",
                      "(between|within) group variance|true difference in means|sample size for|",
                      "start value for|span \\(in lags\\)|magnitude below which|time series comparison tolerance|",
                      "[xy]/[xy] aspect ratio|[xy]/[xy] axis gap factors|intercept and slope|",
                      "range over which the function will be plotted)"),
    "matrix" = paste0("^(design matrix|(variance-)?covariance matri(x|ces)|loadings matrix|matrix of data|",
                      "data matrix|matrix whose rows|positive definite \\(p \\* p\\) (scale )?matrix)"),
    "numbers2" = "^(vectors? giving the density of shading)",
    "records" = "^(data frame\\b)",
    "object" = "^(named list\\b|list of control\\b|list with (named )?(components|elements)\\b)",
    "numbers3" = "^(density of shading)",
    # Positions in user coordinates: segments(x0 =), rect(xleft =), clip(x1 =).
    # Coordinates as xy.coords() takes them: a vector, a two-column matrix
    # or a list with `x` and `y`.
    "coords" = paste0("^(vectors? (giving|containing) the coordinates of the (points|vertices)|",
                      "coordinate vectors of (the )?(regression )?points|[xy] and [xy] co-?ordinates for the)"),
    "numbers4" = paste0("^(coordinates of points \\*{0,2}(from|to)\\*{0,2} which to draw|",
                        "vectors? of (left|right|top|bottom) [xy] positions|",
                        "user coordinates of|[xy]-values?\\(s\\) for)"),
    "number4" = "^(line width for|font used for)",
    # Colours: a name, "#RRGGBB" or a palette index, one or several.
    "colours" = paste0("^(vectors? of (fill )?colou?rs\\b|colou?r(s|\\(s\\))? (used |to be used )?(for|of)\\b|",
                       "(background |border )?colou?r (used |to be used )?(of|for)\\b)"),
    "strings" = "^(names (of|for) the|vectors? of (names|labels|character strings|strings)\\b)",
    "string" = "^(label for the|(overall |main )?title (for|of) the|main title\\b|subtitle for)"
  )
  todo <- !is.na(docs) & nzchar(text)
  # A first clause naming another kind of value as well ("a numeric vector,
  # matrix or data frame", "a vector or a formula") gives no type: a wrong
  # type would make valid calls impossible.
  clause <- sub("^(.*?)([.;:](\\s|$)).*$", "\\1", text, perl = TRUE)
  clause <- gsub("\\b(or null|or na|true or false)\\b", "", clause, perl = TRUE)
  other <- paste0("(\\bor\\b|,|\\(|\\bnor\\b)\\s*(an? |possibly )?((positive|non-negative|single) )?",
                  "(numeric|character|logical|integer|",
                  "vectors?|matri(x|ces)|lists?|data ?frames?|functions?|formula|objects?|strings?|",
                  "factors?|arrays?|tables?|expressions?|calls?|names?|symbols?|numbers?|single|",
                  "scalars?|r object|time series|dates?|date-times?|null|na)\\b")
  several <- grepl(other, clause, perl = TRUE) | alternatives
  # An R object "or a formula", "or an object with a terms method": every
  # alternative is something JSON cannot carry either.
  other_data <- paste0("(\\bor\\b|,|\\(|\\bnor\\b)\\s*(an? |possibly )?((positive|non-negative|single) )?",
                       "(numeric|character|logical|integer|vectors?|matri(x|ces)|lists?|data ?frames?|",
                       "strings?|factors?|arrays?|tables?|numbers?|scalars?|time series|dates?|date-times?)\\b")
  several_data <- grepl(other_data, clause, perl = TRUE) | alternatives
  # The alternatives themselves: after "one of:", up to the sentence's end.
  listed <- ifelse(alternatives,
                   sub("^(.*?)([.;](\\s|$)).*$", "\\1", sub("^(one )?of:\\s*", "", text, perl = TRUE),
                       perl = TRUE),
                   clause)
  # "logical or character string", "one of: ...": documented as one kind
  # of value or another (not a qualifier that happens to name a kind).
  alternatives <- alternatives & todo
  for (kind in names(rules)) {
    starts <- grepl(rules[[kind]], text, perl = TRUE)
    # Values JSON cannot carry are marked whatever else the text allows.
    hit <- todo & starts & (!several | kind %in% c("function", "formula", "environment") |
                            (kind == "robject" & !several_data))
    out[hit] <- kind
    todo <- todo & !hit
    alternatives <- alternatives | (todo & several & starts)
  }
  for (kind in names(guesses)) {
    hit <- todo & !several & grepl(guesses[[kind]], text, perl = TRUE)
    out[hit] <- paste0("guess:", sub("[234]$", "", kind))
    todo <- todo & !hit
  }
  # Documented as one kind of value or another: the JSON kinds the
  # alternatives name ("any:boolean,string"), else "several", which also
  # keeps a literal default from fixing the type (RULES R8.2).
  for (i in which(todo & several)) {
    kinds <- alternative_kinds(listed[[i]], guesses)
    if (!is.null(kinds)) {
      out[[i]] <- kinds
      todo[[i]] <- FALSE
    }
  }
  out[todo & alternatives] <- "several"
  out
}

# The JSON kinds named by documentation of one kind of value or another
# ("logical or character string", "a number, a character string or a
# function", "numeric or character vector"), in the order named:
# "any:boolean,string", "guess:any:..." when an alternative's kind is a guess
# (guess patterns as in doc_types()), or NULL when an alternative is of a kind
# JSON cannot make (a matrix, a list, a vector of unknown kind, ...): no type
# beats a wrong one (RULES R8.2). Functions, formulas and the like are left
# out: a client cannot send them anyway.
alternative_kinds <- function(clause, guesses) {
  # "(see Details)", "(default)", "(e.g. ...)" say nothing of the kind;
  # other parentheses ("(or a matrix)") are alternatives too.
  clause <- gsub("\\((see|default|the default|e\\.g\\.|i\\.e\\.|cf\\.)\\b[^()]*\\)", "", clause,
                 perl = TRUE)
  parts <- strsplit(clause, "\\s*(,\\s*(or\\s+)?|\\(|\\)|\\bor\\b|\\bnor\\b|\\beither\\b)\\s*",
                    perl = TRUE)[[1L]]
  parts <- sub(paste0("^((an?|the|optional|single|one|positive|non-negative|nonnegative|strictly|",
                      "scalar|length-one|length one|possibly|also|else|otherwise)\\s+)+"), "", parts,
               perl = TRUE)
  parts <- trimws(parts)
  parts <- parts[nzchar(parts)]
  if (length(parts) < 2L) {
    return(NULL)
  }
  # "numeric or character vector": the last noun goes with the bare
  # adjectives before it.
  adjectives <- "(numeric|logical|character|integer|complex|expression)"
  last <- regmatches(parts[[length(parts)]],
                     regexec(paste0("^", adjectives, " (vectors?|values?|scalars?)\\b"), parts[[length(parts)]],
                             perl = TRUE))[[1L]]
  if (length(last) == 3L) {
    bare <- grepl(paste0("^", adjectives, "$"), parts, perl = TRUE)
    parts[bare] <- paste(parts[bare], last[[3L]])
  }
  container <- "(?!\\s+(vectors?|matri|arrays?|lists?|data|objects?|tables?|factors?|series))"
  rules <- c(
    drop = paste0("^((r )?(functions?|formulae?|formulas?|expressions?|calls?|environments?|language|",
                  "symbols?)|null|na)\\b"),
    numbers = "^((integer|numeric)( [a-z-]+)? vectors?|vector of integers|vector of numbers|vector of numeric)",
    matrix = "^((numeric |data )?matri(x|ces))\\b",
    records = "^data ?frames?\\b",
    booleans = "^(logical vectors?|vector of logicals)",
    strings = "^(character vector|vector of (character )?strings|vector of character)",
    integer = paste0("^(integer|whole number)\\b", container),
    number = paste0("^(numeric( value| scalar)?|number|real number)\\b", container),
    boolean = paste0("^(logical|true|false)\\b", container),
    string = paste0("^(character string|string|character)\\b", container)
  )
  kinds <- character()
  guessed <- FALSE
  for (part in parts) {
    hit <- names(rules)[vapply(rules, grepl, NA, part, perl = TRUE)]
    if (length(hit) == 0L) {
      hit <- names(guesses)[vapply(guesses, grepl, NA, part, perl = TRUE)]
      if (length(hit) == 0L || sub("[234]$", "", hit[[1L]]) %in% c("records", "object", "matrix", "coords")) {
        return(NULL)
      }
      hit <- sub("[234]$", "", hit)
      # A series among other kinds is its values (anyOf branches stay flat).
      hit[hit == "series"] <- "numbers"
      guessed <- TRUE
    }
    kinds <- c(kinds, hit[[1L]])
  }
  kinds <- unique(kinds[kinds != "drop"])
  if ("number" %in% kinds) {
    kinds <- kinds[kinds != "integer"]
  }
  if (length(kinds) == 0L) {
    return(NULL)
  }
  paste0(if (guessed) "guess:", "any:", paste(kinds, collapse = ","))
}

# The documented kinds of a function's arguments: from the cached help page,
# or computed now.
doc_kinds <- function(doc) {
  docs <- doc$arguments %||% character()
  kinds <- doc$kinds
  if (is.null(kinds) || length(kinds) != length(docs)) {
    kinds <- doc_types(unname(docs))
  }
  optional <- doc$optional
  if (is.null(optional) || length(optional) != length(docs)) {
    optional <- doc_optional(unname(docs))
  }
  list(docs = docs, kinds = stats::setNames(kinds, names(docs)),
       optional = stats::setNames(optional, names(docs)))
}
