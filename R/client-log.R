# A server's log messages relayed to R during mcp_call() (RULES K13): the
# connection asks for messages at `log_level` or above (logging/setLevel
# after `initialize`; in 2026-07-28 the `_meta` of every request), and each
# `notifications/message` that arrives while a call is awaited is signalled
# as an R message of class `mcplite_server_log`.

check_log_level <- function(x, arg = caller_arg(x), call = caller_env()) {
  if (is.null(x)) {
    return(NULL)
  }
  check_choice(x, log_levels, arg = arg, call = call)
}

# One log message: `params` of notifications/message. Its `data` is shown as
# it is when a string, else as compact JSON.
relay_server_log <- function(x, params) {
  level <- if (is_scalar_string(params$level)) params$level else "info"
  logger <- if (is_scalar_string(params$logger)) params$logger
  data <- params$data
  text <- if (is_scalar_string(data)) data else as.character(payload_json(data))
  cnd <- structure(
    class = c("mcplite_server_log", "message", "condition"),
    list(
      message = paste0("[", x$name, if (!is.null(logger)) paste0(" ", logger), "] ", level, ": ", text, "\n"),
      call = NULL, server = x$name, level = level, logger = logger, data = data
    )
  )
  message(cnd)
}
