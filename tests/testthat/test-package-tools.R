# package_tools() and mcp_manifest() on real installed packages (stats,
# utils, tools) and on a small package built and installed by the tests
# (undocumented functions, exported data, damaged help pages). The parts of
# package_tools() are tested in the file named as their source file
# (test-package-types.R, ...), the classifier in test-capabilities.R.

modern_meta <- list(
  `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
  `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
)

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

test_that("R8.1: base's bindings of session state are never served, even when they hold a function", {
  skip_on_cran()
  skip_if_not_installed("processx")
  # At the top level of a script, .Last.value is the value of the call before.
  res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", paste(
    "secret_helper <- function() 'from the script'",
    "secret_helper",
    "cat(names(mcplite::package_tools('base', pattern = '^[.]', quiet = TRUE)), sep = '\\n')",
    sep = "\n"
  )), env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)), error_on_status = FALSE)
  expect_identical(res$status, 0L, info = res$stderr)
  served <- strsplit(res$stdout, "\n", fixed = TRUE)[[1]]
  expect_true(length(served) > 0L)
  expect_false(any(c(".Last.value", ".Random.seed", ".Traceback") %in% served))
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
    if (is.null(lib)) {
      lib <<- install_test_package("mcplitefixture", list(
        NAMESPACE = "export(documented, undocumented, titled_twice, some_data, apply_fun, in_env)",
        "R/code.R" = c(
          "documented <- function(n = 2L, label = c('a', 'b'), flag = FALSE) {",
          "  label <- match.arg(label); data.frame(i = seq_len(n), label = label, flag = flag)",
          "}",
          "undocumented <- function(x, y = 1.5) x * y",
          "titled_twice <- function(z) z",
          "apply_fun <- function(f, x) f(x)",
          "in_env <- function(x, envir = parent.frame()) x",
          "some_data <- 1:3"
        ),
        "man/documented.Rd" = c(
          "\\name{documented}", "\\alias{documented}", "\\alias{titled_twice}",
          "\\title{Make a \\emph{small} table}",
          "\\description{Builds a data frame with \\code{n} rows.}",
          "\\usage{documented(n = 2L, label = c('a', 'b'), flag = FALSE)\ntitled_twice(z)}",
          "\\arguments{\\item{n}{an integer: the number of rows.}",
          "\\item{label}{the label.}\\item{flag}{logical flag.}\\item{z}{a character string.}}",
          "\\value{A data frame.}"
        ),
        "man/apply_fun.Rd" = c(
          "\\name{apply_fun}", "\\alias{apply_fun}", "\\alias{in_env}", "\\title{Apply}",
          "\\description{Apply.}", "\\usage{apply_fun(f, x)\nin_env(x, envir = parent.frame())}",
          "\\arguments{\\item{f}{a function to apply.}\\item{x}{anything.}",
          "\\item{envir}{an environment.}}"
        )
      ))
    }
    lib
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
  # So is an entry another build of mcplite wrote (same version, other code).
  rm(list = ls(docs_memory), envir = docs_memory)
  cached <- readRDS(file)
  cached$key$code <- "another build"
  cached$inferred$omit$file_ext$description <- "From another build"
  saveRDS(cached, file)
  c3 <- package_tools("tools", cache = dir, quiet = TRUE)
  expect_identical(mcp_manifest(c3), mcp_manifest(a))
  expect_identical(readRDS(file)$key$code, mcplite_code_id())
  # Without a cache the result is the same.
  expect_identical(mcp_manifest(package_tools("tools", cache = FALSE, quiet = TRUE)), mcp_manifest(a))
})

test_that("R8.6: the cache key's code identity follows the code, not where or how it was installed", {
  code <- function(text) {
    env <- new.env(parent = baseenv())
    eval(parse(text = text, keep.source = TRUE), env)
    env
  }
  a <- code("f <- function(x, n = 2) x^n; table <- c(a = 1); helper <- function() f(2)")
  # The same code, compiled to byte code, in another environment, with a
  # native symbol (which names the library it was loaded from) and an
  # environment (state) beside it.
  b <- code("f <- function(x, n = 2) x^n; table <- c(a = 1); helper <- function() f(2)")
  b$f <- compiler::cmpfun(b$f)
  b$symbol <- list(name = "x", address = new.env(), dll = list(path = tempfile()))
  b$state <- new.env()
  expect_identical(code_identity(a), code_identity(b))
  expect_match(code_identity(a), "^[0-9a-f]{32}$")
  # Another body, default or table value is another identity.
  expect_false(identical(code_identity(a), code_identity(code(
    "f <- function(x, n = 2) x^n + 0; table <- c(a = 1); helper <- function() f(2)"))))
  expect_false(identical(code_identity(a), code_identity(code(
    "f <- function(x, n = 3) x^n; table <- c(a = 1); helper <- function() f(2)"))))
  expect_false(identical(code_identity(a), code_identity(code(
    "f <- function(x, n = 2) x^n; table <- c(a = 2); helper <- function() f(2)"))))
  # mcplite's own, worked out when it was installed, is that of its code as
  # loaded now (byte-compiled, and run: R marks code it has evaluated).
  invisible(package_tools("tools", include = "file_ext", cache = FALSE, quiet = TRUE))
  now <- as.environment(as.list(asNamespace("mcplite"), all.names = TRUE))
  rm("mcplite_code_digest", envir = now)
  expect_identical(mcplite_code_id(), code_identity(now))
})

test_that("package_tools() keeps nothing of its signature memo once it returns", {
  # The memo (callees resolved, their handling of missing formals) is for
  # one call: a package reloaded later is read afresh. hist.default() hands
  # `ylab` on to plot.histogram(), which tests missing(ylab) (RULES R8.3):
  # the memo is filled and used.
  g <- package_tools("graphics", include = "hist", cache = FALSE, quiet = TRUE)
  expect_identical(unlist(input_schema(g$hist)$required), "x")
  expect_identical(ls(signature_memo, all.names = TRUE), character())
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

test_that("commands do not run unless allowed (run_commands)", {
  skip_if_not_installed("data.table")
  # In a directory made before the call: what a package tool's call creates
  # at the top of the temporary directory is removed after it (RULES R8.10).
  marker <- tempfile("mcplite-cmd-", tmpdir = withr::local_tempdir())
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
  # Allowed, the function runs, and what it changed is undone after the
  # call (RULES R8.10): the next call starts from the same process.
  tl <- package_tools("base", include = c("setwd", "getwd", "Sys.setlocale"),
                      allow = "change_session", quiet = TRUE)
  withr::defer(setwd(wd))
  session <- mcp_handler(tl)
  res <- call_tool(session, "setwd", list(dir = dir))
  expect_false(res$isError)
  expect_identical(getwd(), wd)
  expect_identical(call_tool(session, "getwd", list())$content[[1]]$text, wd)
  collate <- Sys.getlocale("LC_COLLATE")
  res <- call_tool(session, "Sys.setlocale", list(category = "LC_COLLATE", locale = "C"))
  expect_false(res$isError)
  expect_identical(Sys.getlocale("LC_COLLATE"), collate)
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
  # In a directory made before the call: what a package tool's call creates
  # at the top of the temporary directory is removed after it (RULES R8.10).
  marker <- tempfile("mcplite-eval-", tmpdir = withr::local_tempdir())
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
  # In a directory made before the call: what a package tool's call creates
  # at the top of the temporary directory is removed after it (RULES R8.10).
  marker <- tempfile("mcplite-fun-", tmpdir = withr::local_tempdir())
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


test_that("R8.6: the cache directory needs no home directory when a variable names it (a service user's /nonexistent)", {
  cache <- withr::local_tempdir()
  withr::local_options(warn = 2)
  withr::with_envvar(c(HOME = "/nonexistent", R_USER_CACHE_DIR = cache, XDG_CACHE_HOME = NA), {
    expect_identical(mcplite:::user_cache_dir(), file.path(cache, "R", "mcplite"))
    # What R itself says (R_user_dir() warns about the home, an error here).
    expect_identical(mcplite:::user_cache_dir(), suppressWarnings(tools::R_user_dir("mcplite", "cache")))
  })
  withr::with_envvar(c(HOME = "/nonexistent", R_USER_CACHE_DIR = NA, XDG_CACHE_HOME = cache), {
    expect_identical(mcplite:::user_cache_dir(), file.path(cache, "R", "mcplite"))
  })
  withr::with_envvar(c(R_USER_CACHE_DIR = NA, XDG_CACHE_HOME = NA), {
    expect_identical(mcplite:::user_cache_dir(), tools::R_user_dir("mcplite", "cache"))
  })
})
