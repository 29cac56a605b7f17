#' Define a prompt: a message template clients offer their users
#'
#' A prompt is a reusable message, or a short conversation, that an MCP
#' client shows its user (Claude Code and Claude Desktop list them as slash
#' commands) and sends to its model when the user picks it: an analysis
#' recipe, a report request, a review checklist. Give prompts to
#' [mcp_server()] with its `prompts` argument. (The name is not `prompt()`,
#' which would hide [utils::prompt()].)
#'
#' A prompt is a template: its messages may hold `{{name}}` placeholders for
#' its arguments, which the client asks the user for and mcplite fills in
#' when the client gets the prompt. No R code runs then, so a prompt costs
#' nothing to serve and a model that fills in the arguments only ever
#' changes text. Placeholders of names that are not arguments, and single
#' braces, stay as they are. An optional argument the client leaves out
#' becomes empty.
#'
#' @param name The prompt's name, as clients show it (letters, digits, `_`,
#'   `-` and `.`; at most 64 characters).
#' @param description What the prompt is for, in a sentence a user reads.
#' @param messages The prompt's messages: a single string (one message from
#'   the user), a content block ([content_text()], [content_image()],
#'   [content_audio()], [content_resource()], [content_resource_link()]), a
#'   message made by `prompt_message()`, or a list of these, in order.
#' @param arguments `NULL` or a named list of [type_string()] or
#'   [type_enum()] (of strings) values: the arguments the client asks the
#'   user for, with their descriptions; `required = FALSE` makes one
#'   optional. A `type_enum()`'s values are what the client is offered as
#'   the user types (`completion/complete`: the values that start with what
#'   was typed, ignoring case); they do not restrict what may be given.
#' @param content A string or a content block.
#' @param role `"user"` or `"assistant"`: who says the message.
#' @return `prompt_template()`: an object of class `mcplite_prompt`.
#'   `prompt_message()`: an object of class `mcplite_prompt_message`.
#' @seealso [mcp_server()]; RULES section 16 in the sources.
#' @export
#' @examples
#' review <- prompt_template(
#'   "review_model",
#'   "Review a fitted model for a given audience.",
#'   messages = list(
#'     "Review the model `{{model}}` for {{audience}}.",
#'     prompt_message("I will check the residuals, the fit and the assumptions.", role = "assistant")
#'   ),
#'   arguments = list(
#'     model = type_string("Name of the model object."),
#'     audience = type_string("Who reads the review.", required = FALSE)
#'   )
#' )
#' review
#' # Served beside tools: mcp_server(tools, prompts = list(review)); in process:
#' echo <- tool(function(x) x, name = "echo", description = "Echo.",
#'   arguments = list(x = type_string()))
#' handler <- mcp_handler(list(echo), prompts = list(review))
prompt_template <- function(name, description, messages, arguments = NULL) {
  check_string(name)
  if (!grepl("^[A-Za-z0-9_.-]{1,64}$", name)) {
    abort_arg("`name` must be 1 to 64 letters, digits, `_`, `-` or `.`, not \"", name, "\".")
  }
  check_string(description)
  check_required(messages, "a string, a content block, a `prompt_message()` or a list of them.")
  msgs <- prompt_messages(messages)
  args <- prompt_arguments(arguments)
  structure(list(name = name, description = description, messages = msgs, arguments = args),
            class = "mcplite_prompt")
}

#' @rdname prompt_template
#' @export
prompt_message <- function(content, role = "user") {
  role <- check_choice(role, c("user", "assistant"))
  block <- prompt_block(content, arg = "content")
  structure(list(role = role, content = block), class = "mcplite_prompt_message")
}

#' @export
print.mcplite_prompt <- function(x, ...) {
  cat("<mcplite_prompt> ", x$name, ": ", x$description, "\n", sep = "")
  if (length(x$arguments)) {
    req <- vapply(x$arguments, function(a) a$required, TRUE)
    cat("Arguments: ", paste0(names(x$arguments), ifelse(req, "", " (optional)"), collapse = ", "), "\n",
        sep = "")
  }
  cat(length(x$messages), if (length(x$messages) == 1L) "message\n" else "messages\n")
  invisible(x)
}

is_mcplite_prompt <- function(x) inherits(x, "mcplite_prompt")

# The content block of a message: a string becomes content_text().
prompt_block <- function(x, arg, call = caller_env()) {
  if (is_scalar_string(x)) {
    return(content_text(x))
  }
  if (!inherits(x, "mcplite_content")) {
    abort_arg("`", arg, "` must be a string or a content block (`content_text()`, ...), not ", describe(x), ".",
              call = call)
  }
  x
}

# The messages of prompt_template(), as a list of prompt_message()s.
prompt_messages <- function(messages, call = caller_env()) {
  one <- is_scalar_string(messages) || inherits(messages, "mcplite_content") ||
    inherits(messages, "mcplite_prompt_message")
  items <- if (one) list(messages) else messages
  if (!is.list(items) || is.object(items) || length(items) == 0L) {
    abort_arg("`messages` must be a string, a content block, a `prompt_message()` or a non-empty list of ",
              "them, not ", describe(messages), ".", call = call)
  }
  lapply(seq_along(items), function(i) {
    m <- items[[i]]
    if (inherits(m, "mcplite_prompt_message")) {
      return(m)
    }
    prompt_message(prompt_block(m, paste0("messages[[", i, "]]"), call))
  })
}

# The arguments of prompt_template() (and the variables of
# resource_template()): a named list of type_string()s or string type_enum()s.
prompt_arguments <- function(arguments, what = "prompt arguments", call = caller_env()) {
  if (is.null(arguments)) {
    return(list())
  }
  check_named_list(arguments, call = call)
  for (nm in names(arguments)) {
    a <- arguments[[nm]]
    string_enum <- inherits(a, "mcplite_type_enum") && identical(a$value_type, "string")
    if (!(inherits(a, "mcplite_type_string") || string_enum) || isTRUE(a$nullable)) {
      abort_arg("`arguments$", nm, "` must be a `type_string()` or a `type_enum()` of strings ",
                "(", what, " are strings), not ", describe(a), ".", call = call)
    }
  }
  arguments
}

# The prompts of mcp_server(prompts = ) as the bridge reads them (RULES
# Q1): per prompt its name, description, argument names, descriptions and
# whether each is required, the roles of its messages and their blocks as a
# tool result (the engine reads blocks as it reads a tool's).
prompt_specs <- function(prompts, call = caller_env()) {
  if (is.null(prompts)) {
    return(list())
  }
  if (is_mcplite_prompt(prompts)) {
    prompts <- list(prompts)
  }
  if (!is.list(prompts) || is.object(prompts) || !all(vapply(prompts, is_mcplite_prompt, TRUE))) {
    abort_arg("`prompts` must be a prompt made by `prompt_template()` or a list of them, not ", describe(prompts), ".",
              call = call)
  }
  names <- vapply(prompts, function(p) p$name, "")
  if (anyDuplicated(names)) {
    abort_arg("`prompts` must have unique names; repeated: \"", names[duplicated(names)][[1]], "\".", call = call)
  }
  lapply(prompts, function(p) {
    list(
      name = p$name,
      description = p$description,
      arg_names = names(p$arguments) %||% character(),
      arg_descriptions = vapply(p$arguments, function(a) a$description %||% "", ""),
      arg_required = vapply(p$arguments, function(a) isTRUE(a$required), TRUE),
      arg_values = lapply(unname(p$arguments), function(a) as.character(a$values %||% character())),
      roles = vapply(p$messages, function(m) m$role, ""),
      content = tool_result(lapply(p$messages, function(m) m$content))
    )
  })
}
