# Capabilities (RULES R8.8; the overview is in R/capabilities.R): the call
# graph of the served functions and the summaries of its nodes, solved to a
# fixed point, with each callee's entries translated to its caller's
# arguments at the call site.

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
  # the method tables of its package and of the namespace that defines it:
  # a generic made from another package's function (methods' kronecker(),
  # from base) belongs to that package, its methods' table to the namespace
  # that made it.
  ns_env <- topenv(node$env)
  for (g in node$generics) {
    for (m in cap_s3_methods(g, ns_env)) {
      edges[[length(edges) + 1L]] <- list(key = m$key, fun = m$fun, call = cap_method_call(node, m$fun),
                                          method = TRUE)
    }
  }
  s4_nss <- list(ns_env)
  s4_pkg <- attr(node$fun, "package")
  if (is.character(s4_pkg) && length(s4_pkg) == 1L) {
    s4_ns <- tryCatch(asNamespace(s4_pkg), error = function(e) NULL)
    if (!is.null(s4_ns) && !identical(s4_ns, ns_env)) s4_nss <- c(list(s4_ns), s4_nss)
  }
  for (g in node$s4) {
    for (s4_ns in s4_nss) {
      for (m in cap_s4_methods(g, s4_ns)) {
        edges[[length(edges) + 1L]] <- list(key = m$key, fun = m$fun, call = cap_method_call(node, m$fun),
                                            method = TRUE)
      }
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
      } else if (!is_missing_arg(fmls[[q]]) && !is.null(fmls[[q]])) {
        if (is.null(tnode)) tnode <<- cap_state$nodes[[ed$key]] %||% cap_analyse(ed$key, target)
        s <- cap_merge(s, cap_sources(fmls[[q]], tnode, resolver = function(p) resolve(p, depth + 1L),
                                      memo = dmemo))
      } else if (!is_missing_arg(fmls[[q]])) {
        # A NULL default the call leaves in place: where it means "all"
        # (Sys.getenv() with no argument reads every variable), it counts
        # like a NULL written at the call.
        s <- cap_merge(s, cap_src_expr(NULL, emptyenv()))
      }
      s
    }
    assign(q, res, envir = cache)
    res
  }
  function(q) resolve(q)
}
