# Capabilities (RULES R8.8; the overview is in R/capabilities.R): one
# function's code walked once, on its own (its calls, references, local
# variables and the table operations it uses).

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
  ns_env <- if (is.environment(env)) topenv(env) else .BaseNamespaceEnv

  from <- if (isNamespace(ns_env)) getNamespaceName(ns_env) else "base"
  # pkg::name (or pkg:::name) as list(key, fun), or NULL; a call into a
  # namespace the classification does not load is code it cannot follow.
  qualified <- function(e) {
    res <- cap_resolve_qualified(as.character(e[[2L]]), as.character(e[[3L]]), from)
    if (!is.null(res$unknown)) {
      node$unknown <- union(node$unknown, res$unknown)
      return(NULL)
    }
    res
  }
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
    others <- others[!vapply(others, is_missing_arg, logical(1))]
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
      for (i in seq_along(e)) if (!is_missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
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
        for (i in seq_along(fml)) if (!is_missing_arg(fml[[i]])) walk(fml[[i]], TRUE, on_exit)
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
          for (i in seq_along(inner)[-1L][-1L]) if (!is_missing_arg(inner[[i]])) walk(inner[[i]], nested, on_exit)
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
        if (length(e) >= 2L && !is_missing_arg(e[[2L]])) {
          node$scoped <- union(node$scoped, setdiff(all.names(e[[2L]]), c("{", "(")))
          walk(e[[2L]], nested, TRUE)
        }
        return()
      }
      if (fn %in% c("::", ":::") && length(e) == 3L) {
        res <- qualified(e)
        if (!is.null(res)) add_ref(res)
        return()
      }
      if (fn == "missing") {
        return()
      }
      if (fn %in% c("quote", "as.name", "as.symbol") && length(e) == 2L && !is_missing_arg(e[[2L]])) {
        # m <- match.call(); m[[1L]] <- quote(stats::model.frame); eval(m):
        # a function quoted (or named, as.name("library")) is called with
        # this function's own arguments.
        q <- e[[2L]]
        if (fn != "quote" && is.character(q) && length(q) == 1L) q <- as.name(q)
        res <- if (is.symbol(q)) {
          cap_resolve(as.character(q), env)
        } else if (is.call(q) && length(q) == 3L && as.character(q[[1L]]) %in% c("::", ":::")) {
          qualified(q)
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
        for (i in seq_along(inner)[-1L]) if (!is_missing_arg(inner[[i]])) walk(inner[[i]], nested, on_exit)
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
        for (i in seq_along(e)[-c(1L, 2L)]) if (!is_missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
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
      for (i in seq_along(e)[-1L]) if (!is_missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
      return()
    }
    # A call whose function is computed: `(if (unix) system else shell)(cmd)`,
    # `pkg::f(x)`, `obj$method()`.
    if (is.call(head) && is.symbol(head[[1L]]) && as.character(head[[1L]]) %in% c("::", ":::") &&
        length(head) == 3L) {
      res <- qualified(head)
      if (!is.null(res)) {
        if (is.primitive(res$fun)) cap_primitive_ref(node, as.character(head[[3L]])) else add_call(res, e)
      }
    } else {
      walk(head, nested, on_exit)
    }
    note_function_args(e)
    for (i in seq_along(e)[-1L]) if (!is_missing_arg(e[[i]])) walk(e[[i]], nested, on_exit)
  }

  fml <- formals(fun)
  for (i in seq_along(fml)) if (!is_missing_arg(fml[[i]])) walk(fml[[i]], FALSE, FALSE)
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
          for (p in names(fml)) for (o in args[!vapply(args, is_missing_arg, logical(1))]) add_local(p, o)
          next
        }
        margs <- as.list(mc)[-1L]
        for (p in names(margs)) {
          vals <- if (p == "...") margs[[p]] else list(margs[[p]])
          for (o in vals) if (!is_missing_arg(o)) add_local(p, o)
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
  # <<- outside the function's own frame: at the top of a function it
  # reaches the environment the function was defined in, which outlives the
  # call: a namespace (locked) and then the global environment, or the
  # private state of a closure (tools' bibstyle() keeps its default style
  # so, utils' cite() the keys cited); in a nested function, a name that is
  # no local of this one.
  top <- startsWith(node$super, "TOP:")
  tops <- sub("^TOP:", "", node$super[top])
  deep <- node$super[!top]
  node$super_global <- length(tops) > 0L ||
    any(!deep %in% c(params, names(node$locals), nested_all))
  node
}

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
