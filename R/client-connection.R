# What an MCP client connection holds, and the settings it is made with
# (R/client.R has the exported functions).

# --- Connection methods --------------------------------------------------------
# The one place that knows what a connection holds: an environment with the
# engine's connection (`ptr`, rust/mcplite-r/src/client.rs), its `name`,
# `transport` ("stdio", "http", "memory"), `target` and default `timeout`. Every
# exported function uses a connection only through these.

new_connection <- function(ptr, name, transport, target, timeout) {
  conn <- new.env(parent = emptyenv())
  conn$ptr <- ptr
  conn$name <- name
  conn$transport <- transport
  conn$target <- target
  conn$timeout <- timeout
  class(conn) <- "mcplite_connection"
  conn
}

conn_info <- function(x) client_info(x$ptr)
conn_check_open <- function(x) client_check_open(x$ptr)
conn_list_tools <- function(x, timeout) client_list_tools(x$ptr, timeout)
conn_input_schema <- function(x, tool, timeout) client_input_schema(x$ptr, tool, timeout)
conn_call <- function(x, tool, args_json, progress, timeout, max_time, task = "auto") {
  if (identical(x$transport, "memory")) {
    return(memory_call(x, function() client_call(x$ptr, tool, args_json, progress, timeout, max_time, task)))
  }
  client_call(x$ptr, tool, args_json, progress, timeout, max_time, task)
}
# A request about a task of the server (RULES K14.3): tasks/get,
# tasks/result or tasks/cancel; its result.
conn_task <- function(x, method, id, timeout, responses = NULL) client_task(x$ptr, method, id, responses, timeout)
conn_wait <- function(x, id) client_wait(x$ptr, id)
# The functions that answer the server's questions (RULES K12).
conn_set_answers <- function(x, elicitation, sampling) {
  x$elicitation <- elicitation
  x$sampling <- sampling
  x
}
conn_cancel <- function(x, id, reason) client_cancel(x$ptr, id, reason)
conn_close <- function(x) client_close(x$ptr)
conn_stderr <- function(x) client_stderr(x$ptr)

# Tools hidden and blocked (`ignore_tools` of a configuration file): names
# where `*` stands for any characters.
conn_set_ignored <- function(x, patterns) {
  x$ignore_tools <- patterns
  invisible(x)
}
conn_ignores <- function(x, tool) {
  patterns <- x$ignore_tools
  if (length(patterns) == 0L) {
    return(rep(FALSE, length(tool)))
  }
  rx <- paste0("^(", paste(vapply(patterns, glob_regex, character(1)), collapse = "|"), ")$")
  grepl(rx, tool, perl = TRUE)
}

# A name pattern with `*` wildcards as a regular expression (everything else
# literal).
glob_regex <- function(pattern) {
  parts <- strsplit(pattern, "*", fixed = TRUE)[[1L]]
  if (endsWith(pattern, "*")) parts <- c(parts, "")
  parts <- gsub("([][{}()|^$.+?\\\\])", "\\\\\\1", parts, perl = TRUE)
  paste(parts, collapse = ".*")
}

is_connection <- function(x) inherits(x, "mcplite_connection") && is.environment(x)

is_connection_list <- function(x) {
  is.list(x) && !is.object(x) && length(x) > 0L && all(vapply(x, is_connection, logical(1)))
}

check_connection <- function(x, open = TRUE) {
  if (!is_connection(x)) {
    abort_arg("`x` must be a connection made by `mcp_connect()`, not ", describe(x), ".")
  }
  if (open) {
    conn_check_open(x)
  }
  invisible(x)
}

client_versions <- function() protocol_constants()$client_versions

check_protocol <- function(protocol) {
  if (!is_scalar_string(protocol) || !protocol %in% c("auto", client_versions())) {
    abort_arg("`protocol` must be \"auto\" or one of ",
              paste0("\"", client_versions(), "\"", collapse = ", "), ", not ",
              if (is_scalar_string(protocol)) paste0("\"", protocol, "\"") else describe(protocol), ".")
  }
  protocol
}

check_connection_name <- function(name, default) {
  if (is.null(name)) {
    return(default)
  }
  check_string(name, allow_null = TRUE, allow_empty = FALSE)
  name
}

probe_timeout <- function() {
  v <- getOption("mcplite.client_probe_timeout", 5)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v <= 0) {
    abort("Option `mcplite.client_probe_timeout` must be a positive number of seconds, not ",
          describe(v), ".")
  }
  as.double(v)
}

max_message <- function() {
  v <- getOption("mcplite.client_max_message", 64 * 1024^2)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 65536) {
    abort("Option `mcplite.client_max_message` must be a number of bytes of at least 65536, not ",
          describe(v), ".")
  }
  as.double(v)
}

client_version <- function() server_version()

# Environment variables a server inherits (see ?mcp_connect).
inherited_env_names <- c(
  "HOME", "USER", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LANGUAGE",
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
  "http_proxy", "https_proxy", "no_proxy", "all_proxy",
  "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
  "R_LIBS", "R_LIBS_USER", "R_LIBS_SITE"
)

inherited_env <- function() {
  env <- Sys.getenv()
  keep <- names(env) %in% inherited_env_names | grepl("^(LC_|XDG_[A-Z_]+_(HOME|DIR|DIRS)$)", names(env))
  vapply(env[keep], identity, character(1), USE.NAMES = TRUE)
}
