# package_tools(): tools for the exported functions of an installed package,
# with names, descriptions and argument schemas taken from the function's
# formals and its installed help page. Every tool is made by tool(), so the
# server treats it like any hand-written tool.

#' Serve an installed package's functions as tools
#'
#' @description
#' `package_tools()` turns the exported functions of an installed package
#' into [tool()] objects without writing anything per tool: the tool name is
#' the function name, the title, description and argument descriptions come
#' from the function's installed help page, and the input schema is inferred
#' from the function's formals and its documentation. Pass the result, alone
#' or together with other tools, to [mcp_server()]. [mcp_manifest()] writes
#' the resulting catalogue to a file that can be committed and checked in CI.
#'
#' @section Descriptions:
#' The help page that documents a function (through its `\alias`) gives the
#' tool's title (sent as the `title` annotation), its description (the
#' page's Description section followed by its Value section) and the
#' description of each argument (the first paragraph of its `\arguments`
#' entry, up to 100 characters). They are rendered as Markdown or, with
#' `docs = "text"`, as plain text. The Description's first paragraph is
#' always kept; the rest follows within about 150 characters, and a
#' shortened description ends by pointing to the help page.
#'
#' When one page documents several functions (data.table's `hour()`,
#' `year()`, `month()`, ...), each tool's title names its function
#' (`"hour(): Integer based date class"`) and its description leads with the
#' function's usage line and what the Value section says about it, leaving
#' out paragraphs about the page's other functions only.
#'
#' A function without a help page, or whose help page cannot be rendered, is
#' still served: its description is its R signature, and a message names it.
#'
#' @section Argument schemas:
#' Each formal argument becomes a property of the input schema; arguments
#' without a default are required. The JSON type is inferred, in this order:
#'
#' 1. from an override (see `overrides`);
#' 2. from a literal default value: `TRUE`/`FALSE`/`NA` is a boolean, an
#'    integer a JSON integer, any other number a JSON number, a string a
#'    string, and a vector of several values an array of them. A character
#'    vector that the function passes to [match.arg()] is an enum of its
#'    values (an array of them with `several.ok = TRUE`), and its first value
#'    is advertised as the default. Constants such as `p.adjust.methods` are
#'    looked up in the package namespace; other default expressions (calls
#'    such as `length(x)`) are never evaluated. A default of `NA` types
#'    nothing (it means "no value"). When the documentation speaks of a
#'    vector, a single default's type also admits an array of its kind
#'    (`qnorm(mean = 0)`: a number or an array of numbers), and a string,
#'    boolean or number the documentation allows beside the default's kind
#'    is added as a guess (`density(bw = "nrd0")` also takes a number);
#' 3. from the first words of the argument's documentation: "logical ...",
#'    "integer ...", "numeric ..."/"number ...", "character string ..." and
#'    "character vector ..." give a boolean, integer, number, string or array
#'    of strings, "numeric matrix ..." a matrix (an array of rows, each an
#'    array of numbers); "function", "formula", "environment" and R objects
#'    only R code makes ("a fitted model object", "a `terms` object", "an
#'    object of class `"tskernel"`", ...) mark values that JSON cannot
#'    carry. Documentation naming one kind of value or another
#'    gives each kind's JSON type as an alternative (`anyOf`): "logical or
#'    character string" is a boolean or a string, "a number, a character
#'    string or a function" a number or a string (a function cannot come as
#'    JSON), "a numeric vector, matrix or data frame" an array of numbers, a
#'    matrix or an array of records. When an alternative is of a kind JSON
#'    cannot make or names no kind ("a vector or factor"), there is no
#'    type. Such documentation
#'    also overrides a literal default: a default of another kind than those
#'    named leaves the argument untyped;
#' 4. guesses, which end the argument's description with "(Type guessed.)":
#'    what the documentation says the value is ("vector of quantiles",
#'    "degrees of freedom", a colour, a title, a data sample as an array
#'    of numbers, a design or covariance matrix, a time series as an array
#'    of numbers or an object `{"data": [...], "frequency": 12, "start":
#'    [2020, 1]}` made into a `ts()`, which `decompose()` needs), what a
#'    computed default
#'    computes (arithmetic is a number, `length(x)` an integer, `seq()` an
#'    array of numbers, `paste()` a string, a comparison a boolean; nothing
#'    is evaluated), and the names `main`, `sub`, `xlab`, `ylab` (strings)
#'    and `xlim`, `ylim` (arrays of numbers);
#' 5. otherwise the property accepts any JSON value (an empty schema).
#'
#' A `NULL` default makes the argument optional, typed from its
#' documentation. An argument without a default that the function tests with
#' `missing()`, or hands on to a function that does (`hist(ylab =)` reaches
#' `plot.histogram()`), is optional too. For an S3 generic such as `t.test()`, whose
#' own formals are little more than `x, ...`, the formals of its default
#' method are used as well (they reach the method through `...`).
#'
#' `...` is never part of the schema. Functions, environments and R objects
#' only R code makes (a fitted model, a `"dist"` object) are never accepted
#' from a client: such an argument is left out of the schema, so the R
#' default applies. Formulas are left out too, unless `formulas = "string"`:
#' the argument is then a string such as `"y ~ x"`, parsed and checked to be
#' a formula (nothing in the string is evaluated when it is converted, but a
#' model function evaluates the formula's terms later, so only enable this
#' for clients you trust). A function with a required argument that cannot be
#' sent as JSON is skipped, and a message names it (`predict (object: R
#' object)`); a model-building function (one using `match.call()`, as
#' `lm()`) leaves out a function argument without a default that it never
#' uses by name (`lm(na.action =)`), but `integrate(f)` and `by(FUN)` need
#' theirs and are skipped; an override of that argument's type, with a `convert`
#' function that makes the object, serves it again (see `overrides`).
#'
#' @section Argument values:
#' Clients send JSON, and a JSON array reaches R as a list. Before the
#' function is called, each argument is converted: a value for a boolean,
#' integer, number or string property (or an array of them) becomes an
#' atomic vector of that type, with `null` elements as `NA`. A value for an
#' untyped property (or one of several kinds, or a matrix) is simplified the
#' way `jsonlite` simplifies: an array of scalars of one kind becomes an
#' atomic vector and an array of objects with scalar members a data frame.
#' Where the schema names a matrix, an array of such arrays of one length
#' becomes a matrix (one row each); untyped, it stays a list of vectors (a
#' list of samples for `kruskal.test(x =)`). A formula string becomes a formula. The
#' function is then called with the arguments the client sent, by name.
#'
#' A result that cannot be converted to JSON (a fitted model, a test result
#' of class `htest`, ...) is returned as the text R prints for it; anything
#' else is converted as a tool's return value is (see [mcplite-results]),
#' except that missing values (`NA`, `NaN`, `Inf`, and missing cells of a
#' data frame) are JSON `null`, the schema-less "no value", rather than
#' strings such as `"NA"`. Setting the option `mcplite.json.na` overrides
#' this; the tools you write yourself keep `jsonlite`'s default.
#'
#' @section Plots:
#' A function that draws, such as `graphics::plot()`, `hist()` or a `grid`
#' function, draws on a PNG device of 640 x 480 pixels (as [content_plot()])
#' that mcplite opens for the call, and the tool returns the picture as an
#' image block after the text of the function's value (no text when the
#' value is `NULL`). A returned `lattice` or `ggplot2` object, which draws
#' when printed, is drawn and returned as the image. Nothing is left behind:
#' no `Rplots.pdf` in the working directory, no temporary file and no open
#' device; a device that was open before the call (in a live session, the
#' user's) is current again after it and gets nothing drawn on it. When no
#' device is open, mcplite's is opened only when something draws, so tools
#' that do not draw pay almost nothing for it.
#'
#' @section Shaping data-frame results:
#' Tools named in `shape` (or all, with `shape = TRUE`) get four extra
#' optional arguments, prefixed with a dot so that they never collide with
#' the function's own:
#'
#' * `.limit`: the maximum number of rows to return. Its default is
#'   `getOption("mcplite.shape.limit", 200)`, and larger values are lowered
#'   to `getOption("mcplite.shape.max_limit", 5000)`. Both options are read
#'   when the tools are built.
#' * `.offset`: the number of rows to skip first (default 0).
#' * `.columns`: the names of the columns to keep.
#' * `.format`: `"records"` (default), `"csv"` or `"markdown"`: how the rows
#'   are written in the text content.
#'
#' When the function returns a data frame, the tool returns a
#' [tool_result()] whose structured content holds `total_rows` (the row count
#' before slicing), `offset`, `limit`, `returned_rows`, `columns` and the
#' selected `rows` as records, so a client always knows whether it saw only a
#' slice. With `"records"` the text content is that structured content as
#' JSON; with `"csv"` or `"markdown"` it is a line giving the counts followed
#' by the table. Other results are returned unchanged.
#'
#' @section Safety:
#' A served tool is called by a model, and a model follows instructions it
#' finds in the data it reads (prompt injection): a CSV cell or a web page
#' can ask it to call any tool with any argument. So, by default,
#' `package_tools()` serves only functions that can do nothing but compute.
#' Every candidate function is classified from its code: the calls it makes
#' are followed through the package's own functions, other packages and base
#' R down to the operations whose effect is known, together with where their
#' arguments come from (RULES R8.8). The capabilities are
#' \itemize{
#'   \item `"run_commands"`: runs commands or programs (`system()`,
#'     `fread(cmd = )`, a `"|command"` file name);
#'   \item `"call_functions"`: calls functions named by the caller
#'     (`do.call()`, `match.fun()`, `get()`, `FUN = "system"`);
#'   \item `"evaluate_code"`: evaluates code or sources files;
#'   \item `"read_files"`: reads files or connections;
#'   \item `"write_files"`: writes, moves or deletes files;
#'   \item `"network"`: reaches the network;
#'   \item `"processes"`: starts, signals or stops processes, `quit()`
#'     included;
#'   \item `"change_session"`: changes the R session (options, environment
#'     variables, working directory, search path, loaded code, global
#'     variables; the random seed is fine);
#'   \item `"read_secrets"`: reads environment variables;
#'   \item `"unknown_code"`: runs code the classification cannot follow.
#' }
#' Compiled code with an argument that names a file, command or address is
#' taken to read and write files (and to run a `cmd`). A function with any
#' capability is left out, with a message saying how many and why (unless
#' `quiet`); naming it in `include` is an error that names the capability
#' and the `allow` that would serve it. `allow` opts in per capability: with
#' `"read_files"` or `"write_files"` a `root` directory is required, every
#' file argument of a call must name a path inside it (after resolving `..`
#' and symbolic links; URLs only with `"network"`, pipes never), and it is
#' the working directory during the call.
#'
#' The result's `"capabilities"` attribute is a data frame with one row per
#' classified function: `fun`, `tool`, `served`, `capabilities` and `through`
#' (comma-separated). Each tool's `readOnlyHint`, `destructiveHint` and
#' `openWorldHint` annotations follow from its capabilities unless
#' `annotations` or `overrides` set them.
#'
#' No classification can promise that a function is harmless: compiled code
#' is not read, a package's own code may do harm in ways no table lists
#' (using all memory or time, say), and a served function's results reach the
#' model. Review what you serve, and serve the few functions you need.
#'
#' @section Caching:
#' Reading and rendering the help pages of a large package takes a few
#' seconds, so the rendered text is cached: in memory for the R session, and
#' on disk in `getOption("mcplite.cache_dir")` or else
#' `tools::R_user_dir("mcplite", "cache")`. A cache entry is used only for
#' the same installed package files, R version, mcplite version and `docs`
#' format, so a reinstalled or upgraded package is read again; there is one
#' file per package and format, replaced when it is out of date. The tools are
#' the same with or without the cache.
#'
#' @param package The name of an installed package, as a single string.
#' @param include `NULL` for every exported function, or a character vector
#'   of exported function names.
#' @param exclude A character vector of function names to leave out. Names
#'   that are not exported are ignored.
#' @param pattern,exclude_pattern `NULL`, or a single Perl-compatible regular
#'   expression: keep only the functions whose name matches `pattern`, and
#'   drop those whose name matches `exclude_pattern`.
#' @param prefix A string put in front of every tool name, for example
#'   `"stats_"` to keep the tools of several packages apart. Functions whose
#'   name does not make a valid tool name (1 to 128 ASCII letters, digits,
#'   `_`, `.` or `-`) are skipped with a message.
#' @param overrides A named list with one entry per function name, each a
#'   named list of some of: `name` (the tool name), `title`, `description`,
#'   `arguments` (a named list of type helpers such as [type_string()] that
#'   replace the inferred type of those arguments, or [type_ignore()] to hide
#'   one; the type's `required` flag applies), `annotations` (merged over the
#'   others), `shape` (`TRUE` or `FALSE`) and `convert` (a named list of
#'   functions, each turning the JSON value of one argument into the R value
#'   passed to the function).
#' @param annotations A named list of tool annotations (see [tool()]) given to
#'   every tool, for example `list(read_only_hint = TRUE)`. The title from the
#'   help page is added unless `annotations` or an override sets one.
#' @param shape `TRUE` to add the result-shaping arguments to every tool,
#'   `FALSE` (default) for none, or a character vector of function names.
#' @param formulas `"omit"` (default) to leave formula arguments out, or
#'   `"string"` to accept them as strings.
#' @param allow A character vector of capabilities (see "Safety") that
#'   served functions may have; by default none. Functions with other
#'   capabilities are left out.
#' @param root With `"read_files"` or `"write_files"` in `allow`, the path of
#'   an existing directory that the served functions' file arguments must
#'   stay inside; required then, an error otherwise.
#' @param docs `"markdown"` (default) or `"text"`: how help text is rendered.
#' @param cache `TRUE` (default) to cache rendered help pages in memory and
#'   on disk, `FALSE` for no cache, or the path of a directory for the disk
#'   cache.
#' @param quiet `TRUE` to suppress the messages about undocumented and
#'   skipped functions.
#'
#' @return A named list of tools made by [tool()], named by tool name and
#'   ordered by function name, with the classification as the
#'   `"capabilities"` attribute (see "Safety").
#' @seealso [tool()], [mcp_server()], [mcp_manifest()]
#' @export
#' @examples
#' # (cache = FALSE keeps these examples from writing to the user's cache.)
#' tools <- package_tools("stats", include = c("median", "qnorm", "p.adjust"), cache = FALSE)
#' names(tools)
#' tools$p.adjust
#' tools$median(x = list(1, 5, 2))
#'
#' # Data-frame results sliced by the client, with a total row count.
#' # read.csv() reads files: served only with "read_files" allowed, its
#' # `file` inside `root`.
#' csv <- package_tools("utils", include = "read.csv", shape = TRUE, cache = FALSE,
#'                      allow = "read_files", root = tempdir())
#' csv$read.csv(text = "a,b\n1,x\n2,y\n3,z", .limit = 2)$structured_content
#'
#' # What is left out, and why.
#' some <- package_tools("base", pattern = "^(mean|system|readLines|Sys[.]getenv)$",
#'                       cache = FALSE)
#' attr(some, "capabilities")[, c("fun", "served", "capabilities")]
#'
#' \dontrun{
#' # server.R: every exported function of stats that only computes, as a tool.
#' mcplite::mcp_server(mcplite::package_tools("stats"))
#' }
package_tools <- function(package, include = NULL, exclude = NULL, pattern = NULL,
                          exclude_pattern = NULL, prefix = "", overrides = list(),
                          annotations = list(), shape = FALSE,
                          formulas = c("omit", "string"), allow = character(), root = NULL,
                          docs = c("markdown", "text"), cache = TRUE, quiet = FALSE) {
  if (missing(package)) {
    abort("`package` is required: the name of an installed package, e.g. \"stats\".")
  }
  path <- check_installed_package(package)
  formulas <- check_choice(formulas, c("omit", "string"), "formulas")
  docs <- check_choice(docs, c("markdown", "text"), "docs")
  check_name_vector(include, "include", null_ok = TRUE)
  check_name_vector(exclude, "exclude", null_ok = TRUE)
  check_regex(pattern, "pattern")
  check_regex(exclude_pattern, "exclude_pattern")
  if (!is_scalar_string(prefix)) {
    abort("`prefix` must be a single string, not ", describe(prefix), ".")
  }
  if (!(is_true_false(cache) || is_scalar_string(cache))) {
    abort("`cache` must be TRUE, FALSE or a directory path, not ", describe(cache), ".")
  }
  if (!is_true_false(quiet)) {
    abort("`quiet` must be TRUE or FALSE, not ", describe(quiet), ".")
  }
  map_annotations(annotations, "annotations")
  allow <- check_allow(allow)
  root <- check_root(root, allow)
  if (!(is_true_false(shape) || (is.character(shape) && !anyNA(shape)))) {
    abort("`shape` must be TRUE, FALSE or a character vector of function names, not ",
          describe(shape), ".")
  }
  ns <- tryCatch(
    suppressPackageStartupMessages(loadNamespace(package, lib.loc = dirname(path))),
    error = function(e) {
      abort("`package` \"", package, "\" is installed but could not be loaded: ", conditionMessage(e))
    }
  )
  exports <- sort(getNamespaceExports(ns), method = "radix")
  funs <- select_exports(package, ns, exports, include, exclude, pattern, exclude_pattern)
  overrides <- check_overrides(overrides, names(funs), package)
  if (is.character(shape)) {
    unknown <- setdiff(shape, names(funs))
    if (length(unknown) > 0L) {
      abort("`shape` names functions that are not selected from ", package, ": ",
            quote_names(unknown), ".")
    }
  }
  limits <- shape_limits()
  pkg_docs <- package_docs(package, path, docs, cache, names(funs))
  version <- as.character(utils::packageVersion(package, lib.loc = dirname(path)))

  out <- list()
  notes <- list(undocumented = character(), bad_name = character(), unusable = character(),
                failed = character())
  if (!is.null(pkg_docs$error)) {
    notes$no_docs <- pkg_docs$error
  }
  md <- identical(docs, "markdown")
  inferred_cache <- pkg_docs$inferred[[formulas]] %||% list()
  dirty <- FALSE
  # What each function can do (RULES R8.8): worked out for all functions not
  # in the cache at once, since they share most of the code they reach.
  cap_cache <- pkg_docs$capabilities %||% list()
  no_caps <- setdiff(names(funs), names(cap_cache))
  if (length(no_caps) > 0L) {
    cap_cache[no_caps] <- capability_infos(package, funs[no_caps])
    pkg_docs$capabilities <- cap_cache
    dirty <- TRUE
  }
  refused <- list()
  classification <- list()
  for (fname in names(funs)) {
    ov <- overrides[[fname]] %||% list()
    tool_name <- ov$name %||% paste0(prefix, fname)
    if (!is_valid_tool_name(tool_name)) {
      notes$bad_name <- c(notes$bad_name, fname)
      next
    }
    shaped <- ov$shape %||% (isTRUE(shape) || fname %in% shape)
    doc <- function_doc(fname, pkg_docs)
    if (!is.null(doc$failed)) {
      notes$failed <- c(notes$failed, paste0(fname, " (", doc$failed, ")"))
    } else if (is.null(doc$topic) && is.null(ov$description)) {
      notes$undocumented <- c(notes$undocumented, fname)
    }
    inferred <- inferred_cache[[fname]]
    if (is.null(inferred)) {
      inferred <- tryCatch(
        infer_function(package, fname, funs[[fname]], ns, doc$topic, formulas, md),
        error = function(e) e
      )
      if (inherits(inferred, "error")) {
        notes$failed <- c(notes$failed, paste0(fname, " (", conditionMessage(inferred), ")"))
        next
      }
      inferred_cache[[fname]] <- inferred
      dirty <- TRUE
    }
    schema <- tryCatch(
      package_tool_schema(fname, inferred, ov, shaped, limits, md),
      # Problems with the user's overrides are errors; anything else
      # skips this one function.
      error = function(e) if (inherits(e, "mcplite_override_error")) abort(conditionMessage(e)) else e
    )
    if (inherits(schema, "error")) {
      notes$failed <- c(notes$failed, paste0(fname, " (", conditionMessage(schema), ")"))
      next
    }
    if (is.character(schema)) {
      notes$unusable <- c(notes$unusable, paste0(fname, " (", schema, ")"))
      next
    }
    settable <- setdiff(names(schema$props), shape_argument_names)
    info <- cap_cache[[fname]]
    path_args <- if (isTRUE(info$paths)) capability_path_args(settable, inferred$path_like, schema$props)
    # What reaches the function's own `...` counts even though no tool
    # argument fills it (file.remove(...), options(...)): conservative, and
    # such a tool could do nothing useful anyway.
    dots_settable <- "..." %in% info$formals
    # The decision for these settable arguments is kept with the function's
    # summary (usually the same every time: no overrides).
    decision_key <- paste(c(settable, dots_settable, path_args), collapse = "\r")
    if (identical(info$decided$key, decision_key)) {
      caps <- info$decided$caps
    } else {
      caps <- capability_decide(info, settable, dots_settable, path_args)
      info$decided <- list(key = decision_key, caps = caps)
      cap_cache[[fname]] <- info
      pkg_docs$capabilities <- cap_cache
      dirty <- TRUE
    }
    file_caps <- intersect(names(caps), c("read_files", "write_files"))
    guarded <- NULL
    if (length(file_caps) > 0L && all(file_caps %in% allow)) {
      guarded <- union(capability_file_args(info, settable), path_args)
      caps <- capability_guarded(caps, guarded)
    }
    denied <- setdiff(names(caps), allow)
    classification[[fname]] <- list(tool = tool_name, caps = unclass(caps)[seq_along(caps)],
                                    served = length(denied) == 0L)
    if (length(denied) > 0L) {
      if (!is.null(include)) {
        refused[[fname]] <- caps[denied]
      } else {
        notes$left_out[[fname]] <- caps[denied]
      }
      next
    }
    guard <- if (!is.null(guarded)) list(root = root, args = guarded, network = "network" %in% allow)
    built <- tryCatch(
      build_package_tool(fname, funs[[fname]], inferred, schema, tool_name, ov,
                         c(capability_annotations(caps, annotations), annotations), guard),
      error = function(e) if (inherits(e, "mcplite_override_error")) abort(conditionMessage(e)) else e
    )
    if (inherits(built, "error")) {
      notes$failed <- c(notes$failed, paste0(fname, " (", conditionMessage(built), ")"))
      next
    }
    if (length(caps) > 0L) {
      notes$allowed[[fname]] <- caps
    }
    # Where the tool comes from and what it can do, for mcp_manifest() and
    # the result's "capabilities" attribute; kept in the tool function's
    # environment so that printing the tool stays unchanged.
    assign("package_info", list(package = package, version = version, fun = fname,
                                capabilities = as.character(names(caps))),
           envir = environment(built))
    out[[tool_name]] <- built
  }
  if (dirty) {
    pkg_docs$inferred[[formulas]] <- inferred_cache
    save_package_docs(pkg_docs, package, docs, cache)
  }
  if (length(refused) > 0L) {
    abort_refused(package, refused)
  }
  if (!quiet) {
    report_package_notes(package, notes, root)
  }
  attr(out, "capabilities") <- classification_frame(classification)
  out
}

# -- capabilities (RULES R8.8) ---------------------------------------------------

check_allow <- function(allow) {
  if (is.null(allow)) {
    return(character())
  }
  if (!is.character(allow) || anyNA(allow)) {
    abort("`allow` must be a character vector of capability names, not ", describe(allow), ".")
  }
  unknown <- setdiff(allow, names(capability_labels))
  if (length(unknown) > 0L) {
    abort("`allow` names unknown capabilities ", quote_names(unknown), "; the capabilities are ",
          quote_names(names(capability_labels), max = 20L), ".")
  }
  unique(allow)
}

# The directory that file arguments must stay inside, required when files
# may be read or written.
check_root <- function(root, allow) {
  files <- intersect(allow, c("read_files", "write_files"))
  if (is.null(root)) {
    if (length(files) > 0L) {
      abort("`root` is required when `allow` includes ", quote_names(files), ": the directory ",
            "that the served functions' file arguments must stay inside.")
    }
    return(NULL)
  }
  if (length(files) == 0L) {
    abort("`root` is only used with `allow` including \"read_files\" or \"write_files\".")
  }
  if (!is_scalar_string(root) || !nzchar(root) || !dir.exists(root)) {
    abort("`root` must be the path of an existing directory, not ",
          if (is_scalar_string(root)) paste0("\"", root, "\"") else describe(root), ".")
  }
  normalizePath(root, winslash = "/", mustWork = TRUE)
}

# Tool annotations that follow from the capabilities: a tool that changes
# nothing is read-only; one that writes, runs or changes anything may be
# destructive; the network makes the world open. Annotations the user gives
# win (in either spelling).
capability_annotations <- function(caps, user) {
  given <- names(user)
  out <- list()
  set <- function(snake, value) {
    if (!any(c(snake, annotation_keys[[snake]]) %in% given)) out[[snake]] <<- value
  }
  changes <- setdiff(names(caps), c("read_files", "read_secrets", "network"))
  set("read_only_hint", length(changes) == 0L)
  if (length(changes) > 0L) set("destructive_hint", TRUE)
  set("open_world_hint", "network" %in% names(caps))
  out
}

abort_refused <- function(package, refused) {
  parts <- vapply(names(refused), function(f) {
    caps <- refused[[f]]
    paste0(f, "() ", paste0(capability_labels[names(caps)], " (through ", caps, ")", collapse = " and "))
  }, character(1))
  needed <- unique(unlist(lapply(refused, names), use.names = FALSE))
  abort("`include` names functions of ", package, " that can do more than compute: ",
        paste(parts, collapse = "; "), ". To serve them, allow exactly that with `allow = ",
        if (length(needed) == 1L) paste0("\"", needed, "\"") else
          paste0("c(", paste0("\"", needed, "\"", collapse = ", "), ")"),
        "`", if (any(c("read_files", "write_files") %in% needed)) " and a `root` directory", ".")
}

classification_frame <- function(classification) {
  fnames <- names(classification) %||% character()
  data.frame(
    fun = fnames,
    tool = vapply(classification, `[[`, "", "tool", USE.NAMES = FALSE),
    served = vapply(classification, `[[`, NA, "served", USE.NAMES = FALSE),
    capabilities = vapply(classification, function(x) paste(names(x$caps), collapse = ","), "",
                          USE.NAMES = FALSE),
    through = vapply(classification, function(x) paste(x$caps, collapse = ","), "",
                     USE.NAMES = FALSE),
    stringsAsFactors = FALSE
  )
}

# -- checks -------------------------------------------------------------------

check_installed_package <- function(package) {
  if (!is_scalar_string(package) || !nzchar(package)) {
    abort("`package` must be the name of an installed package as a single string, not ",
          describe(package), ".")
  }
  path <- find.package(package, quiet = TRUE)
  if (length(path) == 0L) {
    abort("`package` must name an installed package, but \"", package,
          "\" is not installed in any library of `.libPaths()`.")
  }
  path[[1L]]
}

check_name_vector <- function(x, arg, null_ok = FALSE) {
  if (is.null(x) && null_ok) {
    return(invisible(x))
  }
  if (!is.character(x) || anyNA(x)) {
    abort("`", arg, "` must be NULL or a character vector of function names, not ",
          describe(x), ".")
  }
  invisible(x)
}

check_regex <- function(x, arg) {
  if (is.null(x)) {
    return(invisible(x))
  }
  if (!is_scalar_string(x)) {
    abort("`", arg, "` must be NULL or a single regular expression, not ", describe(x), ".")
  }
  ok <- tryCatch({
    grepl(x, "", perl = TRUE)
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!ok) {
    abort("`", arg, "` is not a valid regular expression: \"", x, "\".")
  }
  invisible(x)
}

quote_names <- function(x, max = 10L) {
  shown <- paste0("\"", utils::head(x, max), "\"", collapse = ", ")
  if (length(x) > max) paste0(shown, " and ", length(x) - max, " more") else shown
}

# The selected exports that are functions, in name order.
select_exports <- function(package, ns, exports, include, exclude, pattern, exclude_pattern) {
  if (!is.null(include)) {
    missing_names <- setdiff(include, exports)
    if (length(missing_names) > 0L) {
      abort("`include` names objects that ", package, " does not export: ",
            quote_names(missing_names), ".")
    }
    names <- exports[exports %in% include]
  } else {
    names <- exports
  }
  names <- setdiff(names, exclude)
  if (!is.null(pattern)) {
    names <- names[grepl(pattern, names, perl = TRUE)]
  }
  if (!is.null(exclude_pattern)) {
    names <- names[!grepl(exclude_pattern, names, perl = TRUE)]
  }
  funs <- list()
  for (nm in names) {
    obj <- getExportedValue(ns, nm)
    if (is.function(obj)) {
      funs[[nm]] <- obj
    } else if (!is.null(include)) {
      abort("`include` names \"", nm, "\", which ", package, " exports but which is ",
            describe(obj), ", not a function.")
    }
  }
  funs
}

override_fields <- c("name", "title", "description", "arguments", "annotations", "shape", "convert")

# Overrides are the user's own input: problems are errors (plain
# mcplite_error, like every argument check).
check_overrides <- function(overrides, selected, package) {
  fail <- function(...) abort(...)
  if (!is_named_list(overrides)) {
    fail("`overrides` must be a named list (one entry per function name), not ",
         describe_json_shape(overrides), ".")
  }
  unknown <- setdiff(names(overrides), selected)
  if (length(unknown) > 0L) {
    fail("`overrides` names functions that are not selected from ", package, ": ",
         quote_names(unknown), ".")
  }
  for (fname in names(overrides)) {
    ov <- overrides[[fname]]
    where <- paste0("overrides$", fname)
    if (!is_named_list(ov)) {
      fail("`", where, "` must be a named list, not ", describe_json_shape(ov), ".")
    }
    bad <- setdiff(names(ov), override_fields)
    if (length(bad) > 0L) {
      fail("`", where, "` has unknown fields ", quote_names(bad), "; use ",
           paste0("`", override_fields, "`", collapse = ", "), ".")
    }
    if (!is.null(ov$name) && !is_valid_tool_name(ov$name)) {
      fail("`", where, "$name` must be 1 to 128 ASCII letters, digits, `_`, `.` or `-`, not ",
           if (is_scalar_string(ov$name)) paste0("\"", ov$name, "\"") else describe(ov$name), ".")
    }
    for (field in c("title", "description")) {
      if (!is.null(ov[[field]]) && !is_scalar_string(ov[[field]])) {
        fail("`", where, "$", field, "` must be a single string, not ", describe(ov[[field]]), ".")
      }
    }
    if (!is.null(ov$shape) && !is_true_false(ov$shape)) {
      fail("`", where, "$shape` must be TRUE or FALSE, not ", describe(ov$shape), ".")
    }
    if (!is.null(ov$annotations)) {
      tryCatch(map_annotations(ov$annotations, paste0(where, "$annotations")),
               mcplite_error = function(e) fail(conditionMessage(e)))
    }
    args <- ov$arguments
    if (!is.null(args)) {
      if (!is_named_list(args)) {
        fail("`", where, "$arguments` must be a named list of type helpers, not ",
             describe_json_shape(args), ".")
      }
      for (a in names(args)) {
        if (!is_type(args[[a]])) {
          fail("`", where, "$arguments$", a, "` must be a type helper such as type_string(), not ",
               describe(args[[a]]), ".")
        }
        tryCatch(type_schema(args[[a]], paste0(where, "$arguments$", a)),
                 mcplite_error = function(e) fail(conditionMessage(e)))
      }
    }
    conv <- ov$convert
    if (!is.null(conv)) {
      if (!is_named_list(conv) || !all(vapply(conv, is.function, logical(1)))) {
        fail("`", where, "$convert` must be a named list of functions, not ",
             describe_json_shape(conv), ".")
      }
    }
  }
  overrides
}

shape_limits <- function() {
  read <- function(opt, default) {
    v <- getOption(opt, default)
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 1 || v != round(v) || v > .Machine$integer.max) {
      abort("The option `", opt, "` must be a whole number of rows of at least 1, not ",
            describe(v), ".")
    }
    as.integer(v)
  }
  max <- read("mcplite.shape.max_limit", 5000L)
  default <- read("mcplite.shape.limit", 200L)
  list(default = min(default, max), max = max)
}

# The wire spelling of annotation `nm` (itself when it has no other).
annotation_wire_name <- function(nm) {
  wire <- annotation_keys[nm]
  if (length(wire) == 0L || is.na(wire[[1L]])) nm else unname(wire[[1L]])
}

report_package_notes <- function(package, notes, root = NULL) {
  say <- function(...) {
    msg <- paste0("package_tools(\"", package, "\"): ", ...)
    message(structure(
      class = c("mcplite_package_tools_message", "message", "condition"),
      list(message = paste0(msg, "\n"), call = NULL)
    ))
  }
  if (!is.null(notes$no_docs)) {
    say("no help pages used, ", notes$no_docs, ".")
  }
  if (length(notes$undocumented) > 0L && is.null(notes$no_docs)) {
    say(length(notes$undocumented), " function(s) without a help page are served with their ",
        "name and signature only: ", quote_names(notes$undocumented), ".")
  }
  if (length(notes$failed) > 0L) {
    say(length(notes$failed), " help page(s) or function(s) could not be used: ",
        paste(utils::head(notes$failed, 10L), collapse = "; "),
        if (length(notes$failed) > 10L) paste0(" and ", length(notes$failed) - 10L, " more"), ".")
  }
  if (length(notes$unusable) > 0L) {
    say("skipped ", length(notes$unusable), " function(s) with a required argument that JSON ",
        "cannot carry: ", paste(utils::head(notes$unusable, 10L), collapse = ", "),
        if (length(notes$unusable) > 10L) paste0(" and ", length(notes$unusable) - 10L, " more"), ".")
  }
  if (length(notes$bad_name) > 0L) {
    say("skipped ", length(notes$bad_name), " function(s) whose name is not a valid tool name: ",
        quote_names(notes$bad_name), ".")
  }
  if (length(notes$left_out) > 0L) {
    say("left out ", length(notes$left_out), " function(s) that can do more than compute ",
        "(see `allow` in ?package_tools): ", capability_groups(notes$left_out), ".")
  }
  if (length(notes$allowed) > 0L) {
    say("serving ", length(notes$allowed), " function(s) with the capabilities `allow` gives",
        if (!is.null(root)) paste0(" (file arguments inside ", root, ")"), ": ",
        capability_groups(notes$allowed), ".")
  }
}

# "runs commands or programs: system, system2 (2); reads files ...": function
# names grouped by capability.
capability_groups <- function(by_fun) {
  parts <- character()
  for (cap in names(capability_labels)) {
    funs <- names(by_fun)[vapply(by_fun, function(c) cap %in% names(c), logical(1))]
    if (length(funs) > 0L) {
      parts <- c(parts, paste0(capability_labels[[cap]], " (", length(funs), "): ",
                               paste(utils::head(funs, 8L), collapse = ", "),
                               if (length(funs) > 8L) ", ..."))
    }
  }
  paste(parts, collapse = "; ")
}

# -- documentation -------------------------------------------------------------

# list(topic = rendered doc or NULL, failed = reason or NULL)
function_doc <- function(fname, docs) {
  topic <- docs$aliases[fname]
  if (length(topic) == 0L || is.na(topic)) {
    return(list(topic = NULL, failed = NULL))
  }
  topic <- unname(topic)
  if (!is.null(docs$failed) && !is.na(docs$failed[topic])) {
    return(list(topic = NULL, failed = paste0("help page ", topic, ": ", docs$failed[[topic]])))
  }
  list(topic = docs$topics[[topic]], failed = NULL)
}

# -- one tool ------------------------------------------------------------------

# What a function's tool looks like, from the installed package alone (its
# formals, body and help page): cached with the rendered help pages.
# list(args = list(<arg> = list(schema, required, formula) or
# list(unsupported, required)), description, title)
infer_function <- function(package, fname, fun, ns, doc, formulas, md) {
  sig <- function_formals(fun, fname, ns)
  argdocs <- doc_kinds(doc)
  args <- list()
  for (arg in setdiff(names(sig$formals), "...")) {
    args[[arg]] <- infer_argument(arg, sig$formals[[arg]], sig, argdocs, formulas, md)
  }
  # A page documenting several exported functions gives each its own title
  # and description (RULES R8.1).
  usage <- doc$usage %||% character()
  usage <- usage[names(usage) %in% getNamespaceExports(ns)]
  title <- doc$title
  if (!is.null(title) && length(usage) > 1L) {
    title <- paste0(fname, "(): ", title)
  }
  list(args = args, description = tool_description(package, fname, fun, doc, md, usage),
       title = title, path_like = capability_path_like(names(args), argdocs$docs))
}

# The input schema of a function's tool: list(props, required, convert), or a
# string saying why the function cannot be served.
package_tool_schema <- function(fname, inferred, ov, shaped, limits, md) {
  override_args <- ov$arguments %||% list()
  unknown <- setdiff(names(override_args), names(inferred$args))
  if (length(unknown) > 0L) {
    abort("`overrides$", fname, "$arguments` names arguments that ", fname, "() does not have: ",
          quote_names(unknown), ".", class = "mcplite_override_error")
  }
  props <- list()
  required <- character()
  convert <- list()
  for (arg in names(inferred$args)) {
    if (!is.null(override_args[[arg]])) {
      type <- override_args[[arg]]
      schema <- type_schema(type, paste0("overrides$", fname, "$arguments$", arg))
      if (is.null(schema)) {
        next
      }
      props[[arg]] <- schema
      if (type_required(type)) {
        required <- c(required, arg)
      }
      convert[[arg]] <- schema_converter(schema)
      next
    }
    info <- inferred$args[[arg]]
    if (!is.null(info$unsupported)) {
      if (info$required) {
        return(paste0(arg, ": ", info$unsupported))
      }
      next
    }
    props[[arg]] <- info$schema
    if (info$required) {
      required <- c(required, arg)
    }
    convert[[arg]] <- if (isTRUE(info$formula)) formula_from_json else schema_converter(info$schema)
  }
  for (arg in names(ov$convert)) {
    if (!arg %in% names(props)) {
      abort("`overrides$", fname, "$convert$", arg, "` is for an argument that is not in the ",
            "schema of ", fname, "().", class = "mcplite_override_error")
    }
    convert[[arg]] <- ov$convert[[arg]]
  }
  if (shaped) {
    shape_props <- shape_properties(limits, md)
    for (nm in names(shape_props)) {
      props[[nm]] <- shape_props[[nm]]
    }
  }
  list(props = props, required = required, convert = convert, limits = if (shaped) limits)
}

# The tool of one function, from its schema.
build_package_tool <- function(fname, fun, inferred, schema, tool_name, ov, annotations, guard) {
  props <- schema$props
  input <- list(type = "object", properties = if (length(props)) props else structure(list(), names = character()))
  if (length(schema$required) > 0L) {
    input$required <- as.list(schema$required)
  }
  input$additionalProperties <- FALSE

  description <- ov$description %||% inferred$description
  ann <- annotations[!duplicated(names(annotations), fromLast = TRUE)]
  title <- ov$title %||% inferred$title
  if (!is.null(title) && nzchar(title) && is.null(ann$title)) {
    ann <- c(list(title = title), ann)
  }
  for (nm in names(ov$annotations)) {
    # Either spelling of an annotation replaces both.
    wire <- annotation_wire_name(nm)
    same <- names(ann) == nm | names(ann) %in% names(annotation_keys)[annotation_keys == wire] |
      names(ann) == wire
    ann <- ann[!same]
    ann[nm] <- list(ov$annotations[[nm]])
  }
  if (!is.null(ov$title)) {
    ann$title <- ov$title
  }
  wrapper <- package_tool_wrapper(fun, fname, schema$convert, schema$limits, guard)
  tool(wrapper, description, arguments = type_from_schema(input), name = tool_name,
       annotations = ann)
}

# -- descriptions within a budget (RULES R8.1) ----------------------------------

# Characters of a tool description beyond its lead (usage line and what a
# shared page says about this function) and the Description's first
# paragraph, which are always kept whole; and of an argument description,
# which keeps its first paragraph up to this length.
description_budget <- 150L
argument_budget <- 100L

# Paragraphs and list items of rendered help text.
doc_units <- function(text) {
  if (is.null(text) || !nzchar(text)) {
    return(character())
  }
  units <- strsplit(text, "\n+", perl = TRUE)[[1L]]
  units[nzchar(units)]
}

# Units joined back: list items on consecutive lines, paragraphs apart.
join_units <- function(units) {
  if (length(units) == 0L) {
    return("")
  }
  item <- grepl("^(- |[0-9]+\\. )", units)
  sep <- ifelse(c(FALSE, item[-1L] & item[-length(item)]), "\n", "\n\n")
  paste0(units, c(sep[-1L], ""), collapse = "")
}

# Which units mention the function `name` (as code in Markdown, as a word in
# plain text).
mentions <- function(units, name, md) {
  if (length(units) == 0L) {
    return(logical())
  }
  if (md) {
    return(grepl(paste0("`", name, "`"), units, fixed = TRUE) |
             grepl(paste0("`", name, "("), units, fixed = TRUE))
  }
  esc <- gsub("([.\\\\|()\\[\\]{}^$*+?])", "\\\\\\1", name, perl = TRUE)
  grepl(paste0("(?<![A-Za-z0-9._])", esc, "(?![A-Za-z0-9_]|\\.[A-Za-z])"), units, perl = TRUE)
}

mentions_any <- function(units, names, md) {
  hit <- logical(length(units))
  for (nm in names) hit <- hit | mentions(units, nm, md)
  hit
}

# `text` cut to at most `room` characters: at the end of a sentence when one
# ends in the second half, else at a word, marked with an ellipsis. NULL
# when too little room is left to say anything.
cut_text <- function(text, room, md) {
  if (nchar(text) <= room) {
    return(text)
  }
  if (room < 60L) {
    return(NULL)
  }
  head <- substr(text, 1L, room - 1L)
  ends <- gregexpr("[.!?](?=\\s)", head, perl = TRUE)[[1L]]
  ends <- ends[ends > room / 2]
  out <- if (length(ends) > 0L && ends[[1L]] > 0L) {
    substr(head, 1L, ends[[length(ends)]])
  } else {
    paste0(sub("\\s+\\S*$", "", head, perl = TRUE), "\u2026")
  }
  # A cut inside inline code would leave an unbalanced backtick.
  if (md && lengths(regmatches(out, gregexpr("`", out, fixed = TRUE))) %% 2L == 1L) {
    out <- paste0(sub("`[^`]*$", "", out, perl = TRUE), "\u2026")
  }
  out
}

# An argument's description: its first paragraph, within the budget.
argument_text <- function(doc, md) {
  units <- doc_units(doc)
  if (length(units) == 0L) {
    return(NULL)
  }
  cut_text(units[[1L]], argument_budget, md) %||% units[[1L]]
}

# A tool's description from its help page (RULES R8.1). When the page
# documents several functions, the description leads with this function's
# usage and what the page says about it alone, and leaves out the
# paragraphs about the page's other functions. The Description's first
# paragraph is always kept; the rest follows within description_budget.
tool_description <- function(package, fname, fun, doc, md, usage = character()) {
  if (is.null(doc)) {
    sig <- signature_text(package, fname, fun)
    return(if (md) paste0("R function `", sig, "` (no help page).") else
      paste0("R function ", sig, " (no help page)."))
  }
  code <- function(x) if (md) paste0("`", gsub("`", "'", x, fixed = TRUE), "`") else x
  value_label <- if (md) "**Value:** " else "Value: "
  desc <- doc_units(doc$description)
  value <- doc_units(doc$value)
  lead <- character()
  if (length(usage) > 1L) {
    others <- setdiff(names(usage), fname)
    own <- mentions(value, fname, md)
    lead <- c(if (!is.na(usage[fname])) code(usage[[fname]]),
              if (any(own)) paste0(value_label, join_units(value[own])))
    value <- value[!own & !mentions_any(value, others, md)]
    rest <- desc[-1L]
    keep <- mentions(rest, fname, md) | !mentions_any(rest, others, md)
    desc <- c(desc[1L], rest[keep])
  }
  if (length(value) > 0L) {
    value[[1L]] <- paste0(value_label, value[[1L]])
  }
  # Whole: the lead and the first paragraph. Then, within the budget, the
  # value's first paragraph and the other paragraphs in page order.
  first <- desc[1L][!is.na(desc[1L])]
  optional <- c(desc[-1L], value)
  first_value <- max(length(desc) - 1L, 0L) + 1L
  order <- if (length(value) > 0L) c(first_value, seq_along(optional)[-first_value]) else
    seq_along(optional)
  keep <- rep(NA_character_, length(optional))
  room <- description_budget
  shortened <- FALSE
  for (i in order) {
    text <- cut_text(optional[[i]], room, md)
    if (is.null(text)) {
      shortened <- TRUE
      next
    }
    shortened <- shortened || !identical(text, optional[[i]])
    keep[[i]] <- text
    room <- room - nchar(text) - 2L
  }
  parts <- c(lead, first, keep[!is.na(keep)])
  if (shortened) {
    parts <- c(parts, paste0("(More: ", code(paste0("?", package, "::", fname)), ".)"))
  }
  join_units(parts)
}

signature_text <- function(package, fname, fun) {
  f <- formals(args(fun) %||% fun)
  parts <- vapply(names(f), function(nm) {
    if (is_missing_arg(f[[nm]])) {
      return(nm)
    }
    paste(nm, "=", paste(deparse(f[[nm]], width.cutoff = 500L), collapse = " "))
  }, character(1))
  paste0(package, "::", fname, "(", paste(parts, collapse = ", "), ")")
}

is_missing_arg <- function(x) is.symbol(x) && identical(as.character(x), "")

# Formals to describe, with the environment their defaults refer to, the
# names of arguments used with match.arg() (and whether several.ok) and
# those tested with missing().
function_formals <- function(fun, fname, ns) {
  f <- formals(args(fun) %||% fun) %||% list()
  bodies <- list(body(fun))
  env <- environment(fun) %||% ns
  if (is_s3_generic(fun)) {
    method <- utils::getS3method(fname, "default", optional = TRUE, envir = ns)
    if (is.function(method) && !is.primitive(method)) {
      mf <- formals(method)
      extra <- setdiff(names(mf), names(f))
      for (nm in names(mf)) {
        if (nm %in% names(f) && nm != "..." && is_missing_arg(f[[nm]])) {
          f[nm] <- list(mf[[nm]])
        }
      }
      f <- c(f, mf[extra])
      bodies <- c(bodies, list(body(method)))
    }
  }
  usage <- list(match_arg = character(), several_ok = character(), missing = character(),
                match_call = FALSE)
  for (b in bodies) {
    usage <- scan_body(b, usage)
  }
  no_default <- names(f)[vapply(f, is_missing_arg, logical(1)) & names(f) != "..."]
  own_missing <- usage$missing
  handed_on <- setdiff(no_default, usage$missing)
  if (length(handed_on) > 0L) {
    usage$missing <- c(usage$missing, passed_to_missing(bodies, handed_on, env, ns))
  }
  list(formals = f, env = env, match_arg = usage$match_arg, several_ok = usage$several_ok,
       tested_missing = usage$missing, own_missing = own_missing, match_call = usage$match_call,
       first_without_default = no_default[1L],
       used = if (usage$match_call) unique(unlist(lapply(bodies, value_uses), use.names = FALSE)))
}

# The names whose values a function body uses: every symbol, except the
# member of `$` and `@` (z$na.action), a name being assigned to, and the
# argument of missing(). A model-building function takes its arguments from
# match.call(), so one it never uses by name is optional (lm(na.action =));
# integrate(f) calls match.fun(f), by() calls FUN (RULES R8.3).
value_uses <- function(b) {
  out <- character()
  walk <- function(e) {
    if (is.symbol(e)) {
      out[[length(out) + 1L]] <<- as.character(e)
      return()
    }
    if (!is.call(e)) {
      return()
    }
    head <- if (is.symbol(e[[1L]])) as.character(e[[1L]]) else ""
    if (head %in% c("$", "@") && length(e) == 3L) {
      walk(e[[2L]])
    } else if (head == "missing") {
      return()
    } else if (head %in% c("<-", "=", "<<-") && length(e) == 3L) {
      if (!is.symbol(e[[2L]])) walk(e[[2L]])
      walk(e[[3L]])
    } else if (head == "function") {
      walk(e[[3L]])
    } else {
      for (i in seq_along(e)) walk(e[[i]])
    }
  }
  walk(b)
  unique(out)
}

is_s3_generic <- function(fun) {
  if (is.primitive(fun) || !"UseMethod" %in% all.names(body(fun))) {
    return(FALSE)
  }
  found <- FALSE
  walk <- function(e) {
    if (found) return()
    if (is.call(e)) {
      if (identical(e[[1L]], as.name("UseMethod"))) {
        found <<- TRUE
        return()
      }
      for (i in seq_along(e)) if (is.call(e[[i]])) walk(e[[i]])
    }
  }
  walk(body(fun))
  found
}

# Record match.arg(name, ...) and missing(name) uses in a function body.
scan_body <- function(b, usage) {
  used <- all.names(b)
  if ("match.call" %in% used) {
    usage$match_call <- TRUE
  }
  if (!any(c("match.arg", "missing") %in% used)) {
    return(usage)
  }
  walk <- function(e) {
    if (!is.call(e)) {
      return()
    }
    head <- e[[1L]]
    if (is.symbol(head) && identical(as.character(head), "match.call")) {
      usage$match_call <<- TRUE
    } else if (is.symbol(head) && length(e) >= 2L) {
      fn <- as.character(head)
      if (fn == "match.arg") {
        args <- as.list(e)[-1L]
        nms <- names(args) %||% rep("", length(args))
        pos <- which(nms == "")
        target <- if ("arg" %in% nms) args[["arg"]] else if (length(pos)) args[[pos[1L]]]
        if (is.symbol(target)) {
          usage$match_arg <<- c(usage$match_arg, as.character(target))
          sok <- args[["several.ok"]]
          if (isTRUE(sok) || identical(sok, quote(TRUE))) {
            usage$several_ok <<- c(usage$several_ok, as.character(target))
          }
        }
      } else if (fn == "missing" && is.symbol(e[[2L]])) {
        usage$missing <<- c(usage$missing, as.character(e[[2L]]))
      }
    }
    for (i in seq_along(e)) {
      if (is.call(e[[i]])) walk(e[[i]])
    }
  }
  if (is.call(b)) walk(b)
  usage
}

# Arguments without a default that the function hands on as they are (a
# bare name, by position or by name) to a function that tests them with
# missing(), or hands them on again (hist(ylab =) reaches plot.histogram(),
# smoothScatter(bandwidth =) a density helper): the missing value is handled
# there, so such an argument is optional (RULES R8.3). Methods of a generic
# are looked up among those defined by `ns` and by the generic's own
# package, so that the answer does not depend on what else is loaded.
passed_to_missing <- function(bodies, args, env, ns, depth = 2L) {
  found <- character()
  walk <- function(e) {
    if (!is.call(e) || length(found) == length(args)) {
      return()
    }
    parts <- as.list(e)[-1L]
    bare <- vapply(parts, function(a) if (is.symbol(a)) as.character(a) else "", "")
    hits <- setdiff(intersect(bare, args), found)
    if (length(hits) > 0L) {
      for (callee in callee_candidates(e[[1L]], env, ns)) {
        formal <- matched_formals(callee, e, hits)
        for (a in names(formal)) {
          if (handles_missing(callee, formal[[a]], ns, depth)) {
            found <<- union(found, a)
          }
        }
      }
    }
    for (i in seq_along(e)) {
      if (is.call(e[[i]])) walk(e[[i]])
    }
  }
  for (b in bodies) walk(b)
  found
}

# Does `fun` cope with its argument `formal` being missing?
handles_missing <- function(fun, formal, ns, depth) {
  f <- formals(fun)
  if (!formal %in% names(f) || formal == "..." || !is_missing_arg(f[[formal]])) {
    return(FALSE)
  }
  if (formal %in% scan_body(body(fun), list(missing = character()))$missing) {
    return(TRUE)
  }
  depth > 1L && formal %in% passed_to_missing(list(body(fun)), formal, environment(fun) %||% ns,
                                              ns, depth - 1L)
}

# The closures a call's head may reach: the function itself, or for an S3
# generic its methods.
callee_candidates <- function(head, env, ns) {
  fun <- NULL
  name <- NULL
  if (is.symbol(head)) {
    name <- as.character(head)
    if (nzchar(name) && exists(name, envir = env, mode = "function", inherits = TRUE)) {
      fun <- get(name, envir = env, mode = "function", inherits = TRUE)
    }
  } else if (is.call(head) && length(head) == 3L && is.symbol(head[[1L]]) &&
             as.character(head[[1L]]) %in% c("::", ":::") && is.symbol(head[[2L]]) &&
             is.symbol(head[[3L]])) {
    pkg <- as.character(head[[2L]])
    name <- as.character(head[[3L]])
    if (isNamespaceLoaded(pkg)) {
      fun <- get0(name, envir = asNamespace(pkg), mode = "function", inherits = FALSE)
    }
  }
  if (!is.function(fun) || is.primitive(fun)) {
    return(list())
  }
  if (!is_s3_generic(fun)) {
    return(list(fun))
  }
  table <- get0(".__S3MethodsTable__.", envir = environment(fun), inherits = FALSE)
  if (!is.environment(table)) {
    return(list(fun))
  }
  homes <- list(ns, environment(fun))
  methods <- sort(ls(table, pattern = paste0("^", gsub(".", "\\.", name, fixed = TRUE), "\\.")),
                  method = "radix")
  out <- list(fun)
  for (m in methods) {
    method <- get(m, envir = table)
    home <- environment(method)
    if (is.function(method) && !is.primitive(method) &&
        any(vapply(homes, identical, NA, home))) {
      out[[length(out) + 1L]] <- method
    }
  }
  out
}

# Which formal of `fun` each of the bare names `args` in the call `e` reaches
# (c(arg = formal)); names that land in `...` are left out.
matched_formals <- function(fun, e, args) {
  keep <- !vapply(as.list(e), identical, NA, quote(...))
  keep[[1L]] <- TRUE
  e <- e[keep]
  mc <- tryCatch(match.call(fun, e, expand.dots = FALSE), error = function(err) NULL)
  if (is.null(mc)) {
    return(character())
  }
  out <- character()
  parts <- as.list(mc)[-1L]
  for (nm in setdiff(names(parts), "...")) {
    v <- parts[[nm]]
    if (is.symbol(v) && as.character(v) %in% args) {
      out[[as.character(v)]] <- nm
    }
  }
  out
}

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
    !(sig$match_call && !identical(arg, sig$first_without_default))
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

# -- converting JSON values ------------------------------------------------------

# A function turning the parsed JSON value of an argument into the R value
# for the schema's type.
schema_converter <- function(schema) {
  type <- schema$type
  if (identical(type, "array")) {
    item <- schema$items$type
    if (is_scalar_string(item) && item %in% c("boolean", "integer", "number", "string")) {
      return(function(value) as_atomic(value, item))
    }
  }
  if (is_scalar_string(type) && type %in% c("boolean", "integer", "number", "string")) {
    return(function(value) as_atomic(value, type))
  }
  if (identical(schema[names(schema) != "description"], series_schema)) {
    return(series_from_json)
  }
  # An array of arrays becomes a matrix only where the schema names one
  # (RULES R8.3): untyped, it may be a list of samples (kruskal.test(x =)).
  is_matrix <- function(s) {
    is.list(s) && identical(s$type, "array") && is.list(s$items) && identical(s$items$type, "array")
  }
  if (is_matrix(schema) || any(vapply(schema$anyOf %||% list(), is_matrix, NA))) {
    return(function(value) simplify_json(value, matrix = TRUE))
  }
  simplify_json
}

# A time series from an array of values, or from an object with `data` and
# optionally `frequency` and `start` (series_schema); other values are
# simplified as untyped ones, for the function to report.
series_from_json <- function(value) {
  if (!is.list(value) || is.null(names(value)) || !"data" %in% names(value)) {
    return(simplify_json(value))
  }
  # `[[` matches names exactly (`$` would take "start_date" for "start").
  data <- as_atomic(value[["data"]], "number")
  frequency <- value[["frequency"]] %||% 1
  start <- value[["start"]] %||% 1
  if (!all(names(value) %in% c("data", "frequency", "start")) ||
      !is.numeric(data) || !is.numeric(frequency) || length(frequency) != 1L || !is.finite(frequency) ||
      frequency <= 0 || !is.numeric(start <- as_atomic(start, "number")) || !length(start) %in% 1:2) {
    stop("a time series is {\"data\": [numbers], \"frequency\": a positive number, ",
         "\"start\": a number or [unit, period]}", call. = FALSE)
  }
  stats::ts(data, start = start, frequency = frequency)
}

# A formula from its text: the string must parse to a single `~` call. The
# call is turned into a formula without evaluating any of its terms. A model
# function evaluates the terms later, so (RULES R8.8) the functions a term may
# call are limited to formula operators and arithmetic, and the formula's
# environment reaches R's attached packages but not the global environment.
formula_from_json <- function(value) {
  if (!is_scalar_string(value)) {
    stop("a formula must be given as a single string such as \"y ~ x\"", call. = FALSE)
  }
  expr <- tryCatch(str2lang(value), error = function(e) NULL)
  if (!is.call(expr) || !identical(expr[[1L]], as.name("~"))) {
    stop("\"", value, "\" is not a formula such as \"y ~ x\"", call. = FALSE)
  }
  bad <- setdiff(formula_calls(expr), formula_functions)
  if (length(bad) > 0L) {
    stop("the formula \"", value, "\" calls ", paste0(bad, "()", collapse = ", "),
         ", which a formula may not; it may call ", paste0(formula_functions[-1L], collapse = " "),
         call. = FALSE)
  }
  env <- if ("package:stats" %in% search()) as.environment("package:stats") else baseenv()
  stats::as.formula(expr, env = new.env(parent = env))
}

formula_functions <- c(
  "~", "+", "-", "*", "/", "^", ":", "%in%", "|", "(", "I", "log", "log2", "log10", "log1p", "exp",
  "expm1", "sqrt", "abs", "sin", "cos", "tan", "poly", "offset", "factor", "as.factor", "ordered",
  "as.numeric", "as.integer", "scale", "cut", "Error"
)

# The names of the functions a formula's terms call.
formula_calls <- function(e) {
  if (!is.call(e)) {
    return(character())
  }
  head <- e[[1L]]
  out <- if (is.symbol(head)) as.character(head) else c("(computed)", formula_calls(head))
  for (i in seq_along(e)[-1L]) out <- c(out, formula_calls(e[[i]]))
  unique(out)
}

# -- calling the function -------------------------------------------------------

# The tool function: converts the arguments, calls the package function by
# its name (so that warnings and sys.call() read `median(...)`), and shapes
# or converts the result.
package_tool_wrapper <- function(fun, fname, convert, limits, guard = NULL) {
  force(fun)
  force(convert)
  force(limits)
  force(guard)
  # Arguments are passed as values; language objects among them (formulas)
  # are wrapped in quote(), which is all this environment has to resolve.
  call_env <- new.env(parent = baseenv())
  assign(fname, fun, envir = call_env)
  function(...) {
    args <- list(...)
    nms <- names(args)
    if (length(args) > 0L && (is.null(nms) || any(!nzchar(nms)))) {
      stop("all arguments must be named", call. = FALSE)
    }
    shaping <- NULL
    if (!is.null(limits)) {
      shaping <- shape_request(args, limits)
      args <- args[!names(args) %in% shape_argument_names]
    }
    for (nm in intersect(names(args), names(convert))) {
      if (!is.null(args[[nm]])) {
        args[nm] <- list(convert[[nm]](args[[nm]]))
      }
    }
    for (i in seq_along(args)) {
      if (is.language(args[[i]])) {
        args[[i]] <- call("quote", args[[i]])
      }
    }
    if (!is.null(guard)) {
      # RULES R8.8: file arguments stay inside `root`, which is also the
      # working directory during the call.
      check_path_args(args, guard)
      owd <- setwd(guard$root)
      on.exit(setwd(owd), add = TRUE)
    }
    # RULES R8.9: what the function draws comes back as an image.
    package_tool_call(function() do.call(fname, args, envir = call_env), function(res) {
      if (!is.null(shaping) && is.data.frame(res)) shape_rows(res, shaping) else package_tool_value(res)
    })
  }
}

# The file arguments of a call must name paths inside the served directory
# (after resolving `..` and symbolic links), the console (""), or with
# "network" allowed a web address. Anything else is a tool error.
check_path_args <- function(args, guard) {
  for (nm in intersect(names(args), guard$args)) {
    v <- args[[nm]]
    if (is.null(v)) {
      next
    }
    if (!is.character(v)) {
      stop("`", nm, "` must be a path inside the served directory", call. = FALSE)
    }
    for (x in v) {
      if (is.na(x) || !nzchar(x)) {
        next
      }
      if (grepl("^[A-Za-z][A-Za-z0-9+.-]*://", x)) {
        if (guard$network && grepl("^(https?|ftps?)://", x, ignore.case = TRUE)) {
          next
        }
        stop("`", nm, "` must be a path inside the served directory, not a URL",
             if (!guard$network) " (web addresses need \"network\" in `allow`)", call. = FALSE)
      }
      if (!path_inside(x, guard$root)) {
        stop("`", nm, "` must be a path inside the served directory, not \"", x, "\"", call. = FALSE)
      }
    }
  }
  invisible()
}

# Does `x` (relative paths are relative to `root`) lie inside `root` (a
# normalized directory)? The existing part of the path is resolved with its
# symbolic links; the rest may not climb with "..".
path_inside <- function(x, root) {
  if (startsWith(x, "|") || grepl("\\n|\\r", x)) {
    return(FALSE)
  }
  x <- path.expand(x)
  if (!startsWith(x, "/")) {
    x <- file.path(root, x)
  }
  parts <- strsplit(x, "/", fixed = TRUE)[[1L]]
  parts <- parts[nzchar(parts) & parts != "."]
  rest <- character()
  repeat {
    head <- paste0("/", paste(parts, collapse = "/"))
    if (length(parts) == 0L || file.exists(head)) {
      break
    }
    rest <- c(parts[[length(parts)]], rest)
    parts <- parts[-length(parts)]
  }
  if (any(rest == "..")) {
    return(FALSE)
  }
  real <- normalizePath(head, winslash = "/", mustWork = FALSE)
  full <- if (length(rest)) paste(c(sub("/$", "", real), rest), collapse = "/") else real
  identical(full, root) || startsWith(full, paste0(sub("/$", "", root), "/"))
}

# -- shaping ----------------------------------------------------------------------

shape_argument_names <- c(".limit", ".offset", ".columns", ".format")

shape_properties <- function(limits, md) {
  code <- function(x) if (md) paste0("`", x, "`") else x
  list(
    .limit = list(
      type = "integer", minimum = 0L, maximum = limits$max, default = limits$default,
      description = paste0("When the result is a data frame: the maximum number of rows to return ",
                           "(at most ", limits$max, ").")
    ),
    .offset = list(
      type = "integer", minimum = 0L, default = 0L,
      description = "When the result is a data frame: the number of rows to skip first."
    ),
    .columns = list(
      type = "array", items = list(type = "string"),
      description = "When the result is a data frame: the columns to keep (default: all)."
    ),
    .format = list(
      type = "string", enum = list("records", "csv", "markdown"), default = "records",
      description = paste0("When the result is a data frame: how the rows are written in the text ",
                           "content. The structured content always has ", code("total_rows"), ".")
    )
  )
}

shape_request <- function(args, limits) {
  whole <- function(v, name, default) {
    if (is.null(v)) {
      return(default)
    }
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || v != round(v)) {
      stop("`", name, "` must be a whole number of at least 0", call. = FALSE)
    }
    v
  }
  limit <- min(whole(args[[".limit"]], ".limit", limits$default), limits$max)
  offset <- min(whole(args[[".offset"]], ".offset", 0), .Machine$integer.max)
  columns <- args[[".columns"]]
  if (!is.null(columns)) {
    columns <- as_atomic(columns, "string")
    if (!is.character(columns) || anyNA(columns)) {
      stop("`.columns` must be an array of column names", call. = FALSE)
    }
  }
  format <- args[[".format"]] %||% "records"
  if (!is_scalar_string(format) || !format %in% c("records", "csv", "markdown")) {
    stop("`.format` must be \"records\", \"csv\" or \"markdown\"", call. = FALSE)
  }
  list(limit = as.integer(limit), offset = offset, columns = columns, format = format)
}

shape_rows <- function(df, req) {
  total <- nrow(df)
  if (!is.null(req$columns)) {
    unknown <- setdiff(req$columns, names(df))
    if (length(unknown) > 0L) {
      stop("`.columns` names columns that the result does not have: ",
           paste(unknown, collapse = ", "), "; its columns are: ",
           paste(names(df), collapse = ", "), call. = FALSE)
    }
    df <- df[, req$columns, drop = FALSE]
  }
  first <- min(req$offset, total)
  last <- min(req$offset + req$limit, total)
  rows <- df[seq_len(last - first) + first, , drop = FALSE]
  structured <- list(
    total_rows = total,
    offset = as.integer(req$offset),
    limit = req$limit,
    returned_rows = nrow(rows),
    columns = I(names(rows)),
    rows = rows
  )
  if (req$format == "records") {
    return(tool_result(structured_content = structured))
  }
  summary <- if (nrow(rows) == 0L) {
    paste0("No rows returned (offset ", req$offset, ") of ", total, " in total.")
  } else {
    paste0("Rows ", first + 1L, " to ", last, " of ", total, ".")
  }
  table <- if (req$format == "csv") rows_csv(rows) else rows_markdown(rows)
  tool_result(content = list(content_text(summary), content_text(table)),
              structured_content = structured)
}

has_row_names <- function(df) is.character(attr(df, "row.names"))

rows_csv <- function(df) {
  con <- textConnection("csv_lines", "w", local = TRUE)
  on.exit(close(con))
  utils::write.csv(df, con, row.names = has_row_names(df), na = "")
  paste(textConnectionValue(con), collapse = "\n")
}

rows_markdown <- function(df) {
  cells <- lapply(df, function(col) {
    text <- if (is.numeric(col)) format(col, trim = TRUE, digits = 7L) else as.character(col)
    text[is.na(col)] <- ""
    gsub("|", "\\|", gsub("[\r\n]+", " ", text), fixed = TRUE)
  })
  header <- names(df)
  if (has_row_names(df)) {
    cells <- c(list(row.names(df)), cells)
    header <- c("", header)
  }
  line <- function(x) paste0("| ", paste(x, collapse = " | "), " |")
  body <- if (nrow(df) > 0L) {
    vapply(seq_len(nrow(df)), function(i) line(vapply(cells, `[`, "", i)), character(1))
  }
  paste(c(line(header), line(rep("---", length(header))), body), collapse = "\n")
}
