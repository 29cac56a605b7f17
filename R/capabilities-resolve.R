# Capabilities (RULES R8.8; the overview is in R/capabilities.R): the
# function a name in a package's code refers to, and the S3 and S4 methods a
# generic dispatches to for the values a client can send.

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

# The namespaces the classification loads to follow a `pkg::name` in the code
# of a function of namespace `from` (RULES R8.8): R's base packages but tcltk
# (loading it starts Tcl in the server's process, with its event loop, and
# opens the display); the packages `from` depends on, imports or suggests;
# and those these depend on or import, at any depth (loaded with them in any
# case). A package `from` does not name is not loaded to read it (a call
# into it is code the classification cannot follow), and the answer does not
# depend on what this session has loaded.
cap_loadable_namespaces <- function(from) {
  hit <- cap_state$loadable[[from]]
  if (!is.null(hit)) {
    return(hit)
  }
  base <- setdiff(cap_base_packages(), "tcltk")
  seen <- character()
  todo <- c(from, package_dependency_names(from, "Suggests"))
  while (length(todo) > 0L) {
    p <- todo[[1L]]
    todo <- todo[-1L]
    if (p %in% seen || p %in% base) next
    seen <- c(seen, p)
    todo <- c(todo, package_dependency_names(p))
  }
  out <- union(base, seen)
  cap_state$loadable[[from]] <- out
  out
}

cap_base_packages <- function() {
  if (is.null(cap_state$base_packages)) {
    ip <- utils::installed.packages(lib.loc = .Library, priority = "base", fields = character())
    cap_state$base_packages <- unname(ip[, "Package"])
  }
  cap_state$base_packages
}

# The package names in the `fields` of installed package `p`'s DESCRIPTION.
package_dependency_names <- function(p, fields = c("Depends", "Imports")) {
  desc <- tryCatch(
    suppressWarnings(utils::packageDescription(p, fields = fields, drop = FALSE)),
    error = function(e) NULL
  )
  if (!is.list(desc)) {
    return(character())
  }
  values <- unlist(desc[fields], use.names = FALSE)
  values <- values[!is.na(values)]
  if (length(values) == 0L) {
    return(character())
  }
  names <- trimws(sub("\\(.*", "", unlist(strsplit(values, ",", fixed = TRUE))))
  setdiff(names[nzchar(names)], "R")
}

# pkg::name, written in the code of a function of namespace `from`, as
# list(key, fun); NULL when `pkg` is not installed or has no such function;
# list(unknown = "pkg::name") when `pkg` is installed but not one
# cap_loadable_namespaces(from) lets the classification load.
cap_resolve_qualified <- function(pkg, sym, from) {
  if (!pkg %in% cap_loadable_namespaces(from)) {
    installed <- nzchar(system.file(package = pkg))
    return(if (installed) list(unknown = paste0(pkg, "::", sym)))
  }
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
