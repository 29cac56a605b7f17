# package_tools(), what a function's signature says (RULES R8.3): its formals
# (with an S3 generic's default method), the arguments it uses with
# match.arg() and tests with missing(), and those it hands on to functions
# that handle them missing.

# Formals to describe, with the environment their defaults refer to, the
# names of arguments used with match.arg() (and whether several.ok) and
# those tested with missing().
function_formals <- function(fun, fname, ns) {
  f <- formals(args(fun) %||% fun) %||% list()
  bodies <- list(body(fun))
  env <- environment(fun) %||% ns
  up_to_methods <- character()
  if (is_s3_generic(fun)) {
    method <- utils::getS3method(fname, "default", optional = TRUE, envir = ns)
    if (!is.function(method)) {
      # A generic without a default method: the arguments after the one it
      # dispatches on are its methods' to require or not (lattice's
      # histogram(x, data): histogram.numeric() has data = NULL). RULES R8.3.
      no_default <- names(f)[vapply(f, is_missing_arg, logical(1)) & names(f) != "..."]
      up_to_methods <- no_default[-1L]
    }
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
       first_without_default = no_default[1L], up_to_methods = up_to_methods,
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
      # What a call's head reaches, and whether a callee handles a formal
      # missing, are the same wherever the call is: worked out once per
      # package_tools() call (signature_memo).
      key <- paste(deparse1(e[[1L]]), format(env), format(ns), sep = "\r")
      callees <- signature_memo[[key]]
      if (is.null(callees)) {
        callees <- callee_candidates(e[[1L]], env, ns)
        signature_memo[[key]] <- callees
      }
      for (i in seq_along(callees)) {
        formal <- matched_formals(callees[[i]], e, hits)
        for (a in names(formal)) {
          hkey <- paste(key, i, formal[[a]], depth, sep = "\r")
          handles <- signature_memo[[hkey]]
          if (is.null(handles)) {
            handles <- handles_missing(callees[[i]], formal[[a]], ns, depth)
            signature_memo[[hkey]] <- handles
          }
          if (handles) {
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

# Memo of passed_to_missing() for one package_tools() call (emptied when it
# starts and ends): what a call's head resolves to from an environment, and
# whether each callee handles a formal missing, depend only on the code
# loaded, which does not change during the call.
signature_memo <- new.env(parent = emptyenv())

clear_signature_memo <- function() {
  rm(list = ls(signature_memo, all.names = TRUE), envir = signature_memo)
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
