# What a function can do besides computing a value (RULES R8.8), decided by
# the classifier itself (R/capabilities*.R) for small synthetic functions:
# one per class and per path the decision takes. package_tools() on real
# packages, with each capability left out and then allowed and its effect
# observed, is in test-package-tools.R.

# The synthetic functions live in an environment of their own under the
# mcplite namespace, so that their names resolve as a package's do (its own
# functions first, then base R) and each is keyed "mcplite::<name>". Every
# name is used once: summaries are kept for the session.
fixtures <- new.env(parent = asNamespace("mcplite"))

fixture <- function(...) {
  funs <- list(...)
  for (nm in names(funs)) {
    f <- funs[[nm]]
    environment(f) <- fixtures
    assign(nm, f, envir = fixtures)
  }
  invisible()
}

# The capabilities package_tools() would decide for fixture `name`: a named
# character vector, capability -> the operation that gives it, with the
# arguments it arrives through as the attribute "via". `settable` names the
# arguments a client can set (by default all of them), `path_args` those
# that hold a file, command or address.
classify <- function(name, settable = NULL, path_args = character()) {
  fun <- get(name, envir = fixtures)
  fmls <- names(formals(fun))
  info <- mcplite:::capability_infos("mcplite", stats::setNames(list(fun), name))[[name]]
  if (is.null(settable)) settable <- setdiff(fmls, "...")
  mcplite:::capability_decide(info, settable, "..." %in% fmls, path_args)
}

caps_of <- function(...) as.character(names(classify(...)))

test_that("R8.8: the tables parse into capabilities, each through its argument", {
  spec <- mcplite:::cap_parse_spec("read_files:1 write_files:description@openw network")
  expect_identical(spec, list(
    list(cap = "read_files", arg = "1", kind = "value"),
    list(cap = "write_files", arg = "description", kind = "openw"),
    list(cap = "network", arg = NULL, kind = "value")
  ))
  # Every capability named in a table is a class of capability_labels.
  tables <- c(mcplite:::capability_internal, mcplite:::capability_functions, mcplite:::capability_routines)
  named <- unique(unlist(lapply(tables, function(s) {
    vapply(mcplite:::cap_parse_spec(s), `[[`, "", "cap")
  }), use.names = FALSE))
  expect_true(length(named) > 5L)
  expect_identical(setdiff(named, names(mcplite:::capability_labels)), character())
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

test_that("R8.8: an S4 generic made from another package's function reaches its methods", {
  # methods' kronecker() is a generic of base's kronecker(): the generic
  # belongs to base, its methods' table (the default method calls
  # .kronecker(), which calls match.fun(FUN)) to methods. Served, FUN =
  # "Sys.getenv" read the environment (the adversarial suite, issue 40).
  tl <- package_tools("methods", pattern = "^(kronecker|cbind2)$", quiet = TRUE, cache = FALSE)
  expect_identical(names(tl), "cbind2")
  caps <- attr(tl, "capabilities")
  expect_identical(caps$capabilities[caps$fun == "kronecker"], "call_functions")
})

test_that("R8.8: names resolve as in a package, never through the global environment", {
  fixture(fx_resolve_helper = function(x) x)
  expect_identical(mcplite:::cap_resolve("readLines", fixtures)$key, "base::readLines")
  expect_identical(mcplite:::cap_resolve("fx_resolve_helper", fixtures)$key, "mcplite::fx_resolve_helper")
  expect_identical(mcplite:::cap_resolve_qualified("utils", "head", "mcplite")$key, "utils::head")
  # R's default packages are found without being imported.
  expect_identical(mcplite:::cap_resolve("median", fixtures)$key, "stats::median")
  assign("fx_only_global", function() system("true"), envir = globalenv())
  withr::defer(rm("fx_only_global", envir = globalenv()))
  expect_null(mcplite:::cap_resolve("fx_only_global", fixtures))
  # Dispatch is followed to the methods for the values JSON makes.
  keys <- vapply(mcplite:::cap_s3_methods("print", asNamespace("base")), `[[`, "", "key")
  expect_true(all(c("base::print.default", "base::print.data.frame") %in% keys))
  expect_false("base::print.table" %in% keys)
})

test_that("R8.8: pkg::f into a package the function's own does not name is unknown_code, and left unloaded", {
  # In a fresh R: tcltk is one of R's base packages, but loading it starts
  # Tcl in the process (and opens the display); mcplite's DESCRIPTION does
  # not name codetools. jsonlite (imported) and bit64 (suggested) are
  # followed.
  skip_if_not_installed("bit64")
  skip_if_not_installed("codetools")
  code <- c(
    "e <- new.env(parent = asNamespace('mcplite'))",
    "funs <- list(fx_tcl = function(x) tcltk::tclvalue(x), fx_codetools = function(x) codetools::findGlobals(x),",
    "             fx_json = function(x) jsonlite::toJSON(x), fx_bit64 = function(x) bit64::as.integer64(x))",
    "for (i in seq_along(funs)) environment(funs[[i]]) <- e",
    "infos <- mcplite:::capability_infos('mcplite', funs)",
    "for (f in names(funs)) {",
    "  caps <- mcplite:::capability_decide(infos[[f]], 'x', FALSE, character())",
    "  cat(f, names(caps), unlist(caps), '\\n')",
    "}",
    "cat('loaded:', intersect(c('tcltk', 'codetools'), loadedNamespaces()), '\\n')"
  )
  out <- system2(http_rscript(), c("--vanilla", "-e", shQuote(paste(code, collapse = "\n"))),
                 stdout = TRUE, stderr = TRUE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  expect_identical(out, c("fx_tcl unknown_code tcltk::tclvalue ", "fx_codetools unknown_code codetools::findGlobals ",
                          "fx_json  ", "fx_bit64  ", "loaded:  "))
})

test_that("R8.8: a function that only computes has no capability", {
  fixture(fx_pure = function(x, y = 2) {
    z <- x * y
    c(mean = mean(z), total = sum(z), text = paste(format(z), collapse = " "))
  })
  expect_identical(caps_of("fx_pure"), character())
})

test_that("R8.8: running a command is run_commands, whatever the command", {
  fixture(
    fx_cmd = function(cmd) system(cmd, intern = TRUE),
    fx_cmd_fixed = function() system2("uname", "-a", stdout = TRUE)
  )
  caps <- classify("fx_cmd")
  expect_identical(names(caps), "run_commands")
  expect_identical(caps[["run_commands"]], "system()")
  # A command the function fixes itself counts too (any use counts).
  expect_identical(caps_of("fx_cmd_fixed"), "run_commands")
})

test_that("R8.8: reading a file counts when the caller chooses it (read_files)", {
  fixture(
    fx_read = function(path) readLines(path),
    fx_read_own = function() readLines("/etc/hostname"),
    fx_read_default = function(path = "settings.txt") readLines(path),
    fx_read_derived = function(name, path = paste0(name, ".txt")) readLines(path)
  )
  expect_identical(caps_of("fx_read"), "read_files")
  expect_identical(attr(classify("fx_read"), "via")[["read_files"]], "path")
  # A file the function names itself reads nothing a client chooses.
  expect_identical(caps_of("fx_read_own"), character())
  # Through a default: only when a client can set the argument, or a value
  # the default is made from.
  expect_identical(caps_of("fx_read_default", settable = character()), character())
  expect_identical(caps_of("fx_read_default", settable = "path"), "read_files")
  expect_identical(caps_of("fx_read_derived", settable = "name"), "read_files")
  expect_identical(caps_of("fx_read_derived", settable = character()), character())
})

test_that("R8.8: writing a file counts whatever its name, the console does not (write_files)", {
  fixture(
    fx_write = function(text, path) writeLines(text, path),
    fx_write_fixed = function(text) writeLines(text, "out.txt"),
    fx_write_console = function(text) writeLines(text),
    fx_remove = function(x) unlink(x)
  )
  expect_identical(caps_of("fx_write"), "write_files")
  expect_identical(caps_of("fx_write_fixed"), "write_files")
  expect_identical(caps_of("fx_write_console"), character())
  expect_identical(caps_of("fx_remove"), "write_files")
})

test_that("R8.8: a connection's open mode says whether it reads or writes", {
  fixture(
    fx_open_read = function(p) {
      con <- file(p, "r")
      on.exit(close(con))
      readLines(con)
    },
    fx_open_write = function(p, text) {
      con <- file(p, "w")
      on.exit(close(con))
      writeLines(text, con)
    }
  )
  expect_identical(caps_of("fx_open_read"), "read_files")
  expect_identical(caps_of("fx_open_write"), "write_files")
  expect_identical(mcplite:::cap_open_mode(quote(c("a", "w"))), "write")
  expect_identical(mcplite:::cap_open_mode("rb"), "read")
  expect_identical(mcplite:::cap_open_mode(quote(mode)), "both")
})

test_that("R8.8: a pipe as a file name runs a command, dropped once paths are checked", {
  fixture(fx_cat = function(x, file) cat(x, file = file))
  caps <- classify("fx_cat")
  expect_true(all(c("run_commands", "write_files") %in% names(caps)))
  # Behind the check of file arguments against `root`, no pipe can be named.
  guarded <- names(mcplite:::capability_guarded(caps, "file"))
  expect_false("run_commands" %in% guarded)
  expect_true("write_files" %in% guarded)
  expect_true("run_commands" %in% names(mcplite:::capability_guarded(caps, character())))
})

test_that("R8.8: reaching the network is network", {
  fixture(fx_headers = function(u) curlGetHeaders(u))
  caps <- classify("fx_headers")
  expect_identical(names(caps), "network")
  expect_identical(caps[["network"]], "curlGetHeaders()")
})

test_that("R8.8: code made from the caller's text and evaluated is evaluate_code", {
  fixture(
    fx_eval = function(text) eval(parse(text = text)),
    fx_eval_own = function(x) eval(quote(x + 1))
  )
  expect_identical(caps_of("fx_eval"), "evaluate_code")
  # The function's own code, evaluated on the caller's values, is not.
  expect_identical(caps_of("fx_eval_own"), character())
})

test_that("R8.8: a function named by the caller and called is call_functions", {
  fixture(
    fx_call = function(f, x) do.call(f, list(x)),
    fx_call_fixed = function(x) do.call("sum", list(x)),
    fx_match = function(FUN, x) match.fun(FUN)(x)
  )
  expect_identical(caps_of("fx_call"), "call_functions")
  # A function named by a constant is that function.
  expect_identical(caps_of("fx_call_fixed"), character())
  expect_identical(caps_of("fx_match"), "call_functions")
})

test_that("R8.8: environment variables named by the caller, or all of them, are read_secrets", {
  fixture(
    fx_env = function(name) Sys.getenv(name),
    fx_env_all = function() Sys.getenv(NULL),
    fx_env_none = function() Sys.getenv(),
    fx_env_none_named = function() Sys.getenv(unset = NA),
    fx_env_fixed = function() Sys.getenv("HOME")
  )
  expect_identical(caps_of("fx_env"), "read_secrets")
  # NULL names all of them, written or left as the default.
  expect_identical(caps_of("fx_env_all"), "read_secrets")
  expect_identical(caps_of("fx_env_none"), "read_secrets")
  expect_identical(caps_of("fx_env_none_named"), "read_secrets")
  # One the function names itself is no secret a client chooses.
  expect_identical(caps_of("fx_env_fixed"), character())
})

test_that("R8.8: the session changed and left so is change_session; undone, it is not", {
  fixture(
    fx_options = function(digits) options(digits = digits),
    fx_options_undone = function(x) {
      op <- options(digits = 3)
      on.exit(options(op))
      format(x)
    },
    fx_options_read = function() options("digits"),
    fx_setwd = function(dir) setwd(dir),
    fx_super = function(v) {
      set <- function() fx_counter <<- v
      set()
    }
  )
  expect_identical(caps_of("fx_options"), "change_session")
  expect_identical(caps_of("fx_options_undone"), character())
  expect_identical(caps_of("fx_options_read"), character())
  expect_identical(caps_of("fx_setwd"), "change_session")
  # `<<-` to a variable outside the function.
  caps <- classify("fx_super")
  expect_identical(names(caps), "change_session")
  expect_identical(caps[["change_session"]], "<<-")
})

test_that("R8.8: `<<-` at the top of a closure keeps state past the call: change_session", {
  # A function defined in local() (not in a namespace) whose `<<-` sets its
  # enclosure: tools' bibstyle() served, bibstyle(style = "x", .init = TRUE)
  # made "x" the default style of every later call (the adversarial suite,
  # issue 40).
  fixture(fx_closure_state = function(style) last_style <<- style)
  expect_identical(caps_of("fx_closure_state"), "change_session")
  tl <- package_tools("tools", pattern = "^(bibstyle|toTitleCase)$", quiet = TRUE, cache = FALSE)
  expect_identical(names(tl), "toTitleCase")
  caps <- attr(tl, "capabilities")
  expect_identical(caps$capabilities[caps$fun == "bibstyle"], "change_session")
})

test_that("R8.8: stopping the R process is processes", {
  fixture(fx_quit = function() quit(save = "no"))
  expect_identical(caps_of("fx_quit"), "processes")
})

test_that("R8.8: a .Internal() function not reviewed is unknown_code", {
  fixture(fx_unreviewed = function(x) .Internal(mcplite_not_an_internal(x)))
  caps <- classify("fx_unreviewed")
  expect_identical(names(caps), "unknown_code")
  expect_identical(caps[["unknown_code"]], ".Internal(mcplite_not_an_internal)")
})

test_that("R8.8: compiled code given a file or command is taken to use it", {
  fixture(fx_compiled = function(file, cmd) .Call("mcplite_no_such_routine", file, cmd))
  expect_identical(caps_of("fx_compiled"), character())
  expect_identical(caps_of("fx_compiled", path_args = "file"), c("read_files", "write_files"))
  expect_identical(caps_of("fx_compiled", path_args = c("file", "cmd")),
                   c("run_commands", "read_files", "write_files"))
  # Arguments hold paths by name or by the first sentence of their help.
  expect_identical(
    mcplite:::capability_path_like(c("file", "x", "n"), c(x = "a path to the file to read.", n = "a number.")),
    c("file", "x")
  )
})

test_that("R8.8: capabilities are followed through helper functions, by argument (the call graph)", {
  fixture(
    fx_helper_run = function(cmd) system(cmd),
    fx_helper_read = function(p) readLines(p),
    fx_via_run = function(x) fx_helper_run(x),
    fx_via_read_arg = function(file) fx_helper_read(file),
    fx_via_read_fixed = function() fx_helper_read("/etc/hostname"),
    fx_via_apply = function(paths) lapply(paths, fx_helper_read)
  )
  expect_identical(caps_of("fx_via_run"), "run_commands")
  caps <- classify("fx_via_read_arg")
  expect_identical(names(caps), "read_files")
  expect_identical(attr(caps, "via")[["read_files"]], "file")
  # The helper's argument is bound at the call site: a constant there reads
  # nothing a client chooses.
  expect_identical(caps_of("fx_via_read_fixed"), character())
  # A function given to lapply() is called with the elements of its X.
  expect_identical(caps_of("fx_via_apply"), "read_files")
  expect_identical(caps_of("fx_via_apply", settable = character()), character())
})

test_that("R8.8: mutually recursive functions are solved to a fixed point", {
  fixture(
    fx_even = function(n, p) if (n == 0) readLines(p) else fx_odd(n - 1, p),
    fx_odd = function(n, p) if (n == 0) "odd" else fx_even(n - 1, p)
  )
  # fx_odd is solved first, before fx_even's summary is known; the file
  # arrives through `p` around the cycle.
  caps <- classify("fx_odd")
  expect_identical(names(caps), "read_files")
  expect_identical(attr(caps, "via")[["read_files"]], "p")
  expect_identical(caps_of("fx_odd", settable = "n"), character())
})
