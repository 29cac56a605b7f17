# package_tools(), the tool function: the call of the package function with
# its arguments converted and, when files may be read or written, confined
# to `root` (RULES R8.8).

# -- calling the function -------------------------------------------------------

# The tool function: converts the arguments, calls the package function by
# its name (so that warnings and sys.call() read `median(...)`), and shapes
# or converts the result.
package_tool_wrapper <- function(fun, fname, convert, limits, guard = NULL) {
  force(fun)
  force(convert)
  force(limits)
  force(guard)
  # Arguments are passed as values; language objects among them (formulas)
  # are wrapped in quote(), which is all this environment has to resolve.
  call_env <- new.env(parent = baseenv())
  assign(fname, fun, envir = call_env)
  # The mark is_package_tool() looks for (RULES N7.1, R10.11).
  call_env$.mcplite_package_tool <- TRUE
  function(...) {
    # RULES R8.10: what the call changes in the process is undone after it.
    state <- call_state()
    on.exit(call_state_restore(state), add = TRUE)
    args <- list(...)
    nms <- names(args)
    if (length(args) > 0L && (is.null(nms) || any(!nzchar(nms)))) {
      abort("all arguments must be named")
    }
    shaping <- NULL
    if (!is.null(limits)) {
      shaping <- shape_request(args, limits)
      args <- args[!names(args) %in% shape_argument_names]
    }
    for (nm in intersect(names(args), names(convert))) {
      if (!is.null(args[[nm]])) {
        args[nm] <- list(convert[[nm]](args[[nm]]))
      }
    }
    for (i in seq_along(args)) {
      if (is.language(args[[i]])) {
        args[[i]] <- call("quote", args[[i]])
      }
    }
    if (!is.null(guard)) {
      # RULES R8.8: file arguments stay inside `root`, which is also the
      # working directory during the call.
      check_path_args(args, guard)
      owd <- setwd(guard$root)
      on.exit(setwd(owd), add = TRUE)
    }
    # RULES R8.9: what the function draws comes back as an image.
    package_tool_call(function() do.call(fname, args, envir = call_env), function(res) {
      if (!is.null(shaping) && is.data.frame(res)) shape_rows(res, shaping) else package_tool_value(res)
    })
  }
}

# The file arguments of a call must name paths inside the served directory
# (after resolving `..` and symbolic links), the console (""), or with
# "network" allowed a web address. Anything else is a tool error.
check_path_args <- function(args, guard) {
  for (nm in intersect(names(args), guard$args)) {
    v <- args[[nm]]
    if (is.null(v)) {
      next
    }
    if (!is.character(v)) {
      abort("`", nm, "` must be a path inside the served directory")
    }
    for (x in v) {
      if (is.na(x) || !nzchar(x)) {
        next
      }
      if (grepl("^[A-Za-z][A-Za-z0-9+.-]*://", x)) {
        if (guard$network && grepl("^(https?|ftps?)://", x, ignore.case = TRUE)) {
          next
        }
        abort("`", nm, "` must be a path inside the served directory, not a URL",
              if (!guard$network) " (web addresses need \"network\" in `allow`)")
      }
      if (!path_inside(x, guard$root)) {
        abort("`", nm, "` must be a path inside the served directory, not \"", x, "\"")
      }
    }
  }
  invisible()
}

# Does `x` (relative paths are relative to `root`) lie inside `root` (a
# normalized directory)? The existing part of the path is resolved with its
# symbolic links; the rest may not climb with "..".
path_inside <- function(x, root) {
  if (startsWith(x, "|") || grepl("\\n|\\r", x)) {
    return(FALSE)
  }
  x <- path.expand(x)
  if (!startsWith(x, "/")) {
    x <- file.path(root, x)
  }
  parts <- strsplit(x, "/", fixed = TRUE)[[1L]]
  parts <- parts[nzchar(parts) & parts != "."]
  rest <- character()
  repeat {
    head <- paste0("/", paste(parts, collapse = "/"))
    if (length(parts) == 0L || file.exists(head)) {
      break
    }
    rest <- c(parts[[length(parts)]], rest)
    parts <- parts[-length(parts)]
  }
  if (any(rest == "..")) {
    return(FALSE)
  }
  real <- normalizePath(head, winslash = "/", mustWork = FALSE)
  full <- if (length(rest)) paste(c(sub("/$", "", real), rest), collapse = "/") else real
  identical(full, root) || startsWith(full, paste0(sub("/$", "", root), "/"))
}
