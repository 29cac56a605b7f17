# RULES R9.1, R9.2: the argument checks of R/check.R and the conditions of
# R/conditions.R (abort(), abort_arg(), warn(), user_call()).

# The error `expr` raises, or a failure when it raises none.
error_of <- function(expr) {
  err <- tryCatch(
    {
      force(expr)
      NULL
    },
    error = function(e) e
  )
  if (is.null(err)) testthat::fail("no error")
  err
}

# The name of the function a condition's call calls ("" when there is none).
called_name <- function(cnd) {
  call <- conditionCall(cnd)
  if (is.null(call)) {
    return("")
  }
  head <- call[[1L]]
  if (is.call(head) && identical(head[[1L]], as.name("::"))) head <- head[[3L]]
  if (is.symbol(head)) as.character(head) else "<function>"
}

# One bad argument for every exported function that takes arguments: the
# expression, the function the error must name and the argument.
bad_arguments <- list(
  list(quote(content_audio(data = 1, mime_type = "audio/wav")), "content_audio", "data"),
  list(quote(content_audio_file(path = 1)), "content_audio_file", "path"),
  list(quote(content_image(data = "AA==", mime_type = "")), "content_image", "mime_type"),
  list(quote(content_image_file(path = "")), "content_image_file", "path"),
  list(quote(content_plot(NULL, width = 1)), "content_plot", "width"),
  list(quote(content_resource(uri = "")), "content_resource", "uri"),
  list(quote(content_resource_link(uri = "file:///a", name = "")), "content_resource_link", "name"),
  list(quote(content_text(text = 1)), "content_text", "text"),
  list(quote(matrix_to_list(x = 1)), "matrix_to_list", "x"),
  list(quote(mcp_call(x = 1, tool = "echo")), "mcp_call", "x"),
  list(quote(local_mcp_connect(tools = tool(function() 1, "One.", name = "one"), .local_envir = "here")),
       "local_mcp_connect", ".local_envir"),
  list(quote(local_mcp_connect_script(script = 1)), "local_mcp_connect_script", "script"),
  list(quote(launch_server(settings = 1)), "launch_server", "settings"),
  list(quote(mcp_connect(tools = tool(function() 1, "One.", name = "one"), timeout = "soon")), "mcp_connect", "timeout"),
  list(quote(mcp_client_config(script = 1)), "mcp_client_config", "script"),
  list(quote(mcp_close(x = 1)), "mcp_close", "x"),
  list(quote(mcp_connect(command = 1)), "mcp_connect", "command"),
  list(quote(mcp_connect(url = "https://x.invalid/mcp", allow_http = "yes")), "mcp_connect", "allow_http"),
  list(quote(mcp_connect_config(path = 1)), "mcp_connect_config", "path"),
  list(quote(mcp_connect_script(script = 1)), "mcp_connect_script", "script"),
  list(quote(mcp_handle(list(), "{}", signal = "yes")), "mcp_handle", "signal"),
  list(quote(mcp_handler(list(), instructions = 1)), "mcp_handler", "instructions"),
  list(quote(mcp_list_tools(x = 1)), "mcp_list_tools", "x"),
  list(quote(mcp_load_tools(script = 1)), "mcp_load_tools", "script"),
  list(quote(mcp_log("x", level = "loud")), "mcp_log", "level"),
  list(quote(mcp_manifest(list(), path = 1)), "mcp_manifest", "path"),
  list(quote(mcp_progress(progress = "half")), "mcp_progress", "progress"),
  list(quote(prompt_template(name = "a b", description = "d", messages = "m")), "prompt_template", "name"),
  list(quote(prompt_message(content = "m", role = "system")), "prompt_message", "role"),
  list(quote(mcp_server(list(), session_tools = "yes")), "mcp_server", "session_tools"),
  list(quote(mcp_elicit(message = 1)), "mcp_elicit", "message"),
  list(quote(mcp_sample(messages = "m", max_tokens = 0)), "mcp_sample", "max_tokens"),
  list(quote(mcp_list_resources(x = 1)), "mcp_list_resources", "x"),
  list(quote(mcp_list_resource_templates(x = 1)), "mcp_list_resource_templates", "x"),
  list(quote(mcp_read_resource(x = 1, uri = "a://b")), "mcp_read_resource", "x"),
  list(quote(mcp_task_status(x = 1, task = "t")), "mcp_task_status", "x"),
  list(quote(mcp_task_result(x = 1, task = "t")), "mcp_task_result", "x"),
  list(quote(mcp_task_cancel(x = 1, task = "t")), "mcp_task_cancel", "x"),
  list(quote(mcp_list_prompts(x = 1)), "mcp_list_prompts", "x"),
  list(quote(mcp_get_prompt(x = 1, name = "p")), "mcp_get_prompt", "x"),
  list(quote(resource(uri = 1, content = "t")), "resource", "uri"),
  list(quote(mcp_resource_set(x = 1)), "mcp_resource_set", "x"),
  list(quote(mcp_resource_remove(uri = 1)), "mcp_resource_remove", "uri"),
  list(quote(resource_template(uri_template = "x://{a}", content = "t", arguments = 1)), "resource_template",
       "arguments"),
  list(quote(mcp_server_info(x = 1)), "mcp_server_info", "x"),
  list(quote(mcp_session(allow_code = "yes")), "mcp_session", "allow_code"),
  list(quote(mcp_stderr(x = 1)), "mcp_stderr", "x"),
  list(quote(mcp_tools(x = 1)), "mcp_tools", "x"),
  list(quote(package_tools(package = 1)), "package_tools", "package"),
  list(quote(package_resources(package = 1)), "package_resources", "package"),
  list(quote(resource_files(root = 1)), "resource_files", "root"),
  list(quote(tool(fun = 1, description = "d")), "tool", "fun"),
  list(quote(tool_result(is_error = NA)), "tool_result", "is_error"),
  list(quote(type_array(items = 1)), "type_array", "items"),
  list(quote(type_boolean(required = NA)), "type_boolean", "required"),
  list(quote(task_options(ttl = "1")), "task_options", "ttl"),
  list(quote(type_enum(values = list())), "type_enum", "values"),
  list(quote(type_from_schema(text = 1)), "type_from_schema", "text"),
  list(quote(type_integer(nullable = "no")), "type_integer", "nullable"),
  list(quote(type_number(description = 1)), "type_number", "description"),
  list(quote(type_object(.required = 1)), "type_object", ".required"),
  list(quote(type_string(description = NA)), "type_string", "description")
)

test_that("R9.2: every exported function names itself and the argument in a classed error", {
  ns <- asNamespace("mcplite")
  exports <- getNamespaceExports(ns)
  takes_arguments <- exports[vapply(exports, function(f) length(formals(get(f, envir = ns))) > 0L, logical(1))]
  # The table covers every exported function that takes an argument.
  expect_setequal(vapply(bad_arguments, function(x) x[[2L]], character(1)), takes_arguments)
  for (case in bad_arguments) {
    err <- error_of(eval(case[[1L]]))
    label <- paste(deparse(case[[1L]]), collapse = "")
    expect_s3_class(err, "mcplite_error_argument")
    expect_s3_class(err, "mcplite_error")
    expect_identical(called_name(err), case[[2L]], label = label)
    expect_true(grepl(paste0("`", case[[3L]], "`"), conditionMessage(err), fixed = TRUE),
                label = paste(label, "names", case[[3L]], ":", conditionMessage(err)))
  }
})

test_that("R9.2: the call is the user's, however the function was reached", {
  # Checked inside a helper of type_string(): the call is still type_string()'s.
  err <- error_of(type_string(required = NA))
  expect_identical(conditionCall(err), quote(type_string(required = NA)))
  # Called with its namespace, or as a value.
  err <- error_of(mcplite::type_number(nullable = 1))
  expect_identical(conditionCall(err), quote(mcplite::type_number(nullable = 1)))
  err <- error_of(do.call(type_boolean, list(description = 1)))
  expect_identical(conditionCall(err)[[1L]], type_boolean)
  # An exported function mcplite calls itself (mcp_manifest() calls
  # mcp_handler()) is not the user's call.
  err <- error_of(mcp_manifest(list(function(x) x)))
  expect_s3_class(err, "mcplite_error_argument")
  expect_identical(called_name(err), "mcp_manifest")
  # Inside the user's own function, the mcplite function it called.
  f <- function(d) tool(function(x) x, d, name = "f")
  err <- error_of(f(1))
  expect_identical(called_name(err), "tool")
})

test_that("R9.2: R prints the user's call with the message", {
  out <- try(type_string(required = "no"), silent = TRUE)
  expect_match(as.character(out), "^Error in type_string\\(required = \"no\"\\) : ")
})

test_that("R9.1: errors that are not about an argument have no argument class", {
  h <- mcp_handler(list())
  err <- error_of(mcp_handle(h, list(jsonrpc = "2.0", id = 1, method = "ping", params = new.env())))
  expect_s3_class(err, "mcplite_error_json")
  expect_false(inherits(err, "mcplite_error_argument"))
  expect_identical(called_name(err), "mcp_handle")
})

test_that("R9.2: the check helpers accept what they promise and name what they refuse", {
  f <- function(x, ...) check_string(x, ...)
  expect_identical(f("a"), "a")
  expect_null(f(NULL, allow_null = TRUE))
  expect_error(f(""), NA)
  expect_error(f("", allow_empty = FALSE), "`x` must be a single non-empty string, not the empty string \"\"\\.",
               class = "mcplite_error_argument")
  expect_error(f(NA_character_), "`x` must be a single string, not `NA_character_`\\.")
  expect_error(f(1, allow_null = TRUE), "`x` must be NULL or a single string, not the number 1\\.")
  expect_error(f(I("a"), allow_class = FALSE), "`x` must be a single string")
  expect_error(f(1, what = "a file path"), "`x` must be a file path, not the number 1\\.")

  g <- function(flag, ...) check_bool(flag, ...)
  expect_true(g(TRUE))
  expect_error(g(NA), "`flag` must be TRUE or FALSE, not `NA`\\.", class = "mcplite_error_argument")
  expect_error(g("yes", allow_null = TRUE), "`flag` must be NULL, TRUE or FALSE, not the string \"yes\"\\.")

  w <- function(n, ...) check_number_whole(n, ...)
  expect_identical(w(3L), 3L)
  expect_identical(w(3, min = 1, max = 3), 3)
  expect_error(w(1.5), "`n` must be a whole number, not the number 1\\.5\\.")
  expect_error(w(0, min = 1, max = 1024), "`n` must be a whole number from 1 to 1024, not the number 0\\.")
  expect_error(w(-1, min = 0), "`n` must be a whole number of at least 0")
  expect_error(w(Inf), "`n` must be a whole number, not `Inf`\\.")
  expect_error(w(factor("a")), "`n` must be a whole number")

  d <- function(s, ...) check_number(s, ...)
  expect_identical(d(0.5, min = 0, max = 1), 0.5)
  expect_identical(d(Inf, allow_infinite = TRUE), Inf)
  expect_error(d(Inf), "`s` must be a single finite number, not `Inf`\\.")
  expect_error(d(0, min = 0, exclusive_min = TRUE, what = "a positive number"),
               "`s` must be a positive number, not the number 0\\.")

  expect_identical(check_character(c("a", "b")), c("a", "b"))
  expect_error(check_character(c("a", NA)), "must be a character vector without NA")
  expect_error(check_character(character(), allow_empty = FALSE), "must be a character vector without NA")
  expect_error(check_function(1, arg = "fun"), "`fun` must be a function, not the number 1\\.")
  expect_error(check_named_list(list(1), arg = "meta"), "`meta` must be a named list with unique, non-empty names")
  expect_identical(check_choice(c("a", "b"), c("a", "b"), arg = "by"), "a")
  expect_error(check_choice("c", c("a", "b"), arg = "by"), "`by` must be one of \"a\" or \"b\", not \"c\"\\.")

  h <- function(x) check_required(x, "something to work on.")
  expect_error(h(), "`x` is required: something to work on\\.", class = "mcplite_error_argument")
  expect_null(h(1))

  k <- function(...) check_dots_empty(...)
  expect_error(k(call = 1), "`...` must be empty", class = "mcplite_error_argument")
  expect_null(k())
})

test_that("R9.2: caller_arg() names what the caller passed", {
  f <- function(x) caller_arg(x)
  expect_identical(f(some_name), "some_name")
  expect_identical(f(a$b), "a$b")
})

test_that("R9.1: duplicates are gone: one missing-argument test, one TRUE/FALSE check", {
  ns <- asNamespace("mcplite")
  for (gone in c("missing_arg", "check_type_required", "check_type_nullable", "check_type_description",
                 "check_name_vector", "check_pixels", "check_signal", "check_instructions")) {
    expect_false(exists(gone, envir = ns, inherits = FALSE), label = gone)
  }
  expect_true(is_missing_arg(formals(function(x) x)$x))
  expect_false(is_missing_arg(quote(x)))
})

test_that("R9.1: mcplite's warnings are classed and name the user's call", {
  f <- function() warn("careful", class = "mcplite_warning_client")
  w <- tryCatch(f(), warning = function(w) w)
  expect_s3_class(w, "mcplite_warning_client")
  expect_s3_class(w, "mcplite_warning")
  expect_null(conditionCall(w))
  expect_warning(
    mcp_client_config(url = "http://192.0.2.1:8080/mcp", client = "claude_code", token = strrep("a1", 10)),
    "plain http://", class = "mcplite_warning_insecure"
  )
})

test_that("R9.2: a tool mcplite made, called by a server, fails with its message (no call is looked for forever)", {
  # The tools of mcp_tools() are closures of mcplite that call mcp_call(); a
  # server calls them in an environment that is no frame, which R reports as
  # the frame's own parent. Finding the user's call must stop there.
  failing <- tool(function(message) stop(message), "Fails.", name = "fail",
                  arguments = list(message = type_string()))
  upstream <- mcp_connect(tools = failing)
  on.exit(mcp_close(upstream))
  h <- mcp_handler(mcp_tools(upstream))
  setTimeLimit(elapsed = 60, transient = TRUE)
  on.exit(setTimeLimit(elapsed = Inf), add = TRUE)
  res <- jsonlite::fromJSON(mcp_handle(h, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = "fail", arguments = list(message = "deep"),
                  `_meta` = list(`io.modelcontextprotocol/protocolVersion` = "2026-07-28",
                                 `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())))
  )), simplifyVector = FALSE)
  expect_true(res$result$isError)
  expect_identical(res$result$content[[1]]$text, "deep")
})
