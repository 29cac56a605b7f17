# package_tools(): tools for the exported functions of an installed package,
# with names, descriptions and argument schemas taken from the function's
# formals and its installed help page. Every tool is made by tool(), so the
# server treats it like any hand-written tool.
# Its parts are in R/package-*.R and R/capabilities*.R (ARCHITECTURE.md).

# Never served (RULES R8.1): see package_tools().
session_state_bindings <- c(".Last.value", ".Random.seed", ".Traceback")

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
#' the same installed package files, R version, mcplite version and R code
#' (another build of mcplite with the same version is another key), and
#' `docs` format, so a reinstalled or upgraded package is read again; there is one
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
#'   skipped functions. In a worker process of [mcp_server()] they are never
#'   given (the server gives them once).
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
  check_required(package, "the name of an installed package, e.g. \"stats\".")
  path <- check_installed_package(package)
  formulas <- check_choice(formulas, c("omit", "string"))
  docs <- check_choice(docs, c("markdown", "text"))
  check_character(include, allow_null = TRUE, what = "a character vector of function names")
  check_character(exclude, allow_null = TRUE, what = "a character vector of function names")
  check_regex(pattern, "pattern")
  check_regex(exclude_pattern, "exclude_pattern")
  check_string(prefix)
  if (!(is_true_false(cache) || is_scalar_string(cache))) {
    abort_arg("`cache` must be TRUE, FALSE or a directory path, not ", describe(cache), ".")
  }
  check_bool(quiet)
  map_annotations(annotations, "annotations")
  allow <- check_allow(allow)
  root <- check_root(root, allow)
  if (!(is_true_false(shape) || (is.character(shape) && !anyNA(shape)))) {
    abort_arg("`shape` must be TRUE, FALSE or a character vector of function names, not ",
              describe(shape), ".")
  }
  ns <- tryCatch(
    suppressPackageStartupMessages(loadNamespace(package, lib.loc = dirname(path))),
    error = function(e) {
      abort_arg("`package` \"", package, "\" is installed but could not be loaded: ", conditionMessage(e))
    }
  )
  clear_signature_memo()
  on.exit(clear_signature_memo(), add = TRUE)
  all_exports <- getNamespaceExports(ns)
  exports <- sort(all_exports, method = "radix")
  # Bindings of base that hold the session's state, not functions of the
  # package: `.Last.value` is whatever the last top-level call returned (a
  # function of the server's script, at times).
  exports <- setdiff(exports, session_state_bindings)
  funs <- select_exports(package, ns, exports, include, exclude, pattern, exclude_pattern)
  overrides <- check_overrides(overrides, names(funs), package)
  if (is.character(shape)) {
    unknown <- setdiff(shape, names(funs))
    if (length(unknown) > 0L) {
      abort_arg("`shape` names functions that are not selected from ", package, ": ",
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
        infer_function(package, fname, funs[[fname]], ns, doc$topic, formulas, md, all_exports),
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
      error = function(e) if (inherits(e, "mcplite_override_error")) abort_arg(conditionMessage(e)) else e
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
      error = function(e) if (inherits(e, "mcplite_override_error")) abort_arg(conditionMessage(e)) else e
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
  # A worker runs the server's script again: the server has said it all.
  if (!quiet && !is_worker()) {
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
    abort_arg("`allow` must be a character vector of capability names, not ", describe(allow), ".")
  }
  unknown <- setdiff(allow, names(capability_labels))
  if (length(unknown) > 0L) {
    abort_arg("`allow` names unknown capabilities ", quote_names(unknown), "; the capabilities are ",
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
      abort_arg("`root` is required when `allow` includes ", quote_names(files), ": the directory ",
                "that the served functions' file arguments must stay inside.")
    }
    return(NULL)
  }
  if (length(files) == 0L) {
    abort_arg("`root` is only used with `allow` including \"read_files\" or \"write_files\".")
  }
  if (!is_scalar_string(root) || !nzchar(root) || !dir.exists(root)) {
    abort_arg("`root` must be the path of an existing directory, not ",
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
  abort_arg("`include` names functions of ", package, " that can do more than compute: ",
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
  check_string(package, allow_empty = FALSE, what = "the name of an installed package as a single string")
  path <- find.package(package, quiet = TRUE)
  if (length(path) == 0L) {
    abort_arg("`package` must name an installed package, but \"", package,
              "\" is not installed in any library of `.libPaths()`.")
  }
  path[[1L]]
}

check_regex <- function(x, arg) {
  if (is.null(x)) {
    return(invisible(x))
  }
  check_string(x, what = "a single regular expression", allow_null = TRUE, arg = arg)
  ok <- tryCatch({
    grepl(x, "", perl = TRUE)
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!ok) {
    abort_arg("`", arg, "` is not a valid regular expression: \"", x, "\".")
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
      abort_arg("`include` names objects that ", package, " does not export: ",
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
      abort_arg("`include` names \"", nm, "\", which ", package, " exports but which is ",
                describe(obj), ", not a function.")
    }
  }
  funs
}

override_fields <- c("name", "title", "description", "arguments", "annotations", "shape", "convert")

# Overrides are the user's own input: problems are errors (class
# mcplite_error_argument, like every argument check).
check_overrides <- function(overrides, selected, package) {
  fail <- function(...) abort_arg(...)
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
# list(unsupported, required)), description, title). `exports`: the names
# the namespace exports.
infer_function <- function(package, fname, fun, ns, doc, formulas, md, exports) {
  sig <- function_formals(fun, fname, ns)
  argdocs <- doc_kinds(doc)
  args <- list()
  for (arg in setdiff(names(sig$formals), "...")) {
    args[[arg]] <- infer_argument(arg, sig$formals[[arg]], sig, argdocs, formulas, md)
  }
  # A page documenting several exported functions gives each its own title
  # and description (RULES R8.1).
  usage <- doc$usage %||% character()
  usage <- usage[names(usage) %in% exports]
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
    abort_arg("`overrides$", fname, "$arguments` names arguments that ", fname, "() does not have: ",
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
      abort_arg("`overrides$", fname, "$convert$", arg, "` is for an argument that is not in the ",
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
