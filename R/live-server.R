# The server's side of live sessions (RULES R10): with session_tools = TRUE,
# server_spec() gains list_r_sessions and select_r_session and the built-in
# session tools (R/live-tools.R), and every tool but the first two is routed:
# to the selected session when there is one, else run here with a note
# saying so.
#
# How a tool reaches the session: its function is sent with serialize(),
# which keeps references to the global environment, to package namespaces
# and to base as references and copies every other environment. So a tool
# defined at the top of the server script (its environment is the server's
# global environment) runs in the session with the session's global
# environment as its enclosure: its free variables are the user's objects.
# A tool made inside a function or local() carries that environment along.
# What the server script defined at top level (helpers, data) is not sent.

live_builtin_names <- c("list_r_sessions", "select_r_session")

# The error of a live-session tool call (the session is busy, gone or
# refused the call; a session tool's argument is wrong): its message is the
# tool error the model reads, its class `mcplite_error_live` (RULES R9.2).
abort_live <- function(...) {
  abort(..., class = "mcplite_error_live", call = NULL)
}

# server_spec() plus the session tools and the routing. `wait`: seconds a
# call waits for a busy session.
live_server_spec <- function(tools, wait) {
  if (is_servable_tool(tools)) {
    tools <- list(tools)
  }
  # The user's tools first on their own, so errors name their positions.
  server_spec(tools)
  state <- new.env(parent = emptyenv())
  state$wait <- wait
  spec <- server_spec(c(unname(tools), live_tools(state)))
  # RULES N7.6: where the server has workers, they run the package tools;
  # the server runs these itself.
  spec$host_tools <- spec$names[!vapply(spec$funs, is_package_tool, logical(1))]
  kinds <- ifelse(spec$names == "run_r_code", "code", "tool")
  for (i in seq_along(spec$names)) {
    if (!spec$names[[i]] %in% live_builtin_names) {
      spec$funs[[i]] <- live_router(spec$names[[i]], spec$funs[[i]], state, kinds[[i]])
    }
  }
  spec$tool_env <- tool_env(spec$names, spec$funs)
  spec$live <- state
  spec
}

# RULES N7.6: a worker of a live-session server serves its package tools
# only (the server runs the others).
live_worker_tools <- function(tools) {
  if (is_servable_tool(tools)) {
    tools <- list(tools)
  }
  Filter(is_package_tool, unname(tools))
}

check_session_tools <- function(session_tools) {
  check_bool(session_tools)
}

check_session_wait <- function(session_wait) {
  if (is.null(session_wait)) {
    return(60)
  }
  check_number(session_wait, min = 0, exclusive_min = TRUE, allow_null = TRUE, what = "a positive number of seconds")
  as.numeric(session_wait)
}

live_router <- function(name, fun, state, kind) {
  force(name)
  force(fun)
  force(state)
  force(kind)
  function(...) live_dispatch(state, name, fun, list(...), kind)
}

live_dispatch <- function(state, name, fun, args, kind, retried = FALSE) {
  conn <- state$conn
  if (is.null(conn)) {
    return(live_here(fun, args, kind, live_note_unselected()))
  }
  if (kind == "tool" && is_package_tool(fun) && !isTRUE(state$allow_code)) {
    # RULES R10.11: a package tool takes its data from its arguments, and a
    # session that does not allow code does not run functions a model
    # steers: it runs here.
    return(live_here(fun, args, kind, paste0(
      "`", name, "` is a package function: it ran in the server's own R process, not in the R ",
      "session ", state$id, ", whose user does not allow running code there ",
      "(mcp_session(allow_code = FALSE))."
    )))
  }
  req <- if (kind == "code") list(code = args$code) else list(fun = fun, args = args)
  body <- tryCatch(serialize(req, NULL), error = function(e) {
    abort_live("`", name, "` could not be sent to the R session: ", conditionMessage(e))
  })
  fields <- list(kind = kind, tool = name)
  res <- engine_live_call(conn, as.character(fixed_json(fields)), body, state$wait)
  id <- state$id
  switch(res$status,
    done = live_outcome(res, kind),
    busy = abort_live(
      "The R session ", id, " stayed busy for ", format(state$wait), " s (its user's own code ",
      "is running, or R is waiting inside a function), so `", name, "` did not run there. ",
      "Try again once the session is back at its prompt, or select another session.",
      call. = FALSE
    ),
    gone = {
      live_forget(state)
      if (isTRUE(res$started)) {
        abort_live("The R session ", id, " went away while it ran `", name, "` (", res$reason,
             "); what the call did there is unknown. No session is selected now.")
      }
      # RULES R10.6: a session opened again (mcp_session() called anew)
      # listens under the same id: select it again and send the call once more.
      if (!retried && !is.null(tryCatch(live_select_session(state, id), error = function(e) NULL))) {
        return(live_dispatch(state, name, fun, args, kind, retried = TRUE))
      }
      abort_live(
        "The selected R session ", id, " is gone (", res$reason, "), so `", name, "` did not run, ",
        "there or anywhere else. No session is selected now: use list_r_sessions and ",
        "select_r_session to pick another one (select_r_session with id \"server\" runs tools in ",
        "the server's own R process).",
        call. = FALSE
      )
    },
    # A cancelled call: end it as an interrupt (RULES C4); a call already
    # running in the session runs to its end there.
    interrupted = invokeRestart("abort"),
    abort_live("mcplite: unknown live-session outcome (a bug).")
  )
}

live_note_unselected <- function() {
  paste0(
    "No R session is selected, so this ran in the server's own R process, not in an R ",
    "session you work in. Use list_r_sessions and select_r_session to run tools in an ",
    "open R session."
  )
}

# The session's answer as if the tool had run here: its printed output goes
# to stderr, its warnings and messages are signalled again, its error is
# raised; the value is returned (run_r_code: the printed output is the
# value).
live_outcome <- function(res, kind) {
  h <- json_decode(res$header)
  status <- h$status %||% "failed"
  if (status %in% c("refused", "failed")) {
    abort_live(if (status == "failed") "The R session could not run the call: ", h$message)
  }
  p <- unserialize(res$body)
  if (kind == "code") {
    # RULES R10.8: what the code printed, then its warnings and messages, as
    # the console would have shown them.
    said <- vapply(p$conditions, function(cnd) {
      if (identical(cnd$type, "warning")) paste0("Warning: ", cnd$message) else sub("\n$", "", cnd$message)
    }, "")
    text <- paste(c(p$output, said), collapse = "\n")
    if (status == "error") {
      abort_live(if (nzchar(text)) paste0(text, "\n"), "Error: ", h$message)
    }
    text <- if (nzchar(text)) text else if (is.null(p$value)) "(the code printed nothing)" else "(the code drew a plot)"
    # What it drew: image blocks after the text (R10.8).
    images <- if (inherits(p$value, "mcplite_tool_result")) {
      Filter(function(b) inherits(b, "mcplite_content_image"), p$value$content)
    }
    if (length(images) == 0L) {
      return(text)
    }
    return(tool_result(content = c(list(content_text(text)), images)))
  }
  if (length(p$output) > 0L) {
    cat(p$output, sep = "\n", file = stderr())
  }
  for (cnd in p$conditions) {
    if (identical(cnd$type, "warning")) warning(cnd$message, call. = FALSE) else message(cnd$message)
  }
  if (status == "error") {
    abort_live(h$message)
  }
  p$value
}

# A routed tool run in the server (no session selected, or the selected one
# gone), with `note` added to its answer. run_r_code never runs here.
live_here <- function(fun, args, kind, note) {
  if (kind == "code") {
    abort_live(
      "No R session is selected, so the code did not run: run_r_code runs code only in an R ",
      "session that is selected (list_r_sessions, select_r_session) and whose user opened it ",
      "with mcp_session(allow_code = TRUE). It never runs in the server.",
      call. = FALSE
    )
  }
  value <- tryCatch(do.call(fun, args, quote = TRUE), error = function(e) {
    abort_live(conditionMessage(e), "\n(", note, ")")
  })
  res <- if (inherits(value, "mcplite_tool_result") || any(startsWith(class(value), "ellmer::"))) {
    normalize_result(value)
  } else {
    tool_result(content = content_text(live_value_text(value)))
  }
  res$content <- c(res$content, list(content_text(note)))
  res
}

# The text a value becomes (RULES J3.1), for live_here().
live_value_text <- function(value) {
  if (inherits(value, "character")) {
    return(paste(as.character(value), collapse = "\n"))
  }
  if (is.null(value)) {
    return("{}")
  }
  if (is.list(value) && !is.object(value) && length(value) == 0L && is.null(names(value))) {
    return("[]")
  }
  tryCatch(as.character(payload_json(value)), error = function(e) {
    abort_live("The tool's return value could not be converted to JSON: ", conditionMessage(e))
  })
}

live_forget <- function(state) {
  if (!is.null(state$conn)) {
    engine_live_disconnect(state$conn)
  }
  state$conn <- NULL
  state$id <- NULL
  state$allow_code <- NULL
}

# The live-session directories that exist (none before any session was
# opened); one that is not private is an error (RULES R10.2).
live_dirs <- function() {
  if (.Platform$OS.type == "windows") {
    return(character()) # R10.9: no sessions there
  }
  engine_live_dirs()
}

live_list_sessions <- function(state) {
  infos <- unlist(lapply(live_dirs(), function(dir) {
    json_decode(engine_live_list(dir, 2))
  }), recursive = FALSE)
  ok <- Filter(function(i) is.null(i$error), infos)
  failed <- Filter(function(i) !is.null(i$error), infos)
  field <- function(i, name, default = NA) if (is.null(i[[name]])) default else i[[name]]
  sessions <- data.frame(
    id = vapply(ok, function(i) as.character(field(i, "id", "")), character(1)),
    label = vapply(ok, function(i) as.character(field(i, "label", NA_character_)), character(1)),
    front_end = vapply(ok, function(i) as.character(field(i, "front_end", "")), character(1)),
    directory = vapply(ok, function(i) as.character(field(i, "wd", "")), character(1)),
    r_version = vapply(ok, function(i) as.character(field(i, "r_version", "")), character(1)),
    busy = vapply(ok, function(i) isTRUE(i$busy), logical(1)),
    waiting_calls = vapply(ok, function(i) as.integer(field(i, "queued", 0L)), integer(1)),
    idle_seconds = vapply(ok, function(i) as.numeric(field(i, "idle_seconds", NA_real_)), numeric(1)),
    allow_code = vapply(ok, function(i) isTRUE(i$allow_code), logical(1)),
    selected = vapply(ok, function(i) identical(as.character(field(i, "id", "")), state$id), logical(1)),
    stringsAsFactors = FALSE
  )
  lines <- if (nrow(sessions) == 0L) {
    paste0(
      "No R session is open for mcplite servers. In an interactive R session, run ",
      "mcplite::mcp_session() (or put `if (interactive()) mcplite::mcp_session()` in .Rprofile)."
    )
  } else {
    c(
      paste0(nrow(sessions), " open R session", if (nrow(sessions) != 1L) "s", ":"),
      sprintf(
        "- %s%s: %s, R %s, in %s; %s%s; run_r_code %s%s",
        sessions$id,
        ifelse(is.na(sessions$label), "", paste0(" (", sessions$label, ")")),
        sessions$front_end, sessions$r_version, sessions$directory,
        ifelse(sessions$busy, "busy (its user's code is running)",
               paste0("idle for ", live_duration(sessions$idle_seconds))),
        ifelse(sessions$waiting_calls > 0L, paste0(", ", sessions$waiting_calls, " call(s) waiting"), ""),
        ifelse(sessions$allow_code, "allowed", "refused"),
        ifelse(sessions$selected, " [selected]", "")
      ),
      if (is.null(state$id)) "No session is selected: call select_r_session with an id."
    )
  }
  if (length(failed) > 0L) {
    lines <- c(lines, vapply(failed, function(i) paste0("(", i$error, ")"), character(1)))
  }
  tool_result(
    content = content_text(paste(lines, collapse = "\n")),
    structured_content = list(sessions = sessions, selected = state$id)
  )
}

live_duration <- function(s) {
  ifelse(is.na(s), "?",
    ifelse(s < 120, paste0(s, " s"),
      ifelse(s < 7200, paste0(floor(s / 60), " min"), paste0(floor(s / 3600), " h"))))
}

live_select_session <- function(state, id) {
  if (!is_scalar_string(id) || !nzchar(id)) {
    abort_live("`id` must be the id of a session, as list_r_sessions shows it.")
  }
  if (identical(id, "server")) {
    live_forget(state)
    return("No session is selected now: tools run in the server's own R process.")
  }
  dirs <- live_dirs()
  # The directory holding that session's socket (the first one otherwise, for
  # the error message).
  has <- file.exists(file.path(dirs, paste0(id, ".sock")))
  dir <- if (any(has)) dirs[has][[1L]] else if (length(dirs)) dirs[[1L]]
  if (is.null(dir)) {
    abort_live("There is no R session \"", id, "\": no R session was ever opened with mcp_session() ",
         "by this user.")
  }
  conn <- tryCatch(engine_live_connect(dir, id, 5), mcplite_error_session = function(e) {
    abort_live(conditionMessage(e), ". Call list_r_sessions to see the open sessions.")
  })
  info <- json_decode(engine_live_info(conn, 2))
  live_forget(state)
  state$conn <- conn
  state$id <- id
  state$allow_code <- isTRUE(info$allow_code)
  paste0(
    "Selected R session ", id, " (", info$front_end %||% "R", ", R ", info$r_version %||% "?",
    ", working directory ", info$wd %||% "?", "). Tools now run in its global environment",
    if (isTRUE(info$busy)) "; it is busy right now, so calls wait until its user's code ends",
    ". run_r_code is ", if (isTRUE(info$allow_code)) "allowed" else "refused", " there."
  )
}
