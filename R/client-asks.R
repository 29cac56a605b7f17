# A server's questions to an mcp_connect() connection during a tool call
# (RULES K12): the connection's `elicitation` and `sampling` functions answer
# them. The engine hands each question to mcp_call()'s loop (an event of
# status "ask" in the legacy era, "input" for a 2026-07-28 input_required
# answer); the answers go back through client_answer() and client_retry().

check_ask_handler <- function(x, arg = caller_arg(x), call = caller_env()) {
  if (is.null(x)) {
    return(invisible(NULL))
  }
  if (!is.function(x) || (!"..." %in% names(formals(x)) && length(formals(x)) < 1L &&
                            !is.primitive(x))) {
    abort_arg("`", arg, "` must be NULL or a function of one argument (the question), not ", describe(x), ".",
              call = call)
  }
  invisible(x)
}

# RULES K12.1: the capabilities object the client declares, as JSON text.
client_capabilities_json <- function(elicitation, sampling) {
  parts <- c(if (!is.null(elicitation)) "\"elicitation\":{\"form\":{}}",
             if (!is.null(sampling)) "\"sampling\":{}")
  paste0("{", paste(parts, collapse = ","), "}")
}

# The next event of call `id` after a question event `ev` was answered.
answer_event <- function(x, ev) {
  if (identical(ev$status, "ask")) {
    a <- answer_question(x, ev$value$method, ev$value$params)
    return(client_answer(x$ptr, ev$id, ev$value$reply, a, 0, ""))
  }
  keys <- names(ev$value)
  if (length(keys) == 0L) {
    return(client_retry(x$ptr, ev$id, "{}"))
  }
  bodies <- vapply(ev$value, function(r) answer_question(x, r$method, r$params), character(1))
  keys <- vapply(keys, function(k) as.character(fixed_json(k)), character(1))
  client_retry(x$ptr, ev$id, paste0("{", paste0(keys, ":", bodies, collapse = ","), "}"))
}

# One question: the result object the connection's function makes of it, as
# JSON text.
answer_question <- function(x, method, params) {
  switch(method,
    "elicitation/create" = answer_elicitation(x, params),
    "sampling/createMessage" = answer_sampling(x, params),
    abort("MCP server `", x$name, "` asked `", method, "`, which this connection does not answer.",
          class = c("mcplite_error_protocol", "mcplite_error_client"), call = NULL)
  )
}

# RULES K12.4. The function gets list(message, schema, defaults, server);
# a named list accepts (the schema's defaults fill what it leaves out),
# "decline" or NULL declines, "cancel" cancels.
answer_elicitation <- function(x, params) {
  schema <- params$requestedSchema
  defaults <- elicitation_defaults(schema)
  request <- list(message = params$message %||% "", schema = schema, defaults = defaults, server = x$name)
  got <- x$elicitation(request)
  if (is.null(got) || identical(got, "decline")) {
    return("{\"action\":\"decline\"}")
  }
  if (identical(got, "cancel")) {
    return("{\"action\":\"cancel\"}")
  }
  if (!is.list(got) || is.object(got) || (length(got) > 0L && !is_named_list(got, empty_ok = FALSE))) {
    abort("The `elicitation` function of MCP connection `", x$name, "` must return a named list (the answer), ",
          "\"decline\", \"cancel\" or NULL, not ", describe(got), ".",
          class = c("mcplite_error_ask_answer", "mcplite_error_client"), call = NULL)
  }
  content <- defaults
  content[names(got)] <- got
  body <- arguments_json(content, if (is.list(schema)) schema)
  paste0("{\"action\":\"accept\",\"content\":", body, "}")
}

# The `default` of each property of a requested schema, by name.
elicitation_defaults <- function(schema) {
  props <- if (is.list(schema)) schema$properties
  if (!is.list(props) || length(props) == 0L) {
    return(structure(list(), names = character()))
  }
  d <- lapply(props, function(p) if (is.list(p)) p[["default"]])
  d[!vapply(d, is.null, logical(1))]
}

# RULES K12.5. The function gets list(messages, system_prompt, max_tokens,
# params, server); it returns the reply's text, or a list with `text` and
# optionally `model` and `stop_reason`.
answer_sampling <- function(x, params) {
  request <- list(messages = params$messages %||% list(), system_prompt = params$systemPrompt,
                  max_tokens = params$maxTokens, params = params, server = x$name)
  got <- x$sampling(request)
  if (is_scalar_string(got)) {
    got <- list(text = got)
  }
  if (!is.list(got) || is.object(got) || !is_scalar_string(got$text) ||
      (!is.null(got$model) && !is_scalar_string(got$model)) ||
      (!is.null(got$stop_reason) && !is_scalar_string(got$stop_reason))) {
    abort("The `sampling` function of MCP connection `", x$name, "` must return a single string (the reply) ",
          "or a list with `text` (and optionally `model` and `stop_reason`), not ", describe(got), ".",
          class = c("mcplite_error_ask_answer", "mcplite_error_client"), call = NULL)
  }
  payload_json_impl(list(
    role = "assistant",
    content = list(type = "text", text = got$text),
    model = got$model %||% "r-function",
    stopReason = got$stop_reason %||% "endTurn"
  ), FALSE)
}
