# Capabilities (RULES R8.8; the overview is in R/capabilities.R): the decision
# for a served function, from its summary and the arguments a client can set,
# and the arguments that hold paths.

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
        if (is_missing_arg(fmls[[p]]) || is.null(fmls[[p]])) next
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
          if (is_missing_arg(mf[[p]]) || is.null(mf[[p]])) next
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
