# What a function can do besides computing a value (RULES R8.8): the
# capability classification behind package_tools()'s safe default.
#
# A function's capabilities are found from its code. Every call it makes is
# followed, through the package's own functions and into other packages and
# base R, down to the operations whose effect is known: the `.Internal()`
# functions and primitives of base R and a few compiled routines, listed once
# in the tables below. Each such operation has capabilities, some of them only
# for some of its arguments (`file.exists()` reads the file system through its
# first argument). Where an argument comes from decides whether the capability
# matters:
#
# * for the classes in `capability_influence` (reading files, reading
#   secrets, calling functions by name, evaluating code) only values the
#   caller gives count: a package reading one of its own installed files, or
#   calling get("print"), reads no file and calls no function a client
#   chooses;
# * for the other classes (running commands, writing files, the network,
#   processes, session changes) any use counts, except a few harmless
#   constants (`file = ""` means the console, `stderr()` a stream).
#
# A function's summary lists its capabilities as entries `cap \t via \t
# kind \t why`: `via` is empty when the capability is always there, else the
# name of the function's own argument through which it arrives (the
# capability matters when the caller can set that argument). Summaries are
# computed for the whole call graph reached from the served functions, to a
# fixed point (the graph has cycles), and kept for the R session: they depend
# only on the installed code.
#
# This is hand-written rather than built on codetools: what is needed is not
# the list of globals a function uses but where its arguments flow, across
# calls, with the argument bindings of each call site; codetools has no such
# analysis, and the walk below is also what keeps jsonlite the only non-base
# import (RULES section 0).

# -- the classes -------------------------------------------------------------

capability_labels <- c(
  run_commands = "runs commands or programs",
  call_functions = "calls functions named by the caller",
  evaluate_code = "evaluates code or sources files",
  read_files = "reads files or connections",
  write_files = "writes, moves or deletes files",
  network = "reaches the network",
  processes = "starts, signals or stops processes",
  change_session = "changes the R session",
  read_secrets = "reads environment variables",
  unknown_code = "runs code this classification cannot follow"
)

capability_names <- names(capability_labels)

# Classes that count only when the caller's values reach the operation.
capability_influence <- c("call_functions", "evaluate_code", "read_files", "read_secrets")

# -- the table of known effects ------------------------------------------------

# Operations of base R with capabilities, as `name = "spec"`. A spec is one or
# more `cap` or `cap:args` items separated by spaces: without args the
# capability is always there; with args (positions for .Internal() functions
# and primitives, names for R functions) only through those arguments. An
# argument may end in `@kind`: `env` (an environment: only the global
# environment, namespaces and the search path count), `names` (environment
# variable names: NULL means all of them), `fun` (a function or the name of
# one), `any` (any value counts, even for a class of capability_influence).
#
# Every .Internal() function and primitive of base R not listed here has been
# reviewed and has no capability (capability_pure); one that is in neither
# list (a newer R) is classified "unknown_code" until reviewed. A change to
# any table here changes cached results: bump docs_cache_format
# (R/package-docs.R) with it.
capability_internal <- c(
  # commands and programs
  system = "run_commands:1", pipe = "run_commands:1", dyn.load = "run_commands:1",
  dyn.unload = "change_session",
  file.show = "run_commands read_files:1", curlDownload = "network:1 write_files:2",
  # processes
  quit = "processes",
  # network
  url = "network:1", curlGetHeaders = "network:1", socketConnection = "network:1",
  socketAccept = "network", serverSocket = "network:1", sockSelect = "network",
  socketTimeout = "network",
  # reading the file system
  file = "read_files:1 write_files:1", gzfile = "read_files:1 write_files:1",
  bzfile = "read_files:1 write_files:1", xzfile = "read_files:1 write_files:1",
  unz = "read_files:1", fifo = "read_files:1 write_files:1",
  file.exists = "read_files:1", file.access = "read_files:1", file.info = "read_files:1",
  dir.exists = "read_files:1", list.files = "read_files:1", list.dirs = "read_files:1",
  Sys.glob = "read_files:1", Sys.readlink = "read_files:1", normalizePath = "read_files:1",
  file.choose = "read_files", mmap_file = "read_files:1", getConnection = "read_files:1",
  lazyLoadDBfetch = "read_files:2",
  # writing the file system
  file.create = "write_files:1", file.remove = "write_files:1",
  file.rename = "write_files:1 write_files:2", file.append = "write_files:1 read_files:2",
  file.copy = "read_files:1 write_files:2", file.symlink = "write_files:2",
  file.link = "write_files:2", dir.create = "write_files:1", unlink = "write_files:1",
  Sys.chmod = "write_files:1", setFileTime = "write_files:1", truncate = "write_files",
  save = "write_files:2", save.to.file = "write_files:2", lazyLoadDBinsertValue = "write_files:2",
  bcprofstart = "write_files", readRenviron = "read_files:1 change_session",
  # evaluating code: the value evaluated must be code made from the caller's
  # text (JSON values are never code; see capability_code_makers)
  eval = "evaluate_code:1@code", unserialize = "evaluate_code:1",
  # calling functions by name
  do.call = "call_functions:1@fun", get = "call_functions:1@fun", get0 = "call_functions:1@fun",
  mget = "call_functions:1@fun", getNamespaceValue = "call_functions:1 call_functions:2",
  # environment variables
  Sys.getenv = "read_secrets:1@names", commandArgs = "read_secrets",
  # the session
  Sys.setenv = "change_session", Sys.unsetenv = "change_session", setwd = "change_session",
  Sys.setlocale = "change_session", attach = "change_session", detach = "change_session",
  sink = "change_session", setTimeLimit = "change_session", setSessionTimeLimit = "change_session",
  enableJIT = "change_session", compilePKGS = "change_session", gctorture = "change_session",
  gctorture2 = "change_session", gcinfo = "change_session", debug = "change_session",
  undebug = "change_session", debugonce = "change_session", traceOnOff = "change_session",
  bindtextdomain = "change_session", icuSetCollate = "change_session",
  setNumMathThreads = "change_session", setMaxNumMathThreads = "change_session",
  registerNamespace = "change_session", unregisterNamespace = "change_session",
  reg.finalizer = "change_session", Sys.umask = "change_session:1",
  options = "change_session", mkUnbound = "change_session",
  assign = "change_session:3@env", remove = "change_session:2@env",
  delayedAssign = "change_session:4@env", list2env = "change_session:2@env",
  makeActiveBinding = "change_session:3@env", lockBinding = "change_session:2@env",
  unlockBinding = "change_session:2@env", lockEnvironment = "change_session:1@env",
  `parent.env<-` = "change_session:1@env", importIntoEnv = "change_session:1@env",
  makeLazy = "change_session:3@env", `.Primitive` = "call_functions:1@fun",
  # Served as tools themselves, the interfaces to compiled code call the
  # routine the caller names (a string finds any registered routine of a
  # loaded package: .Call("CfreadR", ...) is data.table's fread). Inside a
  # package's own code they are followed as compiled routines instead.
  .C = "call_functions:1@fun", .Call = "call_functions:1@fun", .External = "call_functions:1@fun",
  .External2 = "call_functions:1@fun", .Fortran = "call_functions:1@fun",
  .Call.graphics = "call_functions:1@fun", .External.graphics = "call_functions:1@fun"
)

# R functions whose code is not followed because their effect is known and
# their code would say less (`pkg::name = "spec"`, arguments by name).
capability_functions <- c(
  "base::Sys.getenv" = "read_secrets:x@names",
  "base::file" = "read_files:description@openr write_files:description@openw",
  "base::gzfile" = "read_files:description@openr write_files:description@openw",
  "base::bzfile" = "read_files:description@openr write_files:description@openw",
  "base::xzfile" = "read_files:description@openr write_files:description@openw",
  "base::options" = "change_session:...@options",
  "base::loadNamespace" = "change_session:package@influence",
  "base::requireNamespace" = "change_session:package@influence",
  "base::library" = "change_session", "base::require" = "change_session",
  "base::attachNamespace" = "change_session",
  "base::q" = "processes", "base::quit" = "processes",
  "base::system" = "run_commands", "base::system2" = "run_commands",
  "base::Sys.setenv" = "change_session", "base::Sys.unsetenv" = "change_session",
  "base::Sys.setlocale" = "change_session", "base::setwd" = "change_session",
  # Opened for writing by a caller, a text connection assigns a variable (in
  # the global environment unless `local`) and stays open, using up one of
  # R's connection slots; capture.output() and the like open their own.
  "base::textConnection" = "change_session:open@influence",
  "utils::download.file" = "network write_files:destfile@any",
  # Reads `file` (a path, URL or connection); column classes are turned into
  # functions only for the known class names (do.call() on them), which the
  # code's %in% check ensures and this analysis cannot see.
  "utils::read.table" = "read_files:file",
  "utils::Rprof" = "write_files:filename change_session",
  "utils::Rprofmem" = "write_files:filename change_session",
  "tools::pskill" = "processes", "tools::psnice" = "processes",
  # Settings of the whole process that stay after the call.
  "data.table::setDTthreads" = "change_session", "data.table::setNumericRounding" = "change_session",
  "grDevices::pdf.options" = "change_session", "grDevices::ps.options" = "change_session",
  "grDevices::X11.options" = "change_session", "grDevices::quartz.options" = "change_session",
  "grDevices::setEPS" = "change_session", "grDevices::setPS" = "change_session",
  "tools::startDynamicHelp" = "network", "tools::installFoundDepends" = "network write_files",
  # The system time zone: read from the system (and by running timedatectl,
  # a fixed program), cached in base; nothing a caller chooses.
  "base::Sys.timezone" = "",
  # Opening the default graphics device: package tools draw on a device of
  # their own (see package_tool_wrapper()).
  "grDevices::dev.new" = "", "grDevices::dev.interactive" = "",
  # Converts the caller's own variable to a data.table by reference (assigns
  # in the calling frame).
  "data.table::setDT" = "",
  # Plotting: a data frame is drawn with pairs(), whose panel functions come
  # from arguments a client cannot set (functions); legend(trace = TRUE)
  # prints its steps with cat() to the console.
  "graphics::plot.data.frame" = "", "graphics::legend" = "",
  # The S4 class machinery of the methods package: lookups of class and
  # method definitions and the caches that hold them (an empty spec: none of
  # the capabilities, code not followed).
  "methods::as" = "", "methods::is" = "", "methods::new" = "", "methods::validObject" = "",
  "methods::getClassDef" = "", "methods::getClass" = "", "methods::existsMethod" = "",
  "methods::hasMethod" = "", "methods::getMethod" = "", "methods::selectMethod" = "",
  "methods::extends" = "", "methods::isVirtualClass" = "", "methods::slot" = "",
  "methods::slotNames" = "", "methods::show" = "", "methods::possibleExtends" = "",
  "methods::.classEnv" = "", "methods::initialize" = "", "methods::getGenerics" = "",
  # Data-frame methods whose only way to evaluate code or call functions is
  # the formula or function a caller gives as their `f`, which their callers
  # here never do: split.data.frame(f = <formula>) and the do.call(Map, ...)
  # over columns of the duplicated() methods.
  "base::split.data.frame" = "", "base::duplicated.data.frame" = "",
  "base::anyDuplicated.data.frame" = "", "base::unique.data.frame" = "",
  "parallel::mcparallel" = "processes", "parallel::mcfork" = "processes",
  "parallel::makeCluster" = "processes network"
)

# Compiled routines whose effect is known (`pkg::routine = "spec"`, arguments
# by position in the .Call()). Other compiled code is taken to compute only,
# unless the function has an argument for a file, command or address (see
# capability_arg_pattern).
capability_routines <- c(
  "data.table::CfreadR" = "read_files:1", "data.table::fwriteR" = "write_files:2",
  "data.table::CfwriteR" = "write_files:2",
  "utils::C_sockconnect" = "network", "utils::C_sockopen" = "network",
  "utils::C_socklisten" = "network", "utils::C_sockread" = "network",
  "utils::C_sockwrite" = "network", "utils::C_sockclose" = "network", "utils::C_nsl" = "network"
)

# Names and help texts of arguments that hold a file, connection, command or
# address.
capability_path_names <- c(
  "file", "files", "filename", "filenames", "fname", "path", "paths", "dir", "dirs",
  "directory", "con", "connection", "destfile", "outfile", "infile", "logfile", "lib",
  "lib.loc", "url", "urls", "cmd", "command", "commands"
)
capability_arg_pattern <- paste0(
  "\\b(files?|file ?names?|directory|directories|folders?|urls?|commands?|shell)\\b|",
  "\\bpaths? (to|of) (an? |the )?(file|directory|folder)"
)

# .Internal() functions and primitives of base R (4.2) that have been reviewed
# and have none of the capabilities: computation, conditions and restarts,
# environments the function creates, reading and writing connections that
# were opened elsewhere (the opening is what counts), the random number
# generator, and introspection.
capability_pure <- c(
  ".addCondHands", ".addGlobHands", ".addRestart", ".addTryHandlers", ".dfltStop", ".dfltWarn",
  ".getRestart", ".invokeRestart", ".resetCondHands", ".signalCondition", "abbreviate",
  "activeBindingFunction", "address", "adist", "agrep", "agrepl", "all.names", "altrep_class",
  "anyDuplicated", "aperm", "aregexec", "args", "array", "as.function.default", "as.POSIXct",
  "as.POSIXlt", "as.vector", "asCharacterFactor", "atan2", "backsolve", "basename", "bcClose",
  "bcprofcounts", "bcprofstop", "bcVersion", "besselI", "besselJ", "besselK", "besselY", "beta",
  "bincode", "bindingIsActive", "bindingIsLocked", "bitwiseAnd", "bitwiseNot", "bitwiseOr",
  "bitwiseShiftL", "bitwiseShiftR", "bitwiseXor", "body", "bodyCode", "browserCondition",
  "browserSetDebug", "browserText", "builtins", "C_tryCatchHelper", "capabilities",
  "capabilitiesX11", "cat", "cbind", "charmatch", "charToRaw", "chartr", "choose",
  "clearPushBack", "close", "col", "colMeans", "colSums", "comment", "comment<-", "complex",
  "copyDFattr", "crc64", "crossprod", "Cstack_info", "curlVersion", "date", "Date2POSIXlt",
  "dbeta", "dbinom", "dcauchy", "dchisq", "debugOnOff", "deparse", "det_ge_real", "dexp", "df",
  "dgamma", "dgeom", "dhyper", "diag", "dirname", "disassemble", "dlnorm", "dlogis", "dnbeta",
  "dnbinom", "dnbinom_mu", "dnchisq", "dnf", "dnorm", "dnt", "dpois", "dput", "drop",
  "dsignrank", "dt", "dtukey", "dump", "dunif", "duplicated", "dweibull", "dwilcox",
  "eapply", "encodeString", "Encoding", "endsWith", "env.profile", "env2list",
  "environment", "environmentIsLocked", "environmentName", "eSoftVersion", "exists",
  "parse", "str2lang", "str2expression",
  "file.path", "findInterval", "flush", "formals", "format", "format.info", "format.POSIXlt",
  "formatC", "gc", "getAllConnections", "getconst", "geterrmessage", "getLoadedDLLs",
  "getNamespaceRegistry", "getOption", "getRegisteredNamespace", "getRegisteredRoutines",
  "getSymbolInfo", "gettext", "getVarsFromFrame", "getwd", "gregexpr", "grep", "grepl",
  "grepRaw", "growconst", "gsub", "gzcon", "iconv", "icuGetCollate", "identical", "inherits",
  "inspect", "internalsID", "interruptsSuspended", "intToBits", "intToUtf8",
  "is.builtin.internal", "is.loaded", "is.unsorted", "is.vector", "isatty", "isdebugged",
  "isIncomplete", "islistfactor", "isNamespaceEnv", "isOpen", "isRegisteredNamespace",
  "isSeekable", "l10n_info", "La_chol", "La_chol2inv", "La_dgecon", "La_dlange", "La_dtrcon",
  "La_library", "La_qr", "La_qr_cmplx", "La_rg", "La_rg_cmplx", "La_rs", "La_rs_cmplx",
  "La_solve", "La_solve_cmplx", "La_svd", "La_svd_cmplx", "La_version", "La_zgecon",
  "La_ztrcon", "lapply", "lazyLoadDBflush", "lbeta", "lchoose", "lengths", "load",
  "load.from.file", "loadFromConn2", "loadInfoFromConn2", "ls", "machine", "make.names",
  "make.unique", "mapply", "match", "match.call", "matrix", "max.col", "mean", "mem.maxNSize",
  "mem.maxVSize", "memCompress", "memDecompress", "memory.profile", "merge", "mkCode",
  "munmap_file", "named", "nchar", "new.env", "NextMethod", "ngettext", "numToBits",
  "numToInts", "open", "order", "packBits", "parent.env", "parent.frame", "paste", "paste0",
  "path.expand", "pbeta", "pbinom", "pcauchy", "pchisq", "pcre_config", "pexp", "pf",
  "pgamma", "pgeom", "phyper", "plnorm", "plogis", "pmatch", "pmax", "pmin", "pnbeta",
  "pnbinom", "pnbinom_mu", "pnchisq", "pnf", "pnorm", "pnt", "polyroot", "POSIXlt2Date",
  "ppois", "pretty", "print.default", "printDeferredWarnings", "prmatrix", "psigamma",
  "psignrank", "psort", "pt", "ptukey", "punif", "pushBack", "pushBackLength", "putconst",
  "pweibull", "pwilcox", "qbeta", "qbinom", "qcauchy", "qchisq", "qexp", "qf", "qgamma",
  "qgeom", "qhyper", "qlnorm", "qlogis", "qnbeta", "qnbinom", "qnbinom_mu", "qnchisq", "qnf",
  "qnorm", "qnt", "qpois", "qr_coef_cmplx", "qr_coef_real", "qr_qy_cmplx", "qr_qy_real",
  "qsignrank", "qsort", "qt", "qtukey", "qunif", "qweibull", "qwilcox", "R.home", "radixsort",
  "rank", "rapply", "rawConnection", "rawConnectionValue", "rawShift", "rawToBits",
  "rawToChar", "rbeta", "rbind", "rbinom", "rcauchy", "rchisq", "readBin", "readChar",
  "readDCF", "readline", "readLines", "Recall", "recordGraphics", "refcnt", "regexec",
  "regexpr", "rep_len", "rep.int", "returnValue", "rexp", "rf", "rgamma", "rgeom",
  "rhyper", "rlnorm", "rlogis", "rnbinom", "rnbinom_mu", "rnchisq", "RNGkind", "rnorm", "row",
  "rowMeans", "rowsum_df", "rowsum_matrix", "rowSums", "rpois", "rsignrank", "rt", "runif",
  "rweibull", "rwilcox", "sample", "sample2", "saveToConn", "scan", "search", "seek",
  "sequence", "serialize", "serializeb", "serializeInfoFromConn", "serializeToConn",
  "set.seed", "setEncoding", "seterrmessage", "setS4Object", "shortRowNames", "sink.number",
  "sort", "sorted_fpass", "split", "sprintf", "startsWith", "stderr", "stdin", "stdout",
  "stop", "strptime", "strrep", "strsplit", "strtoi", "strtrim", "sub", "substr", "substr<-",
  "summary.connection", "sys.call", "sys.calls", "sys.frame", "sys.frames", "sys.function",
  "Sys.getlocale", "Sys.getpid", "Sys.info", "Sys.localeconv", "sys.nframe", "sys.on.exit",
  "sys.parent", "sys.parents", "Sys.sleep", "Sys.time", "t.default", "tabulate", "tcrossprod",
  "tempdir", "tempfile", "textConnection", "textConnectionValue", "tolower", "topenv",
  "toupper", "traceback", "tryWrap", "typeof", "tzone_name", "unique", "unlist", "unserializeFromConn",
  "utf8ToInt", "validEnc", "validUTF8", "vapply", "vector", "Version", "vhash", "warning",
  "which", "which.max", "which.min", "withVisible", "wrap_meta", "writeBin", "writeChar",
  "writeLines"
)

# Calls that give a connection or value standing for the console, never a
# file: harmless as the file argument of an operation that writes.
capability_safe_calls <- c("stdin", "stdout", "stderr", "textConnection", "rawConnection",
                           "nullfile", "character", "getOption")

# Compiled code.
capability_compiled_calls <- c(".Call", ".External", ".External2", ".C", ".Fortran",
                               ".Call.graphics", ".External.graphics")

# -- parsed tables (once per session) --------------------------------------------

cap_state <- new.env(parent = emptyenv())

# list(cap, arg, kind) items of a spec string.
cap_parse_spec <- function(spec) {
  items <- strsplit(spec, " ", fixed = TRUE)[[1L]]
  out <- list()
  for (it in items[nzchar(items)]) {
    parts <- strsplit(it, ":", fixed = TRUE)[[1L]]
    cap <- parts[[1L]]
    if (length(parts) == 1L) {
      out[[length(out) + 1L]] <- list(cap = cap, arg = NULL, kind = "value")
      next
    }
    for (a in strsplit(parts[[2L]], ",", fixed = TRUE)[[1L]]) {
      kind <- "value"
      if (grepl("@", a, fixed = TRUE)) {
        kind <- sub("^.*@", "", a)
        a <- sub("@.*$", "", a)
      }
      out[[length(out) + 1L]] <- list(cap = cap, arg = a, kind = kind)
    }
  }
  out
}

cap_tables <- function() {
  if (is.null(cap_state$internal)) {
    cap_state$internal <- lapply(capability_internal, cap_parse_spec)
    cap_state$functions <- lapply(capability_functions, cap_parse_spec)
    cap_state$routines <- lapply(capability_routines, cap_parse_spec)
    cap_reset()
  }
  invisible()
}

# Forget every summary (tests; a package reinstalled in the session).
cap_reset <- function() {
  cap_state$nodes <- new.env(parent = emptyenv())
  cap_state$summaries <- new.env(parent = emptyenv())
  cap_state$preds <- new.env(parent = emptyenv())
  cap_state$methods <- new.env(parent = emptyenv())
  cap_state$resolved <- new.env(parent = emptyenv())
  invisible()
}

# A summary is a character vector of reasons named by entry: the name is
# "cap\tvia\tkind", the value the operation that gives the capability (the
# first one found; another reason for the same entry changes nothing).
entry_key <- function(cap, via, kind, why) {
  n <- paste(cap, via, kind, sep = "\t")
  stats::setNames(rep_len(why, length(n)), n)
}

entry_union <- function(x) {
  if (length(x) == 0L) {
    return(cap_no_entries)
  }
  x <- x[!duplicated(names(x))]
  x[order(names(x), method = "radix")]
}

cap_no_entries <- stats::setNames(character(), character())

entry_split <- function(entries) {
  if (length(entries) == 0L) {
    return(list(cap = character(), via = character(), kind = character(), why = character()))
  }
  m <- matrix(unlist(strsplit(names(entries), "\t", fixed = TRUE), use.names = FALSE), nrow = 3L)
  list(cap = m[1L, ], via = m[2L, ], kind = m[3L, ], why = unname(entries))
}

# -- resolving names -------------------------------------------------------------

# R's default packages, where a package that does not import them still finds
# their functions at run time (through the search path).
cap_default_packages <- c("methods", "utils", "grDevices", "graphics", "stats")

# The function a name refers to from `env`, as list(key, fun), or NULL. Only
# namespaces are searched (the function's own, its imports, base, then R's
# default packages), never the global environment, so that the answer is the
# same in every session.
cap_resolve <- function(sym, env) {
  if (!nzchar(sym) || identical(sym, "...") || grepl("^\\.\\.[0-9]+$", sym)) {
    return(NULL)
  }
  # Functions of a namespace resolve the same name the same way: cached.
  if (isNamespace(env)) {
    nsname <- getNamespaceName(env)
    cache <- cap_state$resolved[[nsname]]
    if (is.null(cache)) {
      cache <- new.env(parent = emptyenv())
      cap_state$resolved[[nsname]] <- cache
    }
    hit <- cache[[sym]]
    if (is.null(hit)) {
      hit <- cap_resolve_in(sym, env) %||% FALSE
      cache[[sym]] <- hit
    }
    return(if (isFALSE(hit)) NULL else hit)
  }
  cap_resolve_in(sym, env)
}

cap_resolve_in <- function(sym, env) {
  e <- env
  while (!identical(e, emptyenv()) && !identical(e, globalenv())) {
    if (exists(sym, envir = e, inherits = FALSE)) {
      if (bindingIsActive(sym, e)) {
        return(NULL)
      }
      obj <- get(sym, envir = e, inherits = FALSE)
      if (is.function(obj)) {
        return(cap_function_key(sym, obj, e))
      }
    }
    if (identical(e, .BaseNamespaceEnv)) {
      break
    }
    e <- parent.env(e)
  }
  for (pkg in cap_default_packages) {
    ns <- tryCatch(asNamespace(pkg), error = function(e) NULL)
    if (!is.null(ns) && exists(sym, envir = ns, inherits = FALSE)) {
      obj <- get(sym, envir = ns, inherits = FALSE)
      if (is.function(obj)) {
        return(cap_function_key(sym, obj, ns))
      }
    }
  }
  NULL
}

# pkg::name of a function found under `sym` in `where`.
cap_function_key <- function(sym, fun, where) {
  if (is.primitive(fun)) {
    return(list(key = paste0("base::", sym), fun = fun))
  }
  env <- environment(fun)
  top <- if (is.environment(env)) topenv(env) else .BaseNamespaceEnv
  pkg <- if (isNamespace(top)) getNamespaceName(top) else if (isNamespace(where)) getNamespaceName(where) else "?"
  if (identical(top, .BaseNamespaceEnv) || identical(top, baseenv())) {
    pkg <- "base"
  }
  list(key = paste0(unname(pkg), "::", sym), fun = fun)
}

# pkg::name -> list(key, fun), loading the namespace if it is installed.
cap_resolve_qualified <- function(pkg, sym) {
  ns <- tryCatch(
    suppressPackageStartupMessages(suppressWarnings(loadNamespace(pkg))),
    error = function(e) NULL
  )
  if (is.null(ns)) {
    return(NULL)
  }
  if (!exists(sym, envir = ns, inherits = FALSE)) {
    return(NULL)
  }
  obj <- get(sym, envir = ns, inherits = FALSE)
  if (!is.function(obj)) {
    return(NULL)
  }
  cap_function_key(sym, obj, ns)
}

# Dispatch is followed to the methods for the kinds of values a client can
# send (JSON becomes these) and to the default ones: which other methods a
# generic reaches depends on objects the code makes itself, and following
# every method of every generic would reach all of R from anywhere. (Formula
# methods are not followed: a client's formula is checked when it is
# converted, see formula_from_json().)
cap_dispatch_classes <- c("default", "ANY", "numeric", "double", "integer", "character", "logical",
                          "list", "data.frame", "NULL", "vector", "atomic")

# The S3 methods of generic `g` defined in namespace `ns`, as keys/functions.
cap_s3_methods <- function(g, ns) {
  if (!isNamespace(ns)) {
    return(list())
  }
  nsname <- getNamespaceName(ns)
  idx <- cap_state$methods[[nsname]]
  if (is.null(idx)) {
    idx <- sort(ls(ns, all.names = TRUE), method = "radix")
    cap_state$methods[[nsname]] <- idx
  }
  hits <- paste0(g, ".", cap_dispatch_classes)
  hits <- hits[hits %in% idx]
  out <- list()
  for (h in hits) {
    obj <- get(h, envir = ns, inherits = FALSE)
    if (is.function(obj) && !is.primitive(obj)) {
      out[[length(out) + 1L]] <- cap_function_key(h, obj, ns)
    }
  }
  out
}

# The S4 methods of generic `g` in the method tables of namespace `ns`.
cap_s4_methods <- function(g, ns) {
  if (!isNamespace(ns)) {
    return(list())
  }
  tables <- ls(ns, all.names = TRUE, pattern = paste0("^\\.__T__", gsub("([.])", "\\\\\\1", g), ":"))
  out <- list()
  for (tb in tables) {
    tenv <- get(tb, envir = ns, inherits = FALSE)
    if (!is.environment(tenv)) next
    sigs <- sort(ls(tenv, all.names = TRUE), method = "radix")
    first <- sub("#.*$", "", sigs)
    for (sig in sigs[first %in% cap_dispatch_classes]) {
      m <- get(sig, envir = tenv, inherits = FALSE)
      if (is.function(m) && !is.primitive(m)) {
        out[[length(out) + 1L]] <- list(key = paste0(getNamespaceName(ns), "::", g, "@", sig), fun = m)
      }
    }
  }
  out
}

# -- one function, on its own ------------------------------------------------------

# Walk a function's code once: the calls it makes (with their arguments), the
# names it references, its local variables and where their values come from,
# what its on.exit() undoes, and the operations of the tables it uses.
cap_analyse <- function(key, fun) {
  env <- environment(fun)
  if (is.null(env)) env <- .BaseNamespaceEnv
  params <- names(formals(fun))
  node <- new.env(parent = emptyenv())
  node$key <- key
  node$fun <- fun
  node$env <- env
  node$params <- params
  node$locals <- list()       # name -> list of expressions assigned to it
  node$nested <- character()  # parameters of nested functions
  node$calls <- list()        # list(key, fun, call)
  node$refs <- character()    # keys of functions referenced as values
  node$ref_funs <- list()
  node$ops <- list()          # list(spec items, call, positional) of table operations
  node$scoped <- character()  # functions called inside on.exit()
  node$super <- character()   # targets of <<-, with "TOP:" for top-level uses
  node$compiled <- FALSE
  node$generics <- character()
  node$s4 <- character()
  node$unknown <- character()
  in_namespace <- isNamespace(env) || identical(env, baseenv())
  ns_env <- if (is.environment(env)) topenv(env) else .BaseNamespaceEnv

  add_local <- function(sym, rhs) {
    node$locals[[sym]] <- c(node$locals[[sym]], list(rhs))
  }
  target_symbol <- function(lhs) {
    while (is.call(lhs) && length(lhs) >= 2L) lhs <- lhs[[2L]]
    if (is.symbol(lhs)) as.character(lhs) else if (is.character(lhs) && length(lhs) == 1L) lhs else NULL
  }
  add_call <- function(res, call) {
    node$calls[[length(node$calls) + 1L]] <- list(key = res$key, fun = res$fun, call = call)
  }
  ref_syms <- character()
  prim_refs <- character()
  quoted <- character()
  add_ref <- function(res, sym = "") {
    if (!res$key %in% node$refs) {
      node$refs <- c(node$refs, res$key)
      ref_syms <<- c(ref_syms, sym)
      node$ref_funs[[res$key]] <- res$fun
    }
  }
  # Where the parameters of nested functions get their values: for a
  # function literal given to a call (lapply(x, function(el) ...)), from the
  # call's other arguments; for a local function f <- function(a) ..., from
  # the arguments of the calls of f and of the calls f is given to.
  fun_params <- list()
  calls_by_head <- new.env(parent = emptyenv())
  passed_sym <- new.env(parent = emptyenv())
  note_function_args <- function(e) {
    args <- as.list(e)[-1L]
    if (length(args) == 0L) return()
    is_fun <- vapply(args, function(a) is.call(a) && identical(a[[1L]], as.name("function")), logical(1))
    is_sym <- vapply(args, is.symbol, logical(1))
    if (!any(is_fun) && !any(is_sym)) return()
    others <- args[!is_fun]
    others <- others[!vapply(others, missing_arg, logical(1))]
    for (a in args[is_fun]) {
      for (p in names(a[[2L]])) for (o in others) add_local(p, o)
    }
    synth <- cap_apply_call(e)
    for (i in which(is_sym)) {
      nm <- as.character(args[[i]])
      if (!nzchar(nm)) next
      if (!is.null(synth) && identical(synth$fun, args[[i]])) {
        synth_calls[[nm]] <- c(synth_calls[[nm]], list(synth$call))
      }
      passed_sym[[nm]] <- c(passed_sym[[nm]], others[!vapply(others, identical, logical(1), args[[i]])])
      passed_n[[nm]] <- (passed_n[[nm]] %||% 0L) + 1L
    }
  }
  synth_calls <- new.env(parent = emptyenv())
  passed_n <- new.env(parent = emptyenv())
  seen_n <- new.env(parent = emptyenv())

  walk <- function(e, nested, on_exit) {
    if (is.symbol(e)) {
      nm <- as.character(e)
      if (!nzchar(nm) || nm %in% params || nm %in% node$nested) {
        return()
      }
      res <- cap_resolve(nm, env)
      if (!is.null(res)) {
        if (is.primitive(res$fun)) {
          if (!is.null(cap_state$internal[[nm]])) prim_refs <<- c(prim_refs, nm)
        } else {
          add_ref(res, nm)
          seen_n[[nm]] <- (seen_n[[nm]] %||% 0L) + 1L
        }
      }
      return()
    }
    if (is.pairlist(e)) {
      for (i in seq_along(e)) if (!missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
      return()
    }
    if (!is.call(e)) {
      return()
    }
    head <- e[[1L]]
    if (is.symbol(head)) {
      fn <- as.character(head)
      if (fn == "function") {
        fml <- e[[2L]]
        node$nested <- union(node$nested, names(fml))
        for (i in seq_along(fml)) if (!missing_arg(fml[[i]])) walk(fml[[i]], TRUE, on_exit)
        if (length(e) >= 3L) walk(e[[3L]], TRUE, on_exit)
        return()
      }
      if (fn %in% c("<-", "=", "<<-") && length(e) == 3L) {
        sym <- target_symbol(e[[2L]])
        if (!is.null(sym)) {
          if (fn == "<<-") {
            node$super <- c(node$super, if (nested) sym else paste0("TOP:", sym))
          } else {
            add_local(sym, e[[3L]])
            rhs <- e[[3L]]
            if (is.symbol(e[[2L]]) && is.call(rhs) && identical(rhs[[1L]], as.name("function"))) {
              fun_params[[sym]] <<- c(fun_params[[sym]], list(rhs[[2L]]))
            }
          }
        }
        lhs <- e[[2L]]
        # x[i] <- v, names(x) <- v: calls `[<-`(x, i, value = v) and
        # `names<-`(x, value = v); the index expressions are evaluated.
        inner <- lhs
        while (is.call(inner)) {
          rhead <- inner[[1L]]
          if (is.symbol(rhead)) {
            rname <- paste0(as.character(rhead), "<-")
            res <- cap_resolve(rname, env)
            if (!is.null(res) && !is.primitive(res$fun)) {
              add_call(res, as.call(c(list(as.name(rname)), as.list(inner)[-1L], list(value = e[[3L]]))))
            }
          }
          for (i in seq_along(inner)[-1L][-1L]) if (!missing_arg(inner[[i]])) walk(inner[[i]], nested, on_exit)
          inner <- if (length(inner) >= 2L) inner[[2L]] else NULL
        }
        walk(e[[3L]], nested, on_exit)
        return()
      }
      if (fn == "for" && length(e) == 4L) {
        if (is.symbol(e[[2L]])) add_local(as.character(e[[2L]]), e[[3L]])
        walk(e[[3L]], nested, on_exit)
        walk(e[[4L]], nested, on_exit)
        return()
      }
      if (fn == "on.exit") {
        if (length(e) >= 2L && !missing_arg(e[[2L]])) {
          node$scoped <- union(node$scoped, setdiff(all.names(e[[2L]]), c("{", "(")))
          walk(e[[2L]], nested, TRUE)
        }
        return()
      }
      if (fn %in% c("::", ":::") && length(e) == 3L) {
        res <- cap_resolve_qualified(as.character(e[[2L]]), as.character(e[[3L]]))
        if (!is.null(res)) add_ref(res)
        return()
      }
      if (fn == "missing") {
        return()
      }
      if (fn %in% c("quote", "as.name", "as.symbol") && length(e) == 2L && !missing_arg(e[[2L]])) {
        # m <- match.call(); m[[1L]] <- quote(stats::model.frame); eval(m):
        # a function quoted (or named, as.name("library")) is called with
        # this function's own arguments.
        q <- e[[2L]]
        if (fn != "quote" && is.character(q) && length(q) == 1L) q <- as.name(q)
        res <- if (is.symbol(q)) {
          cap_resolve(as.character(q), env)
        } else if (is.call(q) && length(q) == 3L && as.character(q[[1L]]) %in% c("::", ":::")) {
          cap_resolve_qualified(as.character(q[[2L]]), as.character(q[[3L]]))
        }
        if (!is.null(res) && !is.primitive(res$fun)) {
          add_ref(res)
          quoted <<- c(quoted, res$key)
          return()
        }
      }
      if (fn %in% c("$", "@") && length(e) == 3L) {
        # x$name: `name` is a member, not a variable.
        walk(e[[2L]], nested, on_exit)
        return()
      }
      if (fn == "UseMethod" && length(e) >= 2L && is.character(e[[2L]])) {
        node$generics <- union(node$generics, e[[2L]])
      }
      if (fn == "standardGeneric" && length(e) >= 2L && is.character(e[[2L]])) {
        node$s4 <- union(node$s4, e[[2L]])
      }
      if (fn == ".Internal" && length(e) == 2L && is.call(e[[2L]]) && is.symbol(e[[2L]][[1L]])) {
        inner <- e[[2L]]
        iname <- as.character(inner[[1L]])
        spec <- cap_state$internal[[iname]]
        if (!is.null(spec)) {
          node$ops[[length(node$ops) + 1L]] <- list(spec = spec, call = inner, positional = TRUE,
                                                    why = paste0(iname, "()"))
        } else if (!iname %in% capability_pure) {
          node$unknown <- union(node$unknown, paste0(".Internal(", iname, ")"))
        }
        for (i in seq_along(inner)[-1L]) if (!missing_arg(inner[[i]])) walk(inner[[i]], nested, on_exit)
        return()
      }
      if (fn %in% capability_compiled_calls) {
        node$compiled <- TRUE
        if (length(e) >= 2L) {
          routine <- e[[2L]]
          rname <- if (is.symbol(routine)) as.character(routine) else if (is.character(routine)) routine[[1L]]
          if (!is.null(rname)) {
            rkey <- paste0(getNamespaceName(ns_env), "::", rname)
            spec <- if (isNamespace(ns_env)) cap_state$routines[[rkey]]
            if (!is.null(spec)) {
              call <- as.call(c(list(as.name(rname)), as.list(e)[-c(1L, 2L)]))
              node$ops[[length(node$ops) + 1L]] <- list(spec = spec, call = call, positional = TRUE,
                                                        why = paste0(rname, " (compiled)"))
            }
          }
        }
        for (i in seq_along(e)[-c(1L, 2L)]) if (!missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
        return()
      }
      if (fn %in% c("do.call", "match.fun", "get", "get0", "getFunction") && length(e) >= 2L &&
          is.character(e[[2L]]) && length(e[[2L]]) == 1L) {
        # A function named by a string constant is that function: do.call()
        # calls it with the arguments given; the others return it, to be
        # called with arguments not seen here.
        res <- cap_resolve(e[[2L]], env)
        if (!is.null(res) && !is.primitive(res$fun)) {
          if (fn == "do.call") {
            e[[2L]] <- as.name(e[[2L]])
          } else {
            add_ref(res)
          }
        }
      }
      calls_by_head[[fn]] <- c(calls_by_head[[fn]], list(e))
      note_function_args(e)
      res <- cap_resolve(fn, env)
      if (!is.null(res)) {
        if (is.primitive(res$fun)) {
          spec <- cap_state$internal[[fn]]
          if (!is.null(spec)) {
            node$ops[[length(node$ops) + 1L]] <- list(spec = spec, call = e, positional = TRUE,
                                                      why = paste0(fn, "()"))
          }
        } else {
          add_call(res, e)
        }
      }
      for (i in seq_along(e)[-1L]) if (!missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
      return()
    }
    # A call whose function is computed: `(if (unix) system else shell)(cmd)`,
    # `pkg::f(x)`, `obj$method()`.
    if (is.call(head) && is.symbol(head[[1L]]) && as.character(head[[1L]]) %in% c("::", ":::") &&
        length(head) == 3L) {
      res <- cap_resolve_qualified(as.character(head[[2L]]), as.character(head[[3L]]))
      if (!is.null(res)) {
        if (is.primitive(res$fun)) cap_primitive_ref(node, as.character(head[[3L]])) else add_call(res, e)
      }
    } else {
      walk(head, nested, on_exit)
    }
    note_function_args(e)
    for (i in seq_along(e)[-1L]) if (!missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
  }

  fml <- formals(fun)
  for (i in seq_along(fml)) if (!missing_arg(fml[[i]])) walk(fml[[i]], FALSE, FALSE)
  b <- body(fun)
  if (!is.null(b)) walk(b, FALSE, FALSE)
  # A name read as a value that turns out to be a local variable (assigned
  # later in the code) is no function reference.
  drop <- nzchar(ref_syms) & (ref_syms %in% names(node$locals) | ref_syms %in% node$nested)
  if (any(drop)) {
    node$ref_funs[node$refs[drop]] <- NULL
    node$refs <- node$refs[!drop]
    ref_syms <- ref_syms[!drop]
  }
  # A function given as an argument (lapply(x, f)) is called with values
  # from that call's other arguments; one used otherwise, with values this
  # analysis does not see.
  # One given as the function of lapply() and its kin is called as
  # FUN(<element of X>, <the other arguments>): a call like any other.
  node$ref_args <- list()
  synthetic <- logical(length(node$refs))
  for (i in seq_along(node$refs)) {
    sym <- ref_syms[[i]]
    if (!nzchar(sym)) next
    sc <- synth_calls[[sym]]
    if (length(sc) > 0L && identical(length(sc), seen_n[[sym]])) {
      res <- list(key = node$refs[[i]], fun = node$ref_funs[[node$refs[[i]]]])
      for (cl in sc) add_call(res, cl)
      synthetic[[i]] <- TRUE
    } else if (identical(passed_n[[sym]], seen_n[[sym]])) {
      node$ref_args[[node$refs[[i]]]] <- passed_sym[[sym]] %||% list()
    }
  }
  if (any(synthetic)) {
    node$ref_funs[node$refs[synthetic]] <- NULL
    node$refs <- node$refs[!synthetic]
  }
  for (k in intersect(quoted, node$refs)) {
    if (is.null(node$ref_args[[k]])) node$ref_args[[k]] <- lapply(params, as.name)
  }
  prim_refs <- unique(prim_refs[!prim_refs %in% c(names(node$locals), node$nested)])
  for (nm in prim_refs) cap_primitive_ref(node, nm)
  for (f in names(fun_params)) {
    for (fml in fun_params[[f]]) {
      # Each call of the local function binds its arguments by R's rules;
      # one given to lapply() and its kin is called as FUN(X, ...); given
      # to anything else, it gets that call's other arguments.
      def <- tryCatch(as.function(c(as.list(fml), list(NULL)), envir = baseenv()),
                      error = function(err) NULL)
      calls <- c(calls_by_head[[f]], synth_calls[[f]])
      loose <- passed_sym[[f]]
      if (length(synth_calls[[f]]) < (passed_n[[f]] %||% 0L)) {
        loose <- loose
      } else {
        loose <- list()
      }
      for (cl in calls) {
        mc <- if (!is.null(def)) tryCatch(match.call(def, cl, expand.dots = FALSE), error = function(err) NULL)
        if (is.null(mc)) {
          args <- as.list(cl)[-1L]
          for (p in names(fml)) for (o in args[!vapply(args, missing_arg, logical(1))]) add_local(p, o)
          next
        }
        margs <- as.list(mc)[-1L]
        for (p in names(margs)) {
          vals <- if (p == "...") margs[[p]] else list(margs[[p]])
          for (o in vals) if (!missing_arg(o)) add_local(p, o)
        }
      }
      for (p in names(fml)) for (o in loose) add_local(p, o)
    }
  }
  # op <- options(...); ...; options(op): a change undone in the same
  # function counts like one undone by on.exit().
  for (f in c("options", "setwd", "Sys.setlocale", "Sys.setenv", "par", "sink")) {
    for (cl in calls_by_head[[f]]) {
      if (length(cl) == 2L && is.symbol(cl[[2L]])) {
        rhs <- node$locals[[as.character(cl[[2L]])]]
        if (any(vapply(rhs, function(r) f %in% all.names(r), logical(1)))) {
          node$scoped <- union(node$scoped, f)
        }
      }
    }
  }
  nested_all <- node$nested
  # Parameters of nested functions whose values were found are locals; the
  # others come from somewhere this analysis does not see.
  node$nested <- setdiff(node$nested, names(node$locals))
  # <<- outside the function's own frame: at the top of a function defined
  # in a namespace it reaches the namespace (locked) and then the global
  # environment; in a nested function, a name that is no local of this one.
  top <- startsWith(node$super, "TOP:")
  tops <- sub("^TOP:", "", node$super[top])
  deep <- node$super[!top]
  node$super_global <- (in_namespace && length(tops) > 0L) ||
    any(!deep %in% c(params, names(node$locals), nested_all))
  node
}

missing_arg <- function(x) is.symbol(x) && identical(as.character(x), "")

# Functions that call a function they are given with the values of their
# other arguments: which argument is the function, which give it values
# (first, in order), and which are options of their own.
capability_apply_family <- list(
  lapply = list(fun = "FUN", data = "X", own = character()),
  sapply = list(fun = "FUN", data = "X", own = c("simplify", "USE.NAMES")),
  vapply = list(fun = "FUN", data = "X", own = c("FUN.VALUE", "USE.NAMES")),
  Map = list(fun = "f", data = character(), own = character()),
  mapply = list(fun = "FUN", data = character(), own = c("MoreArgs", "SIMPLIFY", "USE.NAMES")),
  Filter = list(fun = "f", data = "x", own = character()),
  Reduce = list(fun = "f", data = c("x", "x"), own = c("init", "right", "accumulate", "simplify")),
  Find = list(fun = "f", data = "x", own = c("right", "nomatch")),
  Position = list(fun = "f", data = "x", own = c("right", "nomatch")),
  outer = list(fun = "FUN", data = c("X", "Y"), own = character()),
  apply = list(fun = "FUN", data = "X", own = c("MARGIN", "simplify")),
  tapply = list(fun = "FUN", data = "X", own = c("INDEX", "default", "simplify"))
)

# For a call of the apply family: list(fun = the expression given as the
# function, call = the call it makes), or NULL.
cap_apply_call <- function(e) {
  head <- e[[1L]]
  if (!is.symbol(head)) {
    return(NULL)
  }
  if (identical(head, as.name("do.call")) && length(e) >= 3L && is.symbol(e[[2L]]) &&
      is.null(names(e)[2:3][nzchar(names(e)[2:3] %||% c("", ""))]) &&
      is.call(e[[3L]]) && identical(e[[3L]][[1L]], as.name("list"))) {
    # do.call(f, list(a, b = x)) is f(a, b = x).
    return(list(fun = e[[2L]], call = as.call(c(list(as.name("f")), as.list(e[[3L]])[-1L]))))
  }
  spec <- capability_apply_family[[as.character(head)]]
  if (is.null(spec)) {
    return(NULL)
  }
  def <- get(as.character(head), envir = baseenv())
  mc <- tryCatch(match.call(def, e, expand.dots = FALSE), error = function(err) NULL)
  if (is.null(mc)) {
    return(NULL)
  }
  args <- as.list(mc)[-1L]
  fun <- args[[spec$fun]]
  if (is.null(fun)) {
    return(NULL)
  }
  values <- lapply(spec$data, function(d) args[[d]])
  values <- values[!vapply(values, is.null, logical(1))]
  dots <- args[["..."]] %||% list()
  list(fun = fun, call = as.call(c(list(as.name("f")), values, dots)))
}

# A primitive referenced as a value (`lapply(x, .Primitive)` is not a thing,
# but `Reduce(\`+\`, x)` is): primitives with capabilities count as called with
# arguments nobody can see.
cap_primitive_ref <- function(node, nm) {
  spec <- cap_state$internal[[nm]]
  if (!is.null(spec)) {
    node$ops[[length(node$ops) + 1L]] <- list(spec = spec, call = NULL, positional = TRUE,
                                              why = paste0(nm, "()"))
  }
}

# -- where values come from ---------------------------------------------------------

# The origins of the value of expression `e` in function node `node`:
# list(params = names of the node's parameters it comes from, exprs = constant
# or computed expressions it comes from (no parameter in them), unknown = TRUE
# when part of it comes from somewhere this analysis does not follow).
# `resolver(p)`, when given, replaces a parameter by its own origins.
cap_sources <- function(e, node, resolver = NULL, memo = NULL) {
  if (is.null(memo)) {
    if (is.null(resolver)) {
      memo <- node$src_memo
      if (is.null(memo)) {
        memo <- new.env(parent = emptyenv())
        node$src_memo <- memo
      }
    } else {
      memo <- new.env(parent = emptyenv())
    }
  }
  sh <- cap_shallow(e, node, resolver)
  if (length(sh$deps) == 0L) {
    return(sh$src)
  }
  origins <- cap_local_origins(node, resolver, memo)
  cap_merge_all(c(list(sh$src), cap_dep_origins(sh$deps, origins)))
}

# The origins of local variables named in `deps` ("\u0001name": the value of
# the variable made into code).
cap_dep_origins <- function(deps, origins) {
  code <- startsWith(deps, "\u0001")
  names <- sub("^\u0001", "", deps)
  lapply(seq_along(deps), function(i) {
    o <- origins[[names[[i]]]]
    if (is.null(o)) cap_src_empty else if (code[[i]]) cap_as_code(o) else o
  })
}

# The origins of an expression without following local variables, which are
# returned as `deps`.
cap_shallow <- function(e, node, resolver) {
  none <- character()
  if (missing_arg(e)) {
    return(list(src = cap_src_empty, deps = none))
  }
  if (is.symbol(e)) {
    nm <- as.character(e)
    is_param <- nm %in% node$params
    is_local <- !is.null(node$locals[[nm]])
    if (is_local) {
      return(list(src = cap_src_empty, deps = nm))
    }
    if (is_param) {
      return(list(src = if (is.null(resolver)) cap_src_param(nm) else resolver(nm), deps = none))
    }
    if (nm %in% node$nested) {
      return(list(src = cap_src_unknown, deps = none))
    }
    return(list(src = cap_src_expr(e, node$env), deps = none))
  }
  if (!is.call(e)) {
    return(list(src = cap_src_expr(e, node$env), deps = none))
  }
  head <- e[[1L]]
  fn <- if (is.symbol(head)) as.character(head) else ""
  several <- function(exprs) {
    parts <- lapply(exprs, cap_shallow, node = node, resolver = resolver)
    list(src = cap_merge_all(lapply(parts, `[[`, "src")),
         deps = unique(unlist(lapply(parts, `[[`, "deps"), use.names = FALSE)) %||% none)
  }
  if (fn == "if") {
    if (length(e) >= 4L) {
      return(several(list(e[[3L]], e[[4L]])))
    }
    out <- cap_shallow(e[[3L]], node, resolver)
    out$src <- cap_merge_all(list(out$src, cap_src_expr(NULL, node$env)))
    return(out)
  }
  if (fn %in% c("{", "(")) {
    return(if (length(e) >= 2L) cap_shallow(e[[length(e)]], node, resolver) else
      list(src = cap_src_empty, deps = none))
  }
  if (fn %in% c("<-", "=") && length(e) == 3L) {
    return(cap_shallow(e[[3L]], node, resolver))
  }
  if (fn == "switch" && length(e) >= 3L) {
    alts <- as.list(e)[-c(1L, 2L)]
    return(several(alts[!vapply(alts, missing_arg, logical(1))]))
  }
  if (fn == "function") {
    return(list(src = cap_src_expr(e, node$env), deps = none))
  }
  if (fn %in% capability_untainting) {
    return(list(src = cap_src_expr(e, node$env), deps = none))
  }
  if (fn == "as.call" && length(e) == 2L && is.call(e[[2L]]) && length(e[[2L]]) >= 2L &&
      as.character(e[[2L]][[1L]])[[1L]] %in% c("c", "list")) {
    # as.call(c(head, args)): like call(), only the first element is code.
    e <- as.call(c(list(as.name("call")), as.list(e[[2L]])[-1L]))
    fn <- "call"
  }
  if (fn == "call" && length(e) >= 2L) {
    # call(name, args): the name is code, the arguments values.
    head <- cap_shallow(e[[2L]], node, resolver)
    head$src <- cap_as_code(head$src)
    head$deps <- if (length(head$deps)) paste0("\u0001", head$deps) else head$deps
    rest <- as.list(e)[-c(1L, 2L)]
    rest <- several(rest[!vapply(rest, missing_arg, logical(1))])
    return(list(src = cap_merge_all(list(head$src, rest$src)), deps = unique(c(head$deps, rest$deps))))
  }
  if (fn %in% capability_code_makers) {
    args <- as.list(e)[-1L]
    out <- several(args[!vapply(args, missing_arg, logical(1))])
    if (length(out$deps) > 0L) {
      # Locals followed later are code too: marked by a prefix.
      out$deps <- paste0("\u0001", out$deps)
    }
    out$src <- cap_as_code(out$src)
    return(out)
  }
  # A computation: its value comes from the parameters and locals in it; with
  # none, it is judged as an expression of its own.
  nms <- cap_tainting_names(e)
  if (any(nms %in% capability_code_makers)) {
    args <- as.list(e)[-1L]
    parts <- several(c(list(e[[1L]]), args[!vapply(args, missing_arg, logical(1))]))
    return(parts)
  }
  locals <- unique(nms[nms %in% names(node$locals)])
  params <- unique(nms[nms %in% node$params & !nms %in% locals])
  nested <- any(nms %in% node$nested)
  if (length(locals) == 0L && length(params) == 0L) {
    return(list(src = if (nested) cap_src_unknown else cap_src_expr(e, node$env), deps = none))
  }
  parts <- lapply(params, function(p) if (is.null(resolver)) cap_src_param(p) else resolver(p))
  src <- cap_merge_all(parts)
  if (nested) src$unknown <- TRUE
  list(src = src, deps = locals)
}

# Calls whose value is code made from their arguments: text parsed, names
# made symbols, calls and formulas built; and environments found from a
# position or name (as.environment(1) is the global one). Evaluating such a
# value evaluates what the caller gave; assigning into it changes the
# session.
capability_code_makers <- c(
  "parse", "str2lang", "str2expression", "as.formula", "formula", "reformulate", "as.call", "call",
  "as.environment", "pos.to.env"
)

# The origins of every local variable of a node (a fixed point over the
# variables' assignments), cached in `memo`.
cap_local_origins <- function(node, resolver, memo) {
  hit <- memo[[".origins"]]
  if (!is.null(hit)) {
    return(hit)
  }
  vars <- names(node$locals)
  direct <- list()
  deps <- list()
  for (v in vars) {
    parts <- list()
    d <- character()
    if (v %in% node$params) {
      parts[[1L]] <- if (is.null(resolver)) cap_src_param(v) else resolver(v)
    }
    for (r in node$locals[[v]]) {
      sh <- cap_shallow(r, node, resolver)
      parts[[length(parts) + 1L]] <- sh$src
      d <- c(d, sh$deps)
    }
    direct[[v]] <- cap_merge_all(parts)
    deps[[v]] <- setdiff(unique(d), v)
  }
  origins <- direct
  repeat {
    changed <- FALSE
    for (v in vars) {
      if (length(deps[[v]]) == 0L) next
      new <- cap_merge_all(c(list(direct[[v]]), cap_dep_origins(deps[[v]], origins)))
      if (!identical(new, origins[[v]])) {
        origins[[v]] <- new
        changed <- TRUE
      }
    }
    if (!changed) break
  }
  memo[[".origins"]] <- origins
  origins
}

# Calls whose value says something about their arguments (their class, size,
# whether they hold NA, ...) but carries none of their content: a value
# computed by them is no longer the caller's.
capability_untainting <- c(
  "class", "oldClass", "typeof", "mode", "storage.mode", "length", "lengths", "nchar", "inherits",
  "isS4", "dim", "nrow", "ncol", "NROW", "NCOL", "seq_along", "seq_len", "any", "all", "anyNA",
  "is.na", "identical", "missing", "nargs", "is.null", "is.function", "is.character",
  "is.numeric", "is.logical", "is.list", "is.data.frame", "is.factor", "is.matrix", "is.array",
  "is.atomic", "is.vector", "is.object", "is.environment", "is.language", "is.symbol", "is.name",
  "is.call", "is.integer", "is.double", "is.complex", "is.raw", "is.finite", "is.infinite",
  "is.nan", "isTRUE", "isFALSE", "!", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "&", "|",
  "%in%", "which", "startsWith", "endsWith", "grepl", "is.primitive", "nzchar", "exists",
  ".class1", "is.element", "xor",
  # The expressions a caller wrote, or text that rebuilds a value: a tool's
  # arguments are values, so code made from them holds values, not code.
  "substitute", "match.call", "sys.call", "deparse", "deparse1", "dQuote", "sQuote", "shQuote"
)

# The names in an expression, leaving out what is inside untainting calls.
cap_tainting_names <- function(e) {
  nms <- all.names(e)
  if (!any(nms %in% capability_untainting)) {
    return(nms)
  }
  out <- character()
  walk <- function(x) {
    if (is.symbol(x)) {
      out <<- c(out, as.character(x))
    } else if (is.call(x)) {
      h <- x[[1L]]
      if (is.symbol(h) && as.character(h) %in% capability_untainting) {
        return()
      }
      for (i in seq_along(x)) walk(x[[i]])
    }
  }
  walk(e)
  out
}

# Origins are kept small: the parameters a value comes from, whether part of
# it comes from somewhere not followed, and three verdicts on the constant or
# computed expressions it comes from (judged when they are met): `value`, one
# of them is harmful as the argument of an operation that counts whenever it
# happens (cap_unsafe_value()); `names`, one is NULL (all environment
# variables); `env`, one stands for a global environment.
cap_src_empty <- list(params = character(), code = character(), value = FALSE, names = FALSE,
                      env = FALSE, unknown = FALSE)
cap_src_unknown <- list(params = character(), code = character(), value = FALSE, names = FALSE,
                        env = FALSE, unknown = TRUE)
cap_src_param <- function(p) {
  list(params = p, code = character(), value = FALSE, names = FALSE, env = FALSE, unknown = FALSE)
}
cap_src_expr <- function(e, env) {
  list(params = character(), code = character(), value = cap_unsafe_value(e), names = is.null(e),
       env = cap_global_env_expr(e, env), unknown = FALSE)
}

cap_merge_all <- function(parts) {
  if (length(parts) == 1L) {
    return(parts[[1L]])
  }
  if (length(parts) == 0L) {
    return(cap_src_empty)
  }
  params <- sort(unique(unlist(lapply(parts, `[[`, "params"), use.names = FALSE)), method = "radix")
  code <- sort(unique(unlist(lapply(parts, `[[`, "code"), use.names = FALSE)), method = "radix")
  list(params = params %||% character(),
       code = code %||% character(),
       value = any(vapply(parts, `[[`, logical(1), "value")),
       names = any(vapply(parts, `[[`, logical(1), "names")),
       env = any(vapply(parts, `[[`, logical(1), "env")),
       unknown = any(vapply(parts, `[[`, logical(1), "unknown")))
}

# Values that became code: what flowed into code makers is the caller's text
# turned into code.
cap_as_code <- function(src) {
  src$code <- sort(unique(c(src$code, src$params)), method = "radix")
  src$params <- character()
  src
}

cap_merge <- function(a, b) cap_merge_all(list(a, b))

# Is this constant or computed value harmful as the argument of an
# operation that counts whenever it happens (writing a file, running a
# command)? Only the console and empty values are not.
cap_unsafe_value <- function(e) {
  if (is.null(e)) {
    return(FALSE)
  }
  if (is.call(e) && length(e) == 2L && (identical(e[[1L]], as.name("-")) || identical(e[[1L]], as.name("+")))) {
    e <- e[[2L]]
  }
  if (is.atomic(e)) {
    # Numbers are connection numbers or flags, never paths or commands.
    return(!(length(e) == 0L || all(is.na(e)) || is.logical(e) || is.numeric(e) ||
               (is.character(e) && isTRUE(all(e == "")))))
  }
  if (is.call(e) && is.symbol(e[[1L]]) && as.character(e[[1L]]) %in% capability_safe_calls) {
    return(FALSE)
  }
  TRUE
}

# An environment expression that stands for the global environment, a
# namespace or the search path.
cap_global_env_expr <- function(e, env) {
  if (is.null(e)) {
    return(FALSE)
  }
  if (is.numeric(e)) {
    return(isTRUE(any(e >= 1)))
  }
  if (is.character(e)) {
    return(TRUE)
  }
  if (is.symbol(e)) {
    nm <- as.character(e)
    # A package's own environments (caches, registries) are its business.
    return(nm %in% c(".GlobalEnv", ".BaseNamespaceEnv", ".userHooksEnv"))
  }
  if (is.call(e) && is.symbol(e[[1L]])) {
    fn <- as.character(e[[1L]])
    if (fn %in% c("globalenv", "topenv", "parent.env", "as.environment", "pos.to.env", "asNamespace",
                  "getNamespace", ".getNamespace", "baseenv", "attach", "asNamespace",
                  "getNamespaceImports", "loadNamespace")) {
      return(TRUE)
    }
  }
  FALSE
}

# -- the call graph -------------------------------------------------------------

cap_node <- function(key, fun) {
  node <- cap_state$nodes[[key]]
  if (is.null(node)) {
    node <- cap_analyse(key, fun)
    cap_state$nodes[[key]] <- node
  }
  node
}

# The edges of a node: calls (with their call expression) and references.
cap_edges <- function(node) {
  if (!is.null(node$edges)) {
    return(node$edges)
  }
  edges <- list()
  for (cl in node$calls) {
    edges[[length(edges) + 1L]] <- list(key = cl$key, fun = cl$fun, call = cl$call)
  }
  for (k in node$refs) {
    edges[[length(edges) + 1L]] <- list(key = k, fun = node$ref_funs[[k]], call = NULL, ref = TRUE)
  }
  # An S3 generic reaches the methods of its namespace and of the namespace
  # of each caller (added at the call site, below); an S4 generic those in
  # its package's method tables.
  ns_env <- topenv(node$env)
  for (g in node$generics) {
    for (m in cap_s3_methods(g, ns_env)) {
      edges[[length(edges) + 1L]] <- list(key = m$key, fun = m$fun, call = cap_method_call(node, m$fun),
                                          method = TRUE)
    }
  }
  s4_ns <- attr(node$fun, "package")
  s4_ns <- if (is.character(s4_ns) && length(s4_ns) == 1L) {
    tryCatch(asNamespace(s4_ns), error = function(e) ns_env)
  } else {
    ns_env
  }
  for (g in node$s4) {
    for (m in cap_s4_methods(g, s4_ns)) {
      edges[[length(edges) + 1L]] <- list(key = m$key, fun = m$fun, call = cap_method_call(node, m$fun),
                                          method = TRUE)
    }
  }
  # Generics of other packages called from here also dispatch to this
  # namespace's own methods.
  if (isNamespace(ns_env)) {
    for (cl in node$calls) {
      target <- cl$fun
      if (!is.function(target) || is.primitive(target)) next
      tenv <- topenv(environment(target))
      if (identical(tenv, ns_env)) next
      g <- sub("^.*::", "", cl$key)
      if (!g %in% cap_generic_names(target)) next
      for (m in cap_s3_methods(g, ns_env)) {
        edges[[length(edges) + 1L]] <- list(key = m$key, fun = m$fun, call = cl$call, method = TRUE)
      }
    }
  }
  node$edges <- edges
  edges
}

cap_generic_names <- function(fun) {
  b <- body(fun)
  if (is.null(b) || !"UseMethod" %in% all.names(b)) {
    return(character())
  }
  g <- character()
  walk <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1L]], as.name("UseMethod")) && length(e) >= 2L && is.character(e[[2L]])) {
        g <<- c(g, e[[2L]])
      }
      for (i in seq_along(e)) walk(e[[i]])
    }
  }
  walk(b)
  g
}

# The call a generic makes to a method: the generic's arguments by name
# (those the method can take), `...` passed on.
cap_method_call <- function(node, mfun) {
  mf <- names(formals(mfun))
  args <- list()
  for (p in node$params) {
    if (p == "...") {
      args <- c(args, list(as.name("...")))
    } else if (p %in% mf || "..." %in% mf) {
      args[[p]] <- as.name(p)
    }
  }
  as.call(c(list(as.name("method")), args))
}

# Summaries for `roots` (list of list(key, fun)) and everything they reach,
# computed to a fixed point and stored in cap_state$summaries.
cap_solve <- function(roots) {
  cap_tables()
  # Depth-first, so that callees come before their callers (`order`) and
  # most summaries are final the first time they are computed.
  order <- character()
  stack <- list()
  push <- function(it) {
    node <- cap_node(it$key, it$fun)
    node$pending <- TRUE
    stack[[length(stack) + 1L]] <<- list(node = node, edges = cap_edges(node), i = 0L)
  }
  for (r in roots) {
    if (!is.null(cap_state$summaries[[r$key]]) || isTRUE(cap_state$nodes[[r$key]]$pending)) next
    push(r)
    while (length(stack) > 0L) {
      top <- length(stack)
      fr <- stack[[top]]
      fr$i <- fr$i + 1L
      stack[[top]]$i <- fr$i
      if (fr$i > length(fr$edges)) {
        order <- c(order, fr$node$key)
        stack[[top]] <- NULL
        next
      }
      ed <- fr$edges[[fr$i]]
      cap_state$preds[[ed$key]] <- c(cap_state$preds[[ed$key]], fr$node$key)
      if (is.null(cap_state$summaries[[ed$key]]) && is.null(cap_state$functions[[ed$key]]) &&
          !isTRUE(cap_state$nodes[[ed$key]]$pending)) {
        push(ed)
      }
    }
  }
  if (length(order) == 0L) {
    return(invisible())
  }
  current <- new.env(parent = emptyenv())
  for (k in order) current[[k]] <- cap_no_entries
  queued <- new.env(parent = emptyenv())
  for (k in order) queued[[k]] <- TRUE
  queue <- order
  summary_of <- function(k) {
    s <- current[[k]]
    if (!is.null(s)) return(s)
    s <- cap_state$summaries[[k]]
    if (!is.null(s)) return(s)
    f <- cap_state$functions[[k]]
    if (!is.null(f)) return(cap_table_summary(k, f))
    cap_no_entries
  }
  while (length(queue) > 0L) {
    k <- queue[[1L]]
    queue <- queue[-1L]
    queued[[k]] <- NULL
    new <- cap_node_summary(cap_state$nodes[[k]], summary_of)
    if (!identical(names(new), names(current[[k]]))) {
      current[[k]] <- new
      for (p in unique(cap_state$preds[[k]])) {
        if (!is.null(current[[p]]) && is.null(queued[[p]])) {
          queue <- c(queue, p)
          queued[[p]] <- TRUE
        }
      }
    }
  }
  for (k in order) {
    cap_state$summaries[[k]] <- current[[k]]
    node <- cap_state$nodes[[k]]
    node$pending <- NULL
    node$tcache <- NULL
  }
  invisible()
}

# Entries of a function of capability_functions: its own spec, through its
# named arguments.
cap_table_summary <- function(key, spec) {
  why <- paste0(sub("^.*::", "", key), "()")
  entry_union(unlist(lapply(spec, function(it) entry_key(it$cap, it$arg %||% "", it$kind, why))))
}

# One node's entries from its own operations and those of its callees.
cap_node_summary <- function(node, summary_of) {
  own <- node$own
  if (is.null(own)) {
    own <- list()
    if (length(node$unknown) > 0L) {
      own[[length(own) + 1L]] <- entry_key("unknown_code", "", "value", node$unknown[[1L]])
    }
    if (isTRUE(node$compiled)) {
      own[[length(own) + 1L]] <- entry_key("compiled", "", "value", "compiled code")
    }
    if (isTRUE(node$super_global)) {
      own[[length(own) + 1L]] <- entry_key("change_session", "", "value", "<<-")
    }
    for (op in node$ops) {
      own[[length(own) + 1L]] <- cap_op_entries(node, op)
    }
    own <- entry_union(unlist(own))
    node$own <- own
  }
  edges <- cap_edges(node)
  if (is.null(node$tcache)) node$tcache <- vector("list", length(edges))
  out <- list(own)
  for (i in seq_along(edges)) {
    target <- summary_of(edges[[i]]$key)
    if (length(target) == 0L) next
    hit <- node$tcache[[i]]
    if (!is.null(hit) && identical(names(hit$target), names(target))) {
      out[[length(out) + 1L]] <- hit$out
      next
    }
    res <- cap_translate(node, edges[[i]], target, i, hit)
    node$tcache[[i]] <- list(target = target, out = res$out, per = res$per)
    out[[length(out) + 1L]] <- res$out
  }
  entry_union(unlist(out))
}

# Entries of a table operation called in `node`.
cap_op_entries <- function(node, op) {
  out <- list()
  scoped <- sub("\\(\\)$", "", op$why) %in% node$scoped
  for (it in op$spec) {
    if (it$cap == "change_session" && scoped) next
    if (is.null(it$arg) || is.null(op$call)) {
      out[[length(out) + 1L]] <- entry_key(it$cap, "", it$kind, op$why)
      next
    }
    pos <- suppressWarnings(as.integer(it$arg))
    if (is.na(pos)) next
    args <- as.list(op$call)[-1L]
    # `...` among the arguments: the position may be anything behind it.
    dots <- vapply(args, function(a) identical(a, as.name("...")), logical(1))
    if (any(dots[seq_len(min(pos, length(args)))]) || (pos > length(args) && any(dots))) {
      src <- cap_src_param("...")
    } else if (pos > length(args)) {
      next
    } else {
      src <- cap_sources(args[[pos]], node)
    }
    out[[length(out) + 1L]] <- cap_judge(src, it$cap, it$kind, op$why)
  }
  unlist(out) %||% cap_no_entries
}

# Connections opened on a file (file(), gzfile(), ...): the `open` mode at the
# call says whether they read or write it (kinds "openr" and "openw").
cap_open_call_mode <- function(fun, call) {
  mc <- tryCatch(match.call(fun, call), error = function(e) NULL)
  if (is.null(mc) || any(vapply(as.list(call)[-1L], identical, logical(1), as.name("...")))) {
    return("both")
  }
  open <- as.list(mc)[["open"]]
  if (is.null(open)) "both" else cap_open_mode(open)
}

# "read", "write" or "both" from an `open` argument: the string constants in
# it (as in ifelse(append, "a", "w")); anything else may be either.
cap_open_mode <- function(e) {
  lits <- character()
  ok <- TRUE
  walk <- function(x) {
    if (is.character(x)) {
      lits <<- c(lits, x)
    } else if (is.call(x)) {
      h <- x[[1L]]
      if (is.symbol(h) && as.character(h) %in% c("ifelse", "if", "c", "(", "{")) {
        for (i in seq_along(x)[-1L]) walk(x[[i]])
      } else {
        ok <<- FALSE
      }
    } else if (!is.logical(x)) {
      ok <<- FALSE
    }
  }
  walk(e)
  if (!ok || length(lits) == 0L || any(!nzchar(lits))) {
    return("both")
  }
  reads <- grepl("^r[tb]?$", lits)
  writes <- grepl("^[wa][tb]?$", lits)
  if (all(reads)) "read" else if (all(writes)) "write" else "both"
}

# Entries from the origins of an argument value.
cap_judge <- function(src, cap, kind, why) {
  if (kind == "code") {
    # Evaluated: code made from the caller's text counts as the caller's
    # values reaching the operation; values given as they are count only if
    # the caller's own caller made them code. A value from somewhere not
    # followed is data: code is only ever made by the code makers, which
    # are seen where they are called.
    out <- c(
      if (length(src$code) > 0L) entry_key(cap, src$code, "value", why),
      if (length(src$params) > 0L) entry_key(cap, src$params, "code", why)
    )
    return(out %||% cap_no_entries)
  }
  if (kind == "env") {
    # An environment: the caller's values are never one, unless made one
    # by position or name (as.environment()); values passed on as they are
    # count if the caller's own caller made them.
    out <- c(
      if (length(src$code) > 0L) entry_key(cap, src$code, "value", why),
      if (length(src$params) > 0L) entry_key(cap, src$params, "env", why),
      if (isTRUE(src$env)) entry_key(cap, "", kind, why)
    )
    return(out %||% cap_no_entries)
  }
  params <- unique(c(src$params, src$code))
  out <- if (length(params) > 0L) entry_key(cap, params, kind, why) else cap_no_entries
  harmful <- switch(kind,
    names = src$names,
    env = src$env,
    fun = ,
    options = FALSE,
    !(kind == "influence" || (cap %in% capability_influence && kind != "any")) && src$value
  )
  if (isTRUE(harmful) || (isTRUE(src$unknown) && !kind %in% c("fun", "options"))) {
    out <- c(out, entry_key(cap, "", kind, why))
  }
  out
}

# A callee's entries, as seen from the caller `node` through the call `ed`
# (edge number `i`): list(out, per), `per` caching the translation of each
# conditional entry (`hit` is the previous one).
cap_translate <- function(node, ed, target, i, hit) {
  ent <- entry_split(target)
  uncond <- !nzchar(ent$via)
  scoped_callee <- sub("^.*::", "", ed$key) %in% node$scoped
  drop <- ent$cap == "change_session" & scoped_callee
  out <- list(target[uncond & !drop])
  cond <- which(!uncond & !drop)
  per <- if (!is.null(hit$per)) hit$per else list()
  if (length(cond) == 0L) {
    return(list(out = unlist(out), per = per))
  }
  ref <- isTRUE(ed$ref) || is.null(ed$call)
  ref_src <- NULL
  if (ref && isTRUE(ed$ref) && !is.null(node$ref_args[[ed$key]])) {
    ref_src <- cap_merge_all(lapply(node$ref_args[[ed$key]], cap_sources, node = node))
  }
  binding <- NULL
  for (j in cond) {
    nm <- names(target)[[j]]
    done <- per[[nm]]
    if (!is.null(done)) {
      out[[length(out) + 1L]] <- done
      next
    }
    kind <- ent$kind[[j]]
    res <- if (!is.null(ref_src)) {
      cap_judge(ref_src, ent$cap[[j]], kind, ent$why[[j]])
    } else if (ref) {
      # A function used as a value otherwise is called with arguments this
      # analysis does not see.
      if (kind %in% c("fun", "options")) cap_no_entries else entry_key(ent$cap[[j]], "", kind, ent$why[[j]])
    } else if (kind == "options") {
      cap_options_entries(node, ed$call, ent$why[[j]])
    } else if (kind %in% c("openr", "openw") &&
               cap_open_call_mode(ed$fun, ed$call) == if (kind == "openr") "write" else "read") {
      cap_no_entries
    } else {
      if (is.null(binding)) {
        binding <- node$bcache[[as.character(i)]]
        if (is.null(binding)) {
          binding <- cap_binding(ed, node)
          if (is.null(node$bcache)) node$bcache <- list()
          node$bcache[[as.character(i)]] <- binding
        }
      }
      cap_judge(binding(ent$via[[j]]), ent$cap[[j]], if (kind %in% c("openr", "openw")) "value" else kind,
                ent$why[[j]])
    }
    per[[nm]] <- res
    out[[length(out) + 1L]] <- res
  }
  list(out = unlist(out), per = per)
}

# options(...) at a call site: reading options (no arguments, or names only)
# changes nothing.
cap_options_entries <- function(node, call, why) {
  args <- as.list(call)[-1L]
  if (length(args) == 0L) {
    return(cap_no_entries)
  }
  nms <- names(args) %||% rep("", length(args))
  reading <- all(!nzchar(nms)) && all(vapply(args, function(a) {
    is.character(a) || (is.call(a) && identical(a[[1L]], as.name("c")) &&
                          all(vapply(as.list(a)[-1L], is.character, logical(1))))
  }, logical(1)))
  if (reading) {
    return(cap_no_entries)
  }
  entry_key("change_session", "", "value", why)
}

# A function giving the origins of the callee's parameter `q` at the call
# site: the argument given for it, else (through `...`) the caller's own
# `...`, else the callee's default, evaluated with the other arguments of
# this call.
cap_binding <- function(ed, node) {
  target <- ed$fun
  call <- ed$call
  args <- as.list(call)[-1L]
  dots <- vapply(args, function(a) identical(a, as.name("...")), logical(1))
  passes_dots <- any(dots)
  args <- args[!dots]
  matched <- NULL
  fmls <- if (is.function(target) && !is.primitive(target)) formals(target) else NULL
  if (!is.null(fmls)) {
    matched <- tryCatch({
      mc <- match.call(target, as.call(c(list(as.name("f")), args)), expand.dots = FALSE)
      as.list(mc)[-1L]
    }, error = function(e) NULL)
  }
  tnode <- NULL
  cache <- new.env(parent = emptyenv())
  dmemo <- new.env(parent = emptyenv())
  unknown <- cap_src_unknown
  resolve <- function(q, depth = 0L) {
    hit <- cache[[q]]
    if (!is.null(hit)) return(hit)
    if (depth > 8L) return(unknown)
    assign(q, cap_src_empty, envir = cache)
    # The caller's own `...` passed on: the element named `name` of it (""
    # for all of it).
    passed <- function(name) {
      if (!passes_dots) {
        return(cap_src_empty)
      }
      if ("..." %in% node$params) {
        return(cap_src_param(paste0("...", name)))
      }
      cap_sources(as.name("..."), node)
    }
    res <- if (is.null(fmls)) {
      unknown
    } else if (is.null(matched)) {
      unknown
    } else if (q == "...") {
      parts <- lapply(matched[["..."]], cap_sources, node = node)
      cap_merge_all(c(parts, list(passed(""))))
    } else if (startsWith(q, "...")) {
      # One element of the callee's `...`, by name: an argument of that name
      # or an unnamed one.
      # ("...=name": a parameter after `...`, matched by exact name only).
      name <- substring(q, 4L)
      exact <- startsWith(name, "=")
      d <- matched[["..."]] %||% list()
      nms <- names(d) %||% rep("", length(d))
      parts <- lapply(d[nms == sub("^=", "", name) | (!exact & !nzchar(nms))], cap_sources, node = node)
      cap_merge_all(c(parts, list(passed(name))))
    } else if (q %in% names(matched)) {
      cap_sources(matched[[q]], node)
    } else {
      after_dots <- "..." %in% names(fmls) && match(q, names(fmls), 0L) > match("...", names(fmls))
      s <- passed(if (after_dots) paste0("=", q) else q)
      if (!q %in% names(fmls)) {
        s <- unknown
      } else if (!missing_arg(fmls[[q]]) && !is.null(fmls[[q]])) {
        if (is.null(tnode)) tnode <<- cap_state$nodes[[ed$key]] %||% cap_analyse(ed$key, target)
        s <- cap_merge(s, cap_sources(fmls[[q]], tnode, resolver = function(p) resolve(p, depth + 1L),
                                      memo = dmemo))
      }
      s
    }
    assign(q, res, envir = cache)
    res
  }
  function(q) resolve(q)
}


# -- the served function ------------------------------------------------------------

# What package_tools() caches per function (cold path): its summary and the
# origins of its arguments' defaults, which decide the entries that arrive
# through arguments a client cannot set. `funs` is a named list of the
# package's functions; returns a list of list(entries, defaults) by name.
capability_infos <- function(package, funs) {
  cap_tables()
  keys <- paste0(package, "::", names(funs))
  roots <- list()
  for (i in seq_along(funs)) {
    if (is.null(cap_state$functions[[keys[[i]]]]) && !is.primitive(funs[[i]])) {
      roots[[length(roots) + 1L]] <- list(key = keys[[i]], fun = funs[[i]])
    }
  }
  cap_solve(roots)
  out <- list()
  for (i in seq_along(funs)) {
    fun <- funs[[i]]
    entries <- cap_function_summary(keys[[i]], fun)
    defaults <- list()
    if (!is.primitive(fun)) {
      node <- cap_state$nodes[[keys[[i]]]] %||% cap_analyse(keys[[i]], fun)
      fmls <- formals(fun)
      for (p in setdiff(names(fmls), "...")) {
        if (missing_arg(fmls[[p]]) || is.null(fmls[[p]])) next
        defaults[[p]] <- cap_sources(fmls[[p]], node, memo = new.env(parent = emptyenv()))
      }
    }
    # `paths`: whether arguments holding paths matter (compiled code, or
    # file capabilities to confine); `formals`: the function's own arguments.
    info <- list(entries = entries, defaults = defaults,
                 formals = names(formals(args(fun) %||% fun)),
                 paths = any(grepl("^(compiled|read_files|write_files)\t", names(entries))))
    # An S3 generic: the client's arguments reach its methods by name, so
    # each method is decided with the arguments it takes.
    if (!is.primitive(fun) && length(gen <- cap_generic_names(fun)) > 0L) {
      info$methods <- list()
      ns <- topenv(environment(fun))
      for (m in cap_s3_methods(gen[[1L]], ns)) {
        ms <- cap_state$summaries[[m$key]] %||% cap_function_summary(m$key, m$fun)
        mnode <- cap_state$nodes[[m$key]] %||% cap_analyse(m$key, m$fun)
        mf <- formals(m$fun)
        mdefaults <- list()
        for (p in setdiff(names(mf), "...")) {
          if (missing_arg(mf[[p]]) || is.null(mf[[p]])) next
          mdefaults[[p]] <- cap_sources(mf[[p]], mnode, memo = new.env(parent = emptyenv()))
        }
        info$methods[[m$key]] <- list(entries = ms, defaults = mdefaults, formals = names(mf))
        info$paths <- info$paths || any(grepl("^(compiled|read_files|write_files)\t", names(ms)))
      }
    }
    out[[names(funs)[[i]]]] <- info
  }
  out
}

# The summary of a function (its graph solved already, or now).
cap_function_summary <- function(key, fun) {
  spec <- cap_state$functions[[key]]
  if (!is.null(spec)) {
    return(cap_table_summary(key, spec))
  }
  if (is.primitive(fun)) {
    nm <- sub("^.*::", "", key)
    spec <- cap_state$internal[[nm]]
    if (is.null(spec)) {
      return(cap_no_entries)
    }
    # A primitive served directly: its arguments are the client's.
    return(entry_union(unlist(lapply(spec, function(it) {
      entry_key(it$cap, if (is.null(it$arg)) "" else "...", it$kind, paste0(nm, "()"))
    }))))
  }
  s <- cap_state$summaries[[key]]
  if (is.null(s)) {
    cap_solve(list(list(key = key, fun = fun)))
    s <- cap_state$summaries[[key]]
  }
  s %||% cap_no_entries
}

# The capabilities of a served function, from its cached info: a named
# character vector, capability -> the operation that gives it, in the order
# of capability_labels. `settable` names the arguments a client can set (the
# input schema's properties), `dots_settable` whether values reach `...` (an
# S3 generic described with its default method's arguments), `path_args` the
# settable arguments that hold files, commands or addresses.
capability_decide <- function(info, settable, dots_settable, path_args) {
  if (!is.null(info$methods)) {
    # The generic itself with nothing in `...`, then each method with the
    # arguments it takes by name (the others fall into its `...`).
    parts <- list(capability_decide(info[c("entries", "defaults")], settable, FALSE, path_args))
    for (m in info$methods) {
      own <- intersect(settable, m$formals)
      parts[[length(parts) + 1L]] <- capability_decide(
        m, own, "..." %in% m$formals && any(!settable %in% m$formals), intersect(path_args, own)
      )
    }
    return(cap_merge_caps(parts))
  }
  ent <- entry_split(info$entries)
  caps <- character()
  vias <- list()
  whys <- list()
  add <- function(cap, why, via = "") {
    if (is.na(caps[cap])) caps[[cap]] <<- why
    vias[[cap]] <<- union(vias[[cap]], via)
    whys[[cap]] <<- union(whys[[cap]], why)
  }
  # Does the value of argument `p` reach the operation harmfully when the
  # client cannot set it? Its default decides.
  reaches <- function(p, cap, kind, depth = 0L) {
    if (startsWith(p, "...")) {
      return(dots_settable && (p == "..." || sub("^=", "", substring(p, 4L)) %in% settable))
    }
    if (p %in% settable) {
      return(TRUE)
    }
    src <- info$defaults[[p]]
    if (is.null(src) || depth > 8L) {
      return(FALSE)
    }
    if (isTRUE(src$unknown) || cap_src_harmful(src, cap, kind)) {
      return(TRUE)
    }
    any(vapply(unique(c(src$params, src$code)), reaches, logical(1), cap = cap, kind = kind,
               depth = depth + 1L))
  }
  for (i in seq_along(ent$cap)) {
    cap <- ent$cap[[i]]
    kind <- ent$kind[[i]]
    via <- ent$via[[i]]
    if (cap == "compiled") next
    if (kind %in% c("code", "env") && nzchar(via)) {
      # An argument evaluated or used as an environment as it is: a client's
      # JSON value is never code or an environment, but the default of an
      # argument the client cannot set may make one from values the client
      # gives (assign()'s `envir = as.environment(pos)`), or be a global one.
      src <- if (!via %in% settable && !startsWith(via, "...")) info$defaults[[via]]
      if (!is.null(src) && ((kind == "env" && isTRUE(src$env)) ||
                            any(vapply(src$code, reaches, logical(1), cap = cap, kind = "value")))) {
        add(cap, ent$why[[i]])
      }
      next
    }
    if (!nzchar(via)) {
      add(cap, ent$why[[i]])
    } else if (kind == "options") {
      if (via %in% settable || (startsWith(via, "...") && dots_settable)) add(cap, ent$why[[i]], via)
    } else if (reaches(via, cap, if (kind %in% c("openr", "openw")) "value" else kind)) {
      add(cap, ent$why[[i]], if (via %in% settable) via else "")
    }
  }
  # Compiled code whose effect is not known, given a file, command or
  # address: assume it uses it.
  if ("compiled" %in% ent$cap && length(path_args) > 0L) {
    why <- paste0("compiled code given `", path_args[[1L]], "`")
    cmd <- intersect(path_args, c("cmd", "command", "commands"))
    if (length(cmd) > 0L) add("run_commands", paste0("compiled code given `", cmd[[1L]], "`"))
    if (!any(c("read_files", "write_files") %in% names(caps))) {
      add("read_files", why)
      add("write_files", why)
    }
  }
  o <- order(match(names(caps), names(capability_labels)))
  structure(caps[o], via = vias[names(caps)[o]], why = whys[names(caps)[o]])
}

cap_merge_caps <- function(parts) {
  caps <- character()
  vias <- list()
  whys <- list()
  for (p in parts) {
    for (cap in names(p)) {
      if (is.na(caps[cap])) caps[[cap]] <- p[[cap]]
      vias[[cap]] <- union(vias[[cap]], attr(p, "via")[[cap]])
      whys[[cap]] <- union(whys[[cap]], attr(p, "why")[[cap]])
    }
  }
  o <- order(match(names(caps), names(capability_labels)))
  structure(caps[o], via = vias[names(caps)[o]], why = whys[names(caps)[o]])
}

# With file arguments checked against `root` (check_path_args()), what
# arrives only through them cannot be a pipe ("|command", as cat() and
# write.table() take it) or a web address (unless "network" is allowed):
# those capabilities are dropped.
capability_guarded <- function(caps, guarded) {
  drop <- character()
  for (cap in intersect(names(caps), c("run_commands", "network"))) {
    vias <- attr(caps, "via")[[cap]]
    whys <- attr(caps, "why")[[cap]]
    through_paths <- length(vias) > 0L && all(nzchar(vias)) && all(vias %in% guarded)
    if (through_paths && (cap == "network" || all(whys == "pipe()"))) {
      drop <- c(drop, cap)
    }
  }
  if (length(drop) == 0L) {
    return(caps)
  }
  keep <- !names(caps) %in% drop
  structure(caps[keep], via = attr(caps, "via")[keep], why = attr(caps, "why")[keep])
}

# Is a value of these origins harmful for the operation, whatever the
# parameters in it?
cap_src_harmful <- function(src, cap, kind) {
  src$params <- character()
  src$code <- character()
  length(cap_judge(src, cap, kind, "")) > 0L
}

# The arguments of a served function through which file capabilities arrive
# (its read and write operations take them as paths).
capability_file_args <- function(info, settable) {
  ent <- entry_split(info$entries)
  hit <- ent$cap %in% c("read_files", "write_files") & nzchar(ent$via)
  intersect(unique(ent$via[hit]), settable)
}

# The arguments that may hold a file, connection, command or address, by
# name or by the first sentence of their help text (cached with the inferred
# tool).
capability_path_like <- function(args, arg_docs) {
  by_name <- args[tolower(args) %in% capability_path_names]
  docs <- arg_docs[intersect(names(arg_docs), args)]
  first <- sub("([.;]\\s).*$", "", docs)
  by_doc <- names(docs)[grepl(capability_arg_pattern, tolower(first), perl = TRUE)]
  unique(c(by_name, by_doc))
}

# Those of them a client can set with a string.
capability_path_args <- function(settable, path_like, props) {
  cand <- intersect(path_like, settable)
  cand[vapply(cand, function(a) string_settable(props[[a]]), logical(1))]
}

# Does a property's schema take a string (or an array of them)? Alternatives
# (`anyOf`) do when one of them does.
string_settable <- function(schema) {
  if (!is.null(schema$anyOf)) {
    return(any(vapply(schema$anyOf, string_settable, logical(1))))
  }
  type <- schema$type
  items <- schema$items$type
  is.null(type) || identical(type, "string") ||
    (identical(type, "array") && (is.null(items) || identical(items, "string")))
}
