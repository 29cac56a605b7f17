# The tools session_tools = TRUE adds (RULES R10.7). list_r_sessions and
# select_r_session run in the server; the others are routed like the
# server's own tools (R/live-server.R), so they run in the selected session,
# where their functions (closures of this namespace, sent by reference to
# it) read the session's global environment. All of them only read, except
# run_r_code, which the session refuses unless its user allowed it.

live_tools <- function(state) {
  # A read-only tool: `description` given as pieces of one sentence.
  reader <- function(fun, name, title, description, arguments = list()) {
    tool(fun, name = name, description = paste(description, collapse = " "), arguments = arguments,
         annotations = list(title = title, read_only_hint = TRUE, destructive_hint = FALSE,
                            open_world_hint = FALSE))
  }
  list(
    reader(function() live_list_sessions(state), "list_r_sessions", "List R sessions", c(
      "List the interactive R sessions of this user that are open to this server",
      "(each opened with mcplite::mcp_session()): id, label, what R runs in, working",
      "directory, R version, whether it is idle or busy, whether it allows run_r_code,",
      "and which one is selected."
    )),
    reader(function(id) live_select_session(state, id), "select_r_session", "Select an R session", c(
      "Select the R session that tool calls run in, by its id from list_r_sessions.",
      "From then on every tool of this server (list_r_objects, describe_r_object,",
      "read_r_help and the server's own tools) runs in that session's global",
      "environment, where the user's data and models are. Use the id \"server\" to",
      "run tools in the server's own R process again."
    ), list(id = type_string("The session's id, as list_r_sessions shows it."))),
    reader(live_list_objects, "list_r_objects", "List R objects", c(
      "List the objects in the global environment of the selected R session: name,",
      "class, size in memory and dimensions (rows x columns, or length)."
    ), list(pattern = type_string("Only names matching this regular expression (optional).", required = FALSE))),
    reader(live_describe_object, "describe_r_object", "Describe an R object", c(
      "Describe one object of the selected R session's global environment by name:",
      "a data frame's columns (class, missing values) and first rows as a table, a",
      "fitted model's summary, or a str() outline of anything else."
    ), list(
      name = type_string("The object's name, as list_r_objects shows it."),
      rows = type_integer("Rows of a data frame to show (1 to 100; default 6).", required = FALSE)
    )),
    reader(live_read_help, "read_r_help", "Read R help", c(
      "Read an R help page as text, from the packages installed for the selected R",
      "session, e.g. topic \"lm\" or topic \"mutate\" with package \"dplyr\"."
    ), list(
      topic = type_string("The help topic (a function or dataset name)."),
      package = type_string("The package documenting it (optional).", required = FALSE)
    )),
    tool(
      function(code) NULL,
      name = "run_r_code",
      description = paste(
        "Run R code in the selected R session's global environment, as if typed at its",
        "prompt, and return what it prints, its warnings and messages, and what it draws",
        "(as PNG images). Only in a session whose user allowed it",
        "(mcp_session(allow_code = TRUE)); other sessions refuse without running",
        "anything, and it never runs in the server."
      ),
      arguments = list(code = type_string("R code; each top-level value is printed when visible.")),
      annotations = list(title = "Run R code", read_only_hint = FALSE, destructive_hint = TRUE,
                         open_world_hint = TRUE)
    )
  )
}

live_list_objects <- function(pattern = NULL) {
  env <- globalenv()
  nms <- ls(env, pattern = if (is.null(pattern)) "" else pattern, sorted = TRUE)
  rows <- lapply(nms, function(n) {
    if (bindingIsActive(n, env)) {
      return(list(n, "active binding", NA_real_, ""))
    }
    x <- get(n, envir = env, inherits = FALSE)
    list(n, paste(class(x), collapse = ", "), as.numeric(utils::object.size(x)), live_dims(x))
  })
  objects <- data.frame(
    name = vapply(rows, `[[`, "", 1L),
    class = vapply(rows, `[[`, "", 2L),
    bytes = vapply(rows, `[[`, 0, 3L),
    dimensions = vapply(rows, `[[`, "", 4L),
    stringsAsFactors = FALSE
  )
  text <- if (nrow(objects) == 0L) {
    "The global environment has no objects."
  } else {
    shown <- objects
    shown$bytes <- vapply(objects$bytes, live_size, "")
    names(shown)[3L] <- "size"
    rows_markdown(shown)
  }
  tool_result(content = content_text(text), structured_content = list(objects = objects))
}

live_dims <- function(x) {
  d <- dim(x)
  if (!is.null(d)) {
    return(paste(d, collapse = " x "))
  }
  if (is.vector(x) || is.factor(x) || is.list(x)) {
    return(paste("length", length(x)))
  }
  ""
}

live_size <- function(bytes) {
  if (is.na(bytes)) {
    return("")
  }
  format(structure(bytes, class = "object_size"), units = "auto", standard = "SI")
}

live_describe_object <- function(name, rows = 6L) {
  env <- globalenv()
  if (!is_scalar_string(name) || !nzchar(name) || !exists(name, envir = env, inherits = FALSE)) {
    abort_live("There is no object ", if (is_scalar_string(name)) paste0("`", name, "` "),
         "in this R session's global environment; list_r_objects shows the objects.")
  }
  if (!is.numeric(rows) || length(rows) != 1L || is.na(rows) || rows < 1 || rows > 100) {
    abort_live("`rows` must be a whole number from 1 to 100.")
  }
  x <- get(name, envir = env, inherits = FALSE)
  head_line <- paste0(
    "`", name, "`: ", paste(class(x), collapse = ", "),
    if (nzchar(live_dims(x))) paste0(", ", live_dims(x)),
    ", ", live_size(as.numeric(utils::object.size(x)))
  )
  body <- if (is.data.frame(x)) {
    cols <- data.frame(
      column = names(x),
      class = vapply(x, function(col) paste(class(col), collapse = ", "), "", USE.NAMES = FALSE),
      missing = vapply(x, function(col) sum(is.na(col)), 0, USE.NAMES = FALSE),
      stringsAsFactors = FALSE
    )
    c("Columns:", rows_markdown(cols), "", paste0("First ", min(rows, nrow(x)), " rows:"),
      rows_markdown(utils::head(as.data.frame(x), rows)))
  } else if (inherits(x, "htest")) {
    utils::capture.output(print(x))
  } else if (live_is_model(x)) {
    utils::capture.output(print(summary(x)))
  } else {
    utils::capture.output(utils::str(x, max.level = 2L, list.len = 30L, vec.len = 4L))
  }
  live_clip(c(head_line, "", body))
}

live_is_model <- function(x) {
  inherits(x, c("lm", "glm", "nls", "aov", "lme", "merMod", "coxph", "survreg", "gam", "loess",
                "Arima", "polr", "multinom")) ||
    (is.list(x) && !is.null(x[["call"]]) && !is.null(x[["coefficients"]]))
}

# At most 300 lines, saying so when more were cut.
live_clip <- function(lines, max = 300L) {
  if (length(lines) > max) {
    lines <- c(lines[seq_len(max)], paste0("[", length(lines) - max, " more lines not shown]"))
  }
  paste(lines, collapse = "\n")
}

live_read_help <- function(topic, package = NULL) {
  if (!is_scalar_string(topic) || !nzchar(topic)) {
    abort_live("`topic` must be a help topic such as \"lm\".")
  }
  paths <- if (is.null(package)) {
    as.character(utils::help((topic)))
  } else {
    if (!is_scalar_string(package) || !nzchar(package)) {
      abort_live("`package` must be a package name such as \"stats\".")
    }
    as.character(tryCatch(utils::help((topic), package = (package)), error = function(e) character()))
  }
  if (length(paths) == 0L) {
    abort_live("No help page for \"", topic, "\"", if (!is.null(package)) paste0(" in package ", package),
         " among the packages this R session can find.")
  }
  if (length(paths) > 1L) {
    abort_live("\"", topic, "\" is documented in several packages (",
         paste(basename(dirname(dirname(paths))), collapse = ", "),
         "): call read_r_help again with `package`.")
  }
  pkg_dir <- dirname(dirname(paths))
  file <- basename(paths)
  db <- new.env(parent = emptyenv())
  # The installed help database, one page read (not the whole database).
  lazyLoad(file.path(pkg_dir, "help", basename(pkg_dir)), envir = db, filter = function(n) n == file)
  rd <- get(file, envir = db)
  text <- utils::capture.output(tools::Rd2txt(rd, out = "", options = list(underline_titles = FALSE)))
  live_clip(text, max = 600L)
}
