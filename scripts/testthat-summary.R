# Run the testthat suite against the installed package and write
# "passed failed" (counted per test block) to the file given as argument.
#
# Each file of tests/testthat runs in an R process of its own
# (scripts/testthat-worker.R), MCPLITE_TESTTHAT_JOBS of them at once
# (default 2; 1: one after the other). A process per file: what a file leaves
# in its process (options, environment variables, loaded namespaces) cannot
# change how another file runs, whichever files ran before it, and a file
# that crashes its process takes only its own results with it (it counts as
# failed). The files start longest first, by the seconds each took last time
# (scripts/testthat-seconds.txt; a file not listed there starts first, as it
# may be long), so the long ones overlap and the short ones fill the gaps.
# A line per file as it ends; the whole output of a file that failed, warned,
# skipped or crashed. The seconds each file took are written to
# <counts file without .txt>-seconds.txt: copy it over
# scripts/testthat-seconds.txt when the order no longer fits.
args <- commandArgs(trailingOnly = TRUE)
out <- args[[1]]
jobs <- suppressWarnings(as.integer(Sys.getenv("MCPLITE_TESTTHAT_JOBS", "2")))
if (is.na(jobs) || jobs < 1L) stop("MCPLITE_TESTTHAT_JOBS must be a whole number, at least 1")
Sys.setenv(NOT_CRAN = "true")

# The test files as test_dir() finds them, longest first.
files <- sort(list.files("tests/testthat", "^test.*\\.[rR]$"))
past <- utils::read.table("scripts/testthat-seconds.txt", col.names = c("file", "seconds"))
files <- files[order(-ifelse(files %in% past$file, past$seconds[match(files, past$file)], Inf))]

run <- tempfile("testthat-")
dir.create(run)
path <- function(f, ext) file.path(run, paste0(f, ext))
now <- function() proc.time()[["elapsed"]]
rscript <- file.path(R.home("bin"), "Rscript")
started <- now()

# package_tools()'s disk cache, shared by the files
# (tests/testthat/setup-package-tools.R): MCPLITE_TEST_PACKAGE_CACHE, else
# target/package-tools-cache, kept from run to run as cargo keeps target/.
# An entry is used only by the same installed package, R, and mcplite code
# (RULES R8.6: an MD5 of mcplite's R code is in the key), so a changed
# classifier never reads what an earlier build wrote. Tests of the cache
# itself, of its cold start, and those with cache = FALSE use directories
# of their own or none.
cache <- Sys.getenv("MCPLITE_TEST_PACKAGE_CACHE", file.path("target", "package-tools-cache"))
dir.create(cache, recursive = TRUE, showWarnings = FALSE)
cache <- normalizePath(cache)
Sys.setenv(MCPLITE_TEST_PACKAGE_CACHE = cache)

# The packages the files serve with the shared cache, with the seconds
# package_tools() takes for each on a cold cache (2 cores): worked out
# first, `jobs` processes at once, so that files that start together do not
# each classify the same package (and each write a partial entry over the
# other's). With a warm cache this takes a second or two.
warm <- c(base = 32, stats = 26, utils = 20, hms = 14, graphics = 12, tools = 8, grDevices = 4,
          data.table = 4, lattice = 3, grid = 2, jsonlite = 1)
warm <- warm[vapply(names(warm), function(p) nzchar(system.file(package = p)), NA)]
groups <- split(names(warm), rep_len(seq_len(jobs), length(warm)))
warm_one <- function(i) {
  code <- sprintf("options(mcplite.cache_dir = %s); for (p in c(%s)) mcplite::package_tools(p, quiet = TRUE)",
                  deparse(cache), paste(sprintf("'%s'", groups[[i]]), collapse = ", "))
  log <- path(paste0("warm-", i), ".log")
  parallel::mcparallel(system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = log, stderr = log))
}
warmed <- parallel::mccollect(lapply(seq_along(groups), warm_one))
for (i in seq_along(groups)) {
  if (!identical(warmed[[i]], 0L)) {
    cat("warming package_tools()'s cache for", groups[[i]], "failed (the files work it out themselves):\n")
    writeLines(readLines(path(paste0("warm-", i), ".log"), warn = FALSE))
  }
}
cat(sprintf("testthat: package_tools()'s cache in %s for %s (%.0f s)\n", cache,
            paste(names(warm), collapse = ", "), now() - started))
cat(sprintf("testthat: %d files, %d at a time, each in an R process of its own\n", length(files), jobs))

# A file's process is started from a fork of this one (parallel::mcparallel),
# which waits for it and returns its exit status.
start <- function(f) {
  parallel::mcparallel(system2(rscript, c("--vanilla", "scripts/testthat-worker.R", file.path("tests/testthat", f),
                                          path(f, ".rds")), stdout = path(f, ".log"), stderr = path(f, ".log")),
                       name = f)
}
results <- list()
seconds <- c()
missing <- character()
finish <- function(f, status) {
  seconds[[f]] <<- now() - since[[f]]
  df <- if (file.exists(path(f, ".rds"))) readRDS(path(f, ".rds"))
  if (is.null(df)) {
    missing <<- c(missing, f)
    cat(sprintf("%-32s no results: its R process ended with status %s; failed\n", f, format(status)))
  } else {
    results[[f]] <<- df
    bad <- df$failed > 0 | df$error
    cat(sprintf("%-32s %4d ok %3d failed %3d skipped %6.1f s\n", f, sum(!bad & !df$skipped), sum(bad),
                sum(df$skipped & !bad), seconds[[f]]))
  }
  if (is.null(df) || any(df$failed > 0 | df$error | df$skipped | df$warning > 0)) {
    writeLines(readLines(path(f, ".log"), warn = FALSE))
  }
}
todo <- files
running <- list()
since <- c()
while (length(todo) > 0L || length(running) > 0L) {
  while (length(running) < jobs && length(todo) > 0L) {
    running[[todo[[1L]]]] <- start(todo[[1L]])
    since[[todo[[1L]]]] <- now()
    todo <- todo[-1L]
  }
  # Returns as soon as a process ended (or after 5 s with none).
  ended <- parallel::mccollect(running, wait = FALSE, timeout = 5)
  for (f in names(ended)) {
    finish(f, ended[[f]])
    running[[f]] <- NULL
  }
}
cat(sprintf("(%.0f s)\n", now() - started))

df <- do.call(rbind, results)
bad <- df$failed > 0 | df$error
ok <- !bad & !df$skipped
failed <- sum(bad) + length(missing)
writeLines(sprintf("%s %.1f", sort(names(seconds)), seconds[sort(names(seconds))]),
           paste0(sub("\\.txt$", "", out), "-seconds.txt"))
writeLines(paste(sum(ok), failed), out)
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", sum(ok), failed, sum(df$skipped & !bad)))
