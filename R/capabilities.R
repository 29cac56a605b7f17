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
# analysis, and the walk is also what keeps jsonlite the only non-base
# import (RULES section 0).
#
# This file holds the classes and the tables of known effects. The analysis
# is in layers, a file each: capabilities-resolve.R (names to functions and
# methods), capabilities-analyse.R (one function's code, walked once),
# capabilities-origins.R (where values come from), capabilities-graph.R (the
# call graph solved to a fixed point) and capabilities-decide.R (the decision
# for a served function, used by package_tools()).

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
  cap_state$loadable <- new.env(parent = emptyenv())
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
