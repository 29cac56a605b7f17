# What a package tool's call changes in the R process is undone when the
# call ends (RULES R8.10), so that no call sees what an earlier one did and
# a client cannot change the server for the calls that follow (issue 40:
# "nothing survives a call"). This is one layer of containment, beside the
# input-schema check in the engine (RULES L6.7) and the capability
# classifier (RULES R8.8): it holds for whatever the classifier let through.
#
# A snapshot is taken before the call and the process is put back after it,
# also when the call fails or is interrupted. What is put back, and how:
#
# - options: new ones removed, changed ones set back;
# - the working directory;
# - environment variables: new ones unset, changed or removed ones set back;
# - the search path: what the call attached is detached;
# - the random number generator's kinds (the seed goes on: two calls of a
#   random tool do not return the same numbers);
# - the colour palette, graphics devices the call opened (closed), and the
#   graphical parameters of a device that was open before;
# - connections the call opened (closed), and sinks it left (removed);
# - top-level task callbacks it added (removed);
# - the locale's categories;
# - the memory limits (`mem.maxVSize()`, `mem.maxNSize()`);
# - variables of the global environment: new ones removed, changed or
#   removed ones put back;
# - files and directories the call created in R's temporary directory
#   (removed): each call has the temporary directory as it found it.
#
# Not undone here (RULES R8.10 says so too): namespaces and compiled code
# the call loaded (unloading them is not safe while other namespaces import
# them; loading them is a capability, R8.8), and a function marked for the
# debugger (the classifier refuses debug(), trace() and browser(), R8.8).

call_state <- function() {
  g <- globalenv()
  # The seed goes on (see above); its kind is restored with RNGkind().
  globals <- setdiff(ls(g, all.names = TRUE, sorted = FALSE), ".Random.seed")
  list(
    options = options(),
    wd = getwd(),
    env = Sys.getenv(),
    search = search(),
    rng = RNGkind(),
    palette = grDevices::palette(),
    devices = grDevices::dev.list(),
    device = grDevices::dev.cur(),
    par = if (grDevices::dev.cur() > 1L) graphics::par(no.readonly = TRUE),
    # getAllConnections(), not showConnections(): that one runs a full
    # garbage collection first, twice per call (tens of milliseconds with
    # the documentation of a large package in memory).
    connections = getAllConnections(),
    sinks = sink.number(),
    callbacks = getTaskCallbackNames(),
    locale = locale_state(),
    vsize = mem.maxVSize(),
    nsize = mem.maxNSize(),
    globals = mget(globals, envir = g),
    temp = list.files(tempdir(), all.files = TRUE, no.. = TRUE)
  )
}

locale_categories <- c("LC_COLLATE", "LC_CTYPE", "LC_MONETARY", "LC_NUMERIC", "LC_TIME")

locale_state <- function() {
  vapply(locale_categories, Sys.getlocale, "")
}

# Put the process back as `s` found it. Each kind is restored on its own, so
# one that fails (a device that cannot be closed) leaves the others done.
call_state_restore <- function(s) {
  quietly <- function(expr) tryCatch(suppressWarnings(expr), error = function(e) NULL)
  # Sinks and connections first: what follows may print.
  while (sink.number() > s$sinks) quietly(sink())
  for (i in setdiff(getAllConnections(), s$connections)) {
    quietly(close(getConnection(i)))
  }
  now <- options()
  added <- setdiff(names(now), names(s$options))
  if (length(added)) {
    options(stats::setNames(rep(list(NULL), length(added)), added))
  }
  changed <- names(s$options)[!vapply(names(s$options), function(n) identical(now[[n]], s$options[[n]]), NA)]
  if (length(changed)) {
    quietly(options(s$options[changed]))
  }
  if (!identical(getwd(), s$wd)) quietly(setwd(s$wd))
  env <- Sys.getenv()
  gone <- setdiff(names(env), names(s$env))
  if (length(gone)) Sys.unsetenv(gone)
  differ <- names(s$env)[is.na(env[names(s$env)]) | env[names(s$env)] != s$env]
  if (length(differ)) do.call(Sys.setenv, as.list(s$env[differ]))
  for (name in setdiff(search(), s$search)) {
    quietly(detach(name, character.only = TRUE))
  }
  if (!identical(RNGkind(), s$rng)) quietly(do.call(RNGkind, as.list(s$rng)))
  if (!identical(grDevices::palette(), s$palette)) quietly(grDevices::palette(s$palette))
  for (d in setdiff(grDevices::dev.list(), s$devices)) quietly(grDevices::dev.off(d))
  if (s$device > 1L && s$device %in% grDevices::dev.list()) {
    quietly(grDevices::dev.set(s$device))
    if (!identical(graphics::par(no.readonly = TRUE), s$par)) quietly(graphics::par(s$par))
  }
  for (name in setdiff(getTaskCallbackNames(), s$callbacks)) quietly(removeTaskCallback(name))
  locale <- locale_state()
  for (cat in locale_categories[locale != s$locale]) quietly(Sys.setlocale(cat, s$locale[[cat]]))
  if (!identical(mem.maxVSize(), s$vsize)) quietly(mem.maxVSize(s$vsize))
  if (!identical(mem.maxNSize(), s$nsize)) quietly(mem.maxNSize(s$nsize))
  restore_globals(s$globals)
  made <- setdiff(list.files(tempdir(), all.files = TRUE, no.. = TRUE), s$temp)
  if (length(made)) quietly(unlink(file.path(tempdir(), made), recursive = TRUE, force = TRUE))
  invisible()
}

restore_globals <- function(old) {
  g <- globalenv()
  now <- setdiff(ls(g, all.names = TRUE, sorted = FALSE), ".Random.seed")
  added <- setdiff(now, names(old))
  if (length(added)) rm(list = added, envir = g)
  for (name in names(old)) {
    if (!exists(name, envir = g, inherits = FALSE) || !identical(get(name, envir = g), old[[name]])) {
      assign(name, old[[name]], envir = g)
    }
  }
}

# Evaluate `expr` with the process put back afterwards (RULES R8.10).
with_call_state <- function(expr) {
  s <- call_state()
  on.exit(call_state_restore(s), add = TRUE)
  expr
}
