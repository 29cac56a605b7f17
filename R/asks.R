#' Ask the user or the client's model from inside a tool
#'
#' Call these from inside a tool while a client runs it. `mcp_elicit()` asks
#' the *user* to fill in a small form (MCP elicitation): "overwrite these 3
#' files?", "which sheet?", "your ORCID?". `mcp_sample()` asks the client's
#' *model* for a completion (MCP sampling), with the user's consent and the
#' client's model and credentials, so a tool can summarise, classify or
#' draft text without an API key of its own. Both wait for the answer and
#' return it.
#'
#' Only a client that declared the capability (`elicitation`, `sampling`)
#' can be asked; Claude Code, for one, has elicitation. When the client
#' cannot be asked, when the call is cancelled, or when no answer comes in
#' `timeout` seconds, the function fails with an error of class
#' `mcplite_error_ask` (and, unless you handle it, the tool call fails with
#' that message). Outside a served call (a tool called directly in R, from
#' testthat or through [mcp_handle()]) there is nobody to ask and they fail
#' the same way, so test a tool that asks with a client such as
#' [mcp_connect()].
#'
#' In protocol versions up to 2025-11-25 the question is a request from the
#' server on the call's own stream (over stdio, and over HTTP, where the
#' call is then answered as an event stream), and the tool waits for the
#' answer. Protocol 2026-07-28 has no such requests: the call ends with the
#' question (`input_required`), the client asks its user or model and calls
#' the tool again with the answer, and the tool runs again from the start;
#' this time `mcp_elicit()` returns the answer. Tools run by worker
#' processes ask through the server, in the same way.
#'
#' Ask before you act: a tool that changes things should ask first (in
#' 2026-07-28 whatever it did before the question is done again), and act
#' only on `action == "accept"`. Never ask for passwords, tokens or other
#' secrets: the specification forbids it, and the answer passes through the
#' client.
#'
#' @param message What to ask the user, in a sentence or two.
#' @param schema The form: `NULL` (no fields: a plain accept or decline), or
#'   a [type_object()] whose properties are [type_string()],
#'   [type_number()], [type_integer()], [type_boolean()], [type_enum()]
#'   (a choice) or [type_array()] of a `type_enum()` (several choices), or
#'   [type_from_schema()] for the specification's other fields (`default`,
#'   `format`, `minimum`, titled choices with `oneOf`). Forms are flat: no
#'   nested objects.
#' @param messages The conversation for the model: a single string (one
#'   message from the user), a content block ([content_text()],
#'   [content_image()], [content_audio()]), a [prompt_message()], or a list
#'   of these.
#' @param max_tokens The most tokens the model may produce, a whole number.
#' @param system_prompt `NULL` or a system prompt the client may use.
#' @param temperature `NULL` or a number from 0 to 2.
#' @param timeout Seconds to wait for the answer.
#' @return `mcp_elicit()`: a list with `action` (`"accept"`, `"decline"` or
#'   `"cancel"`) and `content` (a named list of the form's values, `NULL`
#'   unless accepted). `mcp_sample()`: a list with `text` (the reply's text,
#'   `NULL` when it is not text), `content` (the reply's content block, as
#'   the client sent it), `model` and `stop_reason`.
#' @seealso [mcp_progress()], [mcp_log()]; RULES section 18 in the sources.
#' @export
#' @examples
#' clean_up <- tool(
#'   function(dir) {
#'     old <- list.files(dir, pattern = "\\.tmp$", full.names = TRUE)
#'     answer <- mcp_elicit(
#'       paste("Delete", length(old), "temporary files in", dir, "?"),
#'       type_object(keep_newest = type_boolean("Keep the newest file?", required = FALSE))
#'     )
#'     if (answer$action != "accept") {
#'       return("Nothing was deleted.")
#'     }
#'     paste(length(old), "files would be deleted.")
#'   },
#'   name = "clean_up", description = "Delete temporary files, after asking.",
#'   arguments = list(dir = type_string("A directory."))
#' )
#' # Called directly, there is no client to ask:
#' tryCatch(clean_up(tempdir()), mcplite_error_ask = conditionMessage)
mcp_elicit <- function(message, schema = NULL, timeout = 600) {
  check_string(message, allow_empty = FALSE)
  requested <- elicit_schema(schema)
  check_number(timeout, min = 0, exclusive_min = TRUE)
  answer <- ask_client("elicit", list(message = message, requestedSchema = requested), timeout)
  action <- answer$action
  if (!is_scalar_string(action) || !action %in% c("accept", "decline", "cancel")) {
    abort("The client's answer to the question is not an elicitation result (no `action`).",
          class = "mcplite_error_ask")
  }
  content <- if (identical(action, "accept")) answer$content
  list(action = action, content = content)
}

#' @rdname mcp_elicit
#' @export
mcp_sample <- function(messages, max_tokens = 1000, system_prompt = NULL, temperature = NULL, timeout = 600) {
  check_required(messages, "a string, a content block, a `prompt_message()` or a list of them.")
  msgs <- lapply(prompt_messages(messages), function(m) {
    list(role = m$role, content = sampling_block(m$content))
  })
  check_number_whole(max_tokens, min = 1)
  check_string(system_prompt, allow_null = TRUE)
  check_number(temperature, min = 0, max = 2, allow_null = TRUE)
  check_number(timeout, min = 0, exclusive_min = TRUE)
  params <- list(messages = msgs, maxTokens = as.integer(max_tokens))
  params$systemPrompt <- system_prompt
  params$temperature <- temperature
  answer <- ask_client("sample", params, timeout)
  content <- answer$content
  if (!is.list(content)) {
    abort("The client's answer to the request is not a sampling result (no `content`).",
          class = "mcplite_error_ask")
  }
  text <- if (identical(content$type, "text")) content$text
  list(text = text, content = content, model = answer$model, stop_reason = answer$stopReason)
}

# Send a question to the running call's client and return its answer as an
# R list (RULES A1; in a worker process the engine asks, A1.4).
ask_client <- function(kind, params, timeout, call = caller_env()) {
  json <- fixed_json(params)
  answer <- tryCatch(ask_running(kind, json, timeout), mcplite_error_ask = function(e) {
    abort(paste0("Cannot ask the client: ", conditionMessage(e), "."),
          class = "mcplite_error_ask", call = call)
  })
  jsonlite::fromJSON(answer, simplifyVector = FALSE)
}

# The requested schema of an elicitation (RULES A1.1): an object whose
# properties are primitive (or an array of choices), without
# additionalProperties.
elicit_schema <- function(schema, call = caller_env()) {
  if (is.null(schema)) {
    return(list(type = "object", properties = structure(list(), names = character())))
  }
  s <- type_schema(schema, "schema")
  if (!is.list(s) || !identical(s$type, "object") || !is.list(s$properties %||% list())) {
    abort_arg("`schema` must be a `type_object()` (or a `type_from_schema()` of an object), not ",
              describe(schema), ".", call = call)
  }
  s$additionalProperties <- NULL
  if (is.null(s$properties)) {
    s$properties <- structure(list(), names = character())
  }
  for (nm in names(s$properties)) {
    p <- s$properties[[nm]]
    type <- p$type
    flat <- is_scalar_string(type) && type %in% c("string", "number", "integer", "boolean")
    choices <- identical(type, "array") && is.list(p$items) && (!is.null(p$items$enum) || !is.null(p$items$anyOf))
    if (!flat && !choices) {
      abort_arg("`schema$", nm, "` must be a string, number, integer, boolean, enum or an array of enum ",
                "values: forms are flat.", call = call)
    }
  }
  s
}

# A content block of a sampling message, as the protocol writes it.
sampling_block <- function(block, call = caller_env()) {
  switch(block$type,
    text = list(type = "text", text = block$text),
    image = list(type = "image", data = block$data, mimeType = block$mime_type),
    audio = list(type = "audio", data = block$data, mimeType = block$mime_type),
    abort_arg("`messages` may hold text, image and audio blocks, not a ", block$type, " block.", call = call)
  )
}
