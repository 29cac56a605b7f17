# Capabilities (RULES R8.8; the overview is in R/capabilities.R): where the
# values in a function come from (its parameters, constants, code made from
# the caller's text), the taint that decides whether an operation counts.

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
  if (is_missing_arg(e)) {
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
    return(several(alts[!vapply(alts, is_missing_arg, logical(1))]))
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
    rest <- several(rest[!vapply(rest, is_missing_arg, logical(1))])
    return(list(src = cap_merge_all(list(head$src, rest$src)), deps = unique(c(head$deps, rest$deps))))
  }
  if (fn %in% capability_code_makers) {
    args <- as.list(e)[-1L]
    out <- several(args[!vapply(args, is_missing_arg, logical(1))])
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
    parts <- several(c(list(e[[1L]]), args[!vapply(args, is_missing_arg, logical(1))]))
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
