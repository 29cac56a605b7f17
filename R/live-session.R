# The live session: mcp_session() opens the R session it is called in to
# mcplite servers of the same user (RULES R10). The socket, its directory and
# the queue of calls are the engine's (rust/engine/src/live/); the input
# handler that runs calls when R is idle at the prompt is the bridge's
# (rust/mcplite-r/src/live.rs), which calls live_run() below for each call.
# The server's side is in R/live-server.R, the built-in session tools in
# R/live-tools.R.

#' Open this R session to mcplite servers
#'
#' @description
#' `mcp_session()` makes the interactive R session it is called in available
#' to MCP servers started with `mcp_server(tools, session_tools = TRUE)` by
#' the same user on the same machine. Put it in your `.Rprofile`:
#'
#' ```
#' if (interactive()) mcplite::mcp_session()
#' ```
#'
#' A coding assistant that launched such a server can then list the open R
#' sessions (`list_r_sessions`), pick one (`select_r_session`), and from then
#' on its tool calls run in that session's global environment, where your
#' data frames and models are. See `vignette("live-session")`.
#'
#' @section When calls run:
#' Calls run only while R is idle at the prompt, never in the middle of your
#' own computation: R's event loop runs them while it waits for you to type.
#' A call that arrives while your code runs (or while R waits inside a
#' function, such as `Sys.sleep()`, `readline()` or the browser) waits until
#' R is back at the prompt; the server gives up after its `session_wait`
#' seconds and tells the client the session was busy. Each call prints one
#' short line on the console (`echo = FALSE` turns it off); what the tool
#' itself prints, and its warnings and messages, go back to the server
#' instead of your console.
#'
#' @section Security:
#' The session listens on a Unix-domain socket (never a network port) in a
#' directory that only your user can enter: `$XDG_RUNTIME_DIR/mcplite` when
#' that is private, else `mcplite-<uid>` in the temporary directory, or the
#' directory named by the environment variable `MCPLITE_SESSION_DIR`.
#' Servers look in each of these, so a server started by a client with
#' other environment variables than your R still finds the session. The
#' directory is created with mode `0700` and refused, by the session and by
#' servers, when it belongs to another user, is a symbolic link or is open
#' to others; connections from other users are refused as well. The tools a
#' server runs in your session are the ones its script defines plus
#' read-only built-ins (listing objects, describing one, reading help).
#' Running arbitrary code sent by the assistant (the `run_r_code` tool) is
#' refused unless you allow it with `allow_code = TRUE`, because the session
#' is your live workspace.
#'
#' @section Platforms:
#' Terminal R on Linux and macOS. RStudio and Positron run R's event loop
#' for their console the same way, which is what this relies on (it is also
#' how `later`, `httpuv` and Shiny run code while R is idle). On Windows
#' live sessions are not provided: `mcp_session()` says so and does
#' nothing.
#'
#' @param allow_code `FALSE` (the default) or `TRUE`: may the `run_r_code`
#'   tool run arbitrary R code sent by the client in this session's global
#'   environment?
#' @param echo `TRUE` (the default) or `FALSE`: print one line on the console
#'   for each call the session runs.
#' @param label `NULL` or a short string shown by `list_r_sessions` beside
#'   the session's id (for example the project's name).
#' @return Invisibly, a handle of class `mcplite_live_session`; `close()` on
#'   it withdraws the session (so does the end of R). In a non-interactive
#'   session (`Rscript`, `R CMD BATCH`, knitr) or on Windows, nothing is
#'   opened: a message says why and the value is `NULL`. Calling
#'   `mcp_session()` again replaces the open session with a new one.
#' @seealso [mcp_server()] (`session_tools`), `vignette("live-session")`.
#' @export
#' @examples
#' # In a script (not interactive) this only says that it does nothing:
#' session <- mcp_session()
#' if (!is.null(session)) close(session)
mcp_session <- function(allow_code = FALSE, echo = TRUE, label = NULL) {
  check_bool(allow_code)
  check_bool(echo)
  if (!is.null(label) && (!is_scalar_string(label) || nchar(label) > 200L)) {
    abort_arg("`label` must be NULL or a single string of at most 200 characters, not ", describe(label), ".")
  }
  if (!interactive()) {
    message("mcp_session() does nothing here: this R session is not interactive ",
            "(it is meant for R sessions you work in, e.g. from .Rprofile).")
    return(invisible(NULL))
  }
  if (.Platform$OS.type == "windows") {
    message("mcp_session() does nothing here: live R sessions are not provided on Windows.")
    return(invisible(NULL))
  }
  live_stop()
  id <- as.character(Sys.getpid())
  info <- list(
    id = id,
    pid = Sys.getpid(),
    label = label,
    r_version = paste(R.version$major, R.version$minor, sep = "."),
    front_end = live_front_end(),
    allow_code = allow_code,
    user = Sys.info()[["user"]],
    started = format(Sys.time(), "%Y-%m-%dT%H:%M:%S%z")
  )
  path <- engine_live_open(id, fixed_json(info), getwd(), live_run)
  live_state$open <- list(id = id, path = path, allow_code = allow_code, echo = echo)
  live_state$callback <- addTaskCallback(function(...) {
    engine_live_touch(getwd())
    TRUE
  }, name = "mcplite live session")
  # R's exit withdraws the session (the socket is removed); a session killed
  # leaves a stale socket, which servers remove when they list.
  if (!isTRUE(live_state$finalizer)) {
    reg.finalizer(live_state, function(e) live_stop(), onexit = TRUE)
    live_state$finalizer <- TRUE
  }
  invisible(structure(list(id = id, path = path, allow_code = allow_code), class = "mcplite_live_session"))
}

# The open session of this process (one at most) and its settings.
live_state <- new.env(parent = emptyenv())

live_stop <- function() {
  if (!is.null(live_state$callback)) {
    removeTaskCallback(live_state$callback)
    live_state$callback <- NULL
  }
  live_state$open <- NULL
  invisible(engine_live_close())
}

#' @export
close.mcplite_live_session <- function(con, ...) {
  open <- live_state$open
  if (!is.null(open) && identical(open$id, con$id) && identical(open$path, con$path)) {
    live_stop()
  }
  invisible(NULL)
}

#' @export
print.mcplite_live_session <- function(x, ...) {
  open <- live_state$open
  state <- if (!is.null(open) && identical(open$path, x$path)) "open" else "closed"
  cat("<mcplite live session ", x$id, "> ", state, "\n", sep = "")
  cat("  socket: ", x$path, "\n", sep = "")
  cat("  run_r_code: ", if (isTRUE(x$allow_code)) "allowed" else "refused", "\n", sep = "")
  invisible(x)
}

# What the session runs in, for list_r_sessions.
live_front_end <- function() {
  if (nzchar(Sys.getenv("POSITRON_VERSION")) || identical(Sys.getenv("POSITRON"), "1")) {
    return("Positron")
  }
  if (identical(Sys.getenv("RSTUDIO"), "1")) {
    return("RStudio")
  }
  if (isatty(stdin())) {
    return("terminal")
  }
  .Platform$GUI
}

# One call, run by the bridge's input handler while R is idle at the prompt:
# `header` is the call's JSON header (kind, tool), `body` R's serialize() of
# list(fun, args) (kind "tool") or list(code) (kind "code"). Returns
# list(header = <JSON text>, body = <raw>); never fails. The body of the
# answer is serialize(list(value, output, conditions)).
live_run <- function(header, body) {
  t0 <- proc.time()[["elapsed"]]
  h <- tryCatch(json_decode(header), error = function(e) list())
  name <- if (is_scalar_string(h$tool)) h$tool else "?"
  out <- tryCatch(live_evaluate(h, body), error = function(e) {
    list(status = "failed", message = conditionMessage(e), payload = NULL)
  })
  bytes <- tryCatch(serialize(out$payload, NULL), error = function(e) {
    out$status <<- "failed"
    out$message <<- paste0("the result could not be sent back: ", conditionMessage(e))
    serialize(NULL, NULL)
  })
  open <- live_state$open
  if (is.null(open) || isTRUE(open$echo)) {
    ms <- round(1000 * (proc.time()[["elapsed"]] - t0))
    what <- switch(out$status, ok = "", refused = " refused", paste0(" ", out$status))
    cat("\r[mcplite] ", out$shown %||% name, what, " (", ms, " ms)\n", getOption("prompt", "> "), sep = "")
    utils::flush.console()
  }
  list(header = as.character(fixed_json(list(status = out$status, message = out$message %||% ""))),
       body = bytes)
}

live_evaluate <- function(h, body) {
  kind <- h$kind
  if (identical(kind, "code") && !isTRUE(live_state$open$allow_code)) {
    return(list(status = "refused", payload = NULL, message = paste0(
      "This R session does not allow running code: its user opened it with ",
      "mcp_session(allow_code = FALSE). Nothing was run. The user can allow it with ",
      "mcp_session(allow_code = TRUE)."
    )))
  }
  req <- unserialize(body)
  name <- if (is_scalar_string(h$tool)) h$tool else "?"
  shown <- live_shown(name, kind, req)
  if (identical(kind, "tool") && is_package_tool(req$fun) && !isTRUE(live_state$open$allow_code)) {
    # RULES R10.11: also refused here, whatever the server does.
    return(list(status = "refused", payload = NULL, shown = shown, message = paste0(
      "This R session does not run package functions: its user opened it with ",
      "mcp_session(allow_code = FALSE). Nothing was run."
    )))
  }
  run <- switch(kind,
    tool = function() do.call(req$fun, req$args, quote = TRUE),
    # RULES R10.8: what the code draws comes back as an image, drawn on a
    # device of ours (the user's stays current, R8.9).
    code = function() package_tool_call(function() live_run_code(req$code), function(value) NULL),
    abort_live("unknown kind of call")
  )
  res <- live_capture(run)
  payload <- list(value = res$value, output = res$output, conditions = res$conditions)
  if (isTRUE(res$ok)) {
    list(status = "ok", payload = payload, shown = shown)
  } else {
    list(status = "error", message = res$message, payload = payload, shown = shown)
  }
}

# RULES R10.10: what the console shows of a call: the tool and its
# arguments (`median(x = c(3, 1, 2))`), or the first line of run_r_code's
# code, on one line of at most 160 characters in which control characters
# become "?", so that no call can draw on the user's console (a fake
# prompt, a cleared line).
live_shown <- function(name, kind, req) {
  one_line <- function(x, width) {
    x <- gsub("[[:cntrl:]]", "?", paste(x, collapse = " "))
    if (nchar(x) > width) paste0(substr(x, 1L, width - 3L), "...") else x
  }
  shown <- if (identical(kind, "code")) {
    code <- if (is.character(req$code)) req$code else ""
    lines <- strsplit(paste(code, collapse = "\n"), "\n", fixed = TRUE)[[1L]]
    paste0("run_r_code: ", one_line(lines[1L] %||% "", 120L), if (length(lines) > 1L) " ...")
  } else {
    args <- if (is.list(req$args)) req$args else list()
    parts <- vapply(seq_along(args), function(i) {
      value <- one_line(deparse(args[[i]], width.cutoff = 60L, nlines = 2L), 40L)
      nm <- names(args)[i]
      if (is.null(nm) || !nzchar(nm)) value else paste0(nm, " = ", value)
    }, "")
    paste0(name, "(", paste(parts, collapse = ", "), ")")
  }
  one_line(shown, 160L)
}

# Evaluate f() with its printed output captured (sink) and its warnings and
# messages recorded and muffled, so the user's console shows none of them.
live_capture <- function(f) {
  conditions <- list()
  record <- function(type) {
    function(cnd) {
      conditions[[length(conditions) + 1L]] <<- list(type = type, message = conditionMessage(cnd))
      invokeRestart(if (type == "warning") "muffleWarning" else "muffleMessage")
    }
  }
  # Written to `printed` when closed, with a last line that has no newline
  # (`cat("x")`), which textConnectionValue() leaves out until then.
  printed <- character()
  con <- textConnection("printed", "w", local = TRUE)
  sink(con)
  depth <- sink.number()
  closed <- FALSE
  on.exit({
    while (sink.number() >= depth) sink()
    if (!closed) close(con)
  })
  res <- withCallingHandlers(
    tryCatch(
      list(ok = TRUE, value = f()),
      error = function(e) list(ok = FALSE, message = conditionMessage(e)),
      interrupt = function(e) list(ok = FALSE, message = "interrupted in the R session")
    ),
    warning = record("warning"),
    message = record("message")
  )
  while (sink.number() >= depth) sink()
  close(con)
  closed <- TRUE
  res$output <- printed
  res$conditions <- conditions
  res
}

# run_r_code's evaluation in the session: each expression in the global
# environment, printed when visible, as at the prompt.
live_run_code <- function(code) {
  exprs <- parse(text = code, keep.source = FALSE)
  for (e in exprs) {
    res <- withVisible(eval(e, globalenv()))
    if (res$visible) print(res$value)
  }
  invisible(NULL)
}
