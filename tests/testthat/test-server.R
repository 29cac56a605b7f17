add_numbers <- tool(
  function(x, y) x + y,
  name = "add_numbers",
  description = "Add two numbers and return the result.",
  arguments = list(x = type_number("First number."), y = type_number("Second number.")),
  annotations = list(title = "Add", read_only_hint = TRUE)
)

init_msg <- function(version = "2025-06-18", id = 1) {
  sprintf(
    '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    id, version
  )
}

call_msg <- function(name, args = "{}", id = 2) {
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}', id, name, args)
}

modern <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'

call_result <- function(session, name, args = "{}") {
  jsonlite::fromJSON(mcp_handle(session, call_msg(name, args)), simplifyVector = FALSE)$result
}

test_that("mcp_server() checks its arguments before any I/O", {
  expect_error(mcp_server(session_tools = FALSE), class = "mcplite_error_argument", regexp = "nothing to serve")
  expect_error(mcp_server(add_numbers, instructions = 1), class = "mcplite_error", regexp = "`instructions`")
  expect_error(mcp_server(add_numbers, instructions = NA_character_), class = "mcplite_error", regexp = "`instructions`")
  expect_error(mcp_server("no-such-tools.R"), class = "mcplite_error_argument", regexp = "existing .R file")
  expect_error(mcp_server(function(x) x), class = "mcplite_error", regexp = "`tools`")
  expect_error(mcp_server(list(add_numbers, 1)), class = "mcplite_error", regexp = "`tools\\[\\[2\\]\\]`")
  expect_error(
    mcp_server(list(add_numbers, add_numbers, add_numbers)),
    class = "mcplite_error", regexp = "repeated: \"add_numbers\"\\."
  )
  withr::local_options(mcplite.json.na = "nope")
  expect_error(mcp_server(add_numbers), class = "mcplite_error", regexp = "`mcplite.json.na`")
})

test_that("a single tool or a list (names ignored) is accepted", {
  s1 <- mcp_handler(add_numbers)
  s2 <- mcp_handler(list(a = add_numbers))
  expect_s3_class(s1, "mcplite_handler")
  expect_identical(s1$spec$names, "add_numbers")
  expect_identical(s2$spec$names, "add_numbers")
  expect_identical(mcp_handler(list())$spec$names, character())
  expect_output(print(s1), "1 tool")
})

test_that("L5.2: page_size cuts every listing into pages that clients follow", {
  tools <- lapply(1:5, function(i) tool(function() i, paste("Tool", i), name = paste0("t", i)))
  docs <- lapply(1:3, function(i) resource(paste0("docs://", i), paste("Page", i)))
  handler <- mcp_handler(tools, resources = docs, page_size = 2)
  page <- function(method, cursor = NULL) {
    jsonlite::parse_json(mcp_handle(handler, list(jsonrpc = "2.0", id = 1L, method = method,
      params = c(list(`_meta` = modern_meta()), if (!is.null(cursor)) list(cursor = cursor)))))
  }
  first <- page("tools/list")
  expect_identical(vapply(first$result$tools, function(t) t$name, ""), c("t1", "t2"))
  expect_identical(first$result$nextCursor, "page-1")
  last <- page("tools/list", "page-2")
  expect_identical(vapply(last$result$tools, function(t) t$name, ""), "t5")
  expect_null(last$result$nextCursor)
  expect_identical(page("resources/list", "page-2")$error$message, "Invalid params: invalid cursor")
  # The R client follows the pages: everything, once, in order.
  client <- local_mcp_connect(tools = handler)
  expect_named(mcp_list_tools(client), paste0("t", 1:5))
  expect_named(mcp_list_resources(client), paste0("docs://", 1:3))
  # mcp_server() reads MCPLITE_PAGE_SIZE when the argument is NULL;
  # mcp_handler() never does: without the argument, one page.
  withr::local_envvar(MCPLITE_PAGE_SIZE = "4")
  expect_identical(mcplite:::page_size_option(NULL), 4)
  expect_null(mcp_handler(tools)$spec$page_size)
  expect_null(jsonlite::parse_json(mcp_handle(mcp_handler(tools), list(jsonrpc = "2.0", id = 1L,
    method = "tools/list", params = list(`_meta` = modern_meta()))))$result$nextCursor)
  for (bad in list(0, 1.5, "2", c(1, 2), NA)) {
    expect_error(mcp_handler(tools, page_size = bad), "`page_size` must be NULL or a whole number of items from 1 up",
                 class = "mcplite_error_argument")
  }
  withr::local_envvar(MCPLITE_PAGE_SIZE = "many")
  expect_error(mcp_server(tools), "`MCPLITE_PAGE_SIZE` must be", class = "mcplite_error_argument")
})

test_that("mcp_handle() answers exactly like the stdio server (L9)", {
  s <- mcp_handler(add_numbers, instructions = "Arithmetic helpers.")
  v <- as.character(utils::packageVersion("mcplite"))
  expect_identical(
    mcp_handle(s, init_msg()),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18",',
      '"capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcplite","version":"', v,
      '"},"instructions":"Arithmetic helpers."}}'
    )
  )
  expect_null(mcp_handle(s, '{"jsonrpc":"2.0","method":"notifications/initialized"}'))
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"add_numbers","description":"Add two numbers and return the result.",',
      '"inputSchema":{"type":"object","properties":{"x":{"type":"number","description":"First number."},',
      '"y":{"type":"number","description":"Second number."}},"required":["x","y"],"additionalProperties":false},',
      '"annotations":{"title":"Add","readOnlyHint":true}}]}}'
    )
  )
  expect_identical(
    mcp_handle(s, call_msg("add_numbers", '{"x":1.5,"y":2.25}', id = 3)),
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3.75"}],"isError":false}}'
  )
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}'),
    '{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}'
  )
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":6,"method":"resources/list"}'),
    '{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}'
  )
})

test_that("mcp_handle() accepts R lists and keeps state only in sessions", {
  s <- mcp_handler(add_numbers)
  out <- mcp_handle(s, list(jsonrpc = "2.0", id = 7L, method = "ping"))
  expect_identical(out, '{"jsonrpc":"2.0","id":7,"result":{}}')
  # Tools instead of a session: fresh state every time.
  expect_match(mcp_handle(add_numbers, init_msg()), '"result"')
  expect_match(
    mcp_handle(add_numbers, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    "server not initialized", fixed = TRUE
  )
  # Modern requests need no state.
  out <- mcp_handle(add_numbers, sprintf(
    '{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add_numbers","arguments":{"x":2,"y":3},%s}}',
    modern
  ))
  expect_match(out, '"resultType":"complete","content":[{"type":"text","text":"5"}],"isError":false', fixed = TRUE)
  expect_error(mcp_handle(s), class = "mcplite_error", regexp = "`message`")
  expect_error(mcp_handle(s, 1), class = "mcplite_error", regexp = "`message`")
  expect_null(mcp_handle(s, "   "))
  expect_identical(mcp_handle(s, "{bad"), '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
})

test_that("ordinary return values become one text block (J3)", {
  ret <- function(value) tool(function() value, "Return a fixed value.", name = "ret")
  text_of <- function(value) {
    s <- mcp_handler(ret(value))
    mcp_handle(s, init_msg())
    r <- call_result(s, "ret")
    expect_false(r$isError)
    expect_length(r$content, 1)
    expect_null(r$structuredContent)
    r$content[[1]]$text
  }
  expect_identical(text_of(3.5), "3.5")
  expect_identical(text_of(c("a", "b")), "a\nb")
  expect_identical(text_of(character()), "")
  expect_identical(text_of(NA_character_), "NA")
  expect_identical(text_of('{"json":1}'), '{"json":1}')
  expect_identical(text_of(NULL), "{}")
  expect_identical(text_of(list()), "[]")
  expect_identical(text_of(list(label = "x", values = list(1L, 2L))), '{"label":"x","values":[1,2]}')
  expect_identical(text_of(data.frame(x = 1:2)), '[{"x":1},{"x":2}]')
  expect_identical(text_of(NA), "null")
  expect_identical(text_of(factor("x")), '"x"')
  expect_identical(text_of(c(1.123456, 2)), "[1.1235,2]")
  expect_identical(text_of(list(type = "text", text = "raw")), '{"type":"text","text":"raw"}')
})

test_that("arguments arrive as parsed JSON (J6) and tool errors are contained", {
  probe <- tool(
    function(...) {
      a <- list(...)
      paste(names(a), vapply(a, function(v) paste(class(v), collapse = "/"), ""), sep = "=", collapse = ",")
    },
    "Describe the arguments.",
    name = "probe",
    # An open schema: any member reaches the function (RULES L6.7).
    arguments = type_from_schema('{"type":"object"}')
  )
  s <- mcp_handler(probe)
  mcp_handle(s, init_msg())
  r <- call_result(s, "probe", '{"i":1,"big":3000000000,"d":1.5,"e":1e2,"s":"x","b":true,"a":[1,2],"o":{},"n":null}')
  expect_identical(r$content[[1]]$text, "i=integer,big=numeric,d=numeric,e=numeric,s=character,b=logical,a=list,o=list,n=NULL")

  fails <- tool(function(x) stop("{\"bad\": true}"), "Always fails.", name = "fails",
    arguments = list(x = type_string()))
  s <- mcp_handler(fails)
  mcp_handle(s, init_msg())
  r <- call_result(s, "fails", '{"x":"a"}')
  expect_true(r$isError)
  expect_identical(r$content[[1]]$text, '{"bad": true}')
  # An undeclared member never reaches R (RULES L6.7); under an open schema
  # R's own matching says "unused argument" (RULES L6.3).
  r <- call_result(s, "fails", '{"x":"a","zzz":1}')
  expect_true(r$isError)
  expect_identical(
    r$content[[1]]$text,
    "Invalid arguments for tool `fails`: unexpected argument `zzz` (the tool takes `x`). The tool was not run."
  )
  open <- tool(function(x) x, "Open.", name = "open", arguments = type_from_schema('{"type":"object"}'))
  s <- mcp_handler(open)
  mcp_handle(s, init_msg())
  r <- call_result(s, "open", '{"x":"a","zzz":1}')
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "unused argument")
})

test_that("argument names R cannot bind are tool errors that say so, not mcplite's fault", {
  # An open schema lets such names reach the bridge (a closed one refuses
  # them first, RULES L6.7).
  add <- tool(function(x, y) x + y, "Add.", name = "add",
    arguments = type_from_schema('{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}'))
  s <- mcp_handler(add)
  mcp_handle(s, init_msg())
  r <- call_result(s, "add", '{"":1,"y":2}')
  expect_true(r$isError)
  expect_identical(
    r$content[[1]]$text,
    "The arguments contain an empty name (\"\"); every argument must be named as in the tool's input schema."
  )
  long <- strrep("x", 10001L)
  r <- call_result(s, "add", sprintf('{"x":1,"%s":2}', long))
  expect_true(r$isError)
  expect_identical(
    r$content[[1]]$text,
    "The arguments contain a name of 10001 bytes; R accepts names of at most 10000 bytes."
  )
  for (r in list(call_result(s, "add", '{"":1}'), call_result(s, "add", sprintf('{"%s":1}', long)))) {
    expect_false(grepl("mcplite", r$content[[1]]$text, fixed = TRUE))
  }
  # the longest name R accepts is passed on (R reports it as unused)
  r <- call_result(s, "add", sprintf('{"x":1,"y":2,"%s":3}', strrep("x", 10000L)))
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "^unused argument")
  expect_identical(call_result(s, "add", '{"x":1,"y":2}')$content[[1]]$text, "3")
})

test_that("a C stack overflow inside a tool is contained with R's message", {
  # `deep` raises R's nesting limit in this process: put back after the test.
  withr::local_options(expressions = getOption("expressions"))
  deep <- tool(function() {
    options(expressions = 500000)
    f <- function(n) f(n + 1)
    f(0)
  }, "Recurses until the C stack is exhausted.", name = "deep")
  fails <- tool(function() stop("plain failure"), "Fails.", name = "fails")
  ok <- tool(function() "fine", "Works.", name = "ok")
  s <- mcp_handler(list(deep, fails, ok))
  mcp_handle(s, init_msg())
  for (i in 1:2) {
    r <- call_result(s, "deep")
    expect_true(r$isError)
    # signalled to exiting handlers only: read from R's error message
    expect_match(r$content[[1]]$text, "^C stack usage +[0-9]+ is too close to the limit$")
    r <- call_result(s, "fails")
    expect_identical(r$content[[1]]$text, "plain failure")
    expect_identical(call_result(s, "ok")$content[[1]]$text, "fine")
  }
  # a tool that calls try() leaves R's error message changed; later failures
  # still report their own message
  tries <- tool(function() inherits(try(stop("inner"), silent = TRUE), "try-error"), "Tries.", name = "tries")
  s <- mcp_handler(list(tries, deep, fails))
  mcp_handle(s, init_msg())
  expect_identical(call_result(s, "tries")$content[[1]]$text, "true")
  expect_match(call_result(s, "deep")$content[[1]]$text, "^C stack usage")
  expect_identical(call_result(s, "fails")$content[[1]]$text, "plain failure")
})

test_that("warnings go to stderr as the call ends, and warn = 2 makes them errors", {
  warns <- tool(function() {
    warning("careful")
    "ok"
  }, "Warns.", name = "warns")
  s <- mcp_handler(warns)
  mcp_handle(s, init_msg())
  expect_silent(r <- call_result(s, "warns"))
  expect_identical(r$content[[1]]$text, "ok")
  withr::local_options(warn = 2)
  r <- call_result(s, "warns")
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "careful")
})

test_that("a tool call reads as the tool's name with its arguments", {
  whoami <- tool(function(x, ...) paste(deparse(sys.call()), collapse = ""), "Who am I?", name = "whoami",
    arguments = list(x = type_integer(), y = type_string()))
  s <- mcp_handler(whoami)
  mcp_handle(s, init_msg())
  expect_identical(call_result(s, "whoami", '{"x":1,"y":"a"}')$content[[1]]$text, 'whoami(x = 1L, y = "a")')
  # names that are not function names in R still work
  dots <- tool(function(x) x * 2, "Dots.", name = "...", arguments = list(x = type_number()))
  dot1 <- tool(function(x) x * 3, "Dot one.", name = "..1", arguments = list(x = type_number()))
  s <- mcp_handler(list(dots, dot1))
  mcp_handle(s, init_msg())
  expect_identical(call_result(s, "...", '{"x":2}')$content[[1]]$text, "4")
  expect_identical(call_result(s, "..1", '{"x":2}')$content[[1]]$text, "6")
})

# Custom conditionMessage() methods: test-spec-conformance.R (section 10).
test_that("a signalled error that is handled inside the tool is no failure", {
  signals <- tool(function() {
    try(signalCondition(simpleError("only signalled")), silent = TRUE)
    withCallingHandlers(
      tryCatch(stop("caught inside"), error = function(e) "recovered"),
      error = function(e) NULL
    )
  }, "Signals.", name = "signals")
  fails <- tool(function() stop("the real failure"), "Fails.", name = "fails")
  s <- mcp_handler(list(signals, fails))
  mcp_handle(s, init_msg())
  r <- call_result(s, "signals")
  expect_false(r$isError)
  expect_identical(r$content[[1]]$text, "recovered")
  r <- call_result(s, "fails")
  expect_true(r$isError)
  expect_identical(r$content[[1]]$text, "the real failure")
  r <- call_result(s, "signals")
  expect_false(r$isError)
})

test_that("tools run with warnings printed as they happen and R's error printing off", {
  seen <- tool(function() {
    paste(getOption("warn"), getOption("show.error.messages"))
  }, "Options.", name = "seen")
  s <- mcp_handler(seen)
  mcp_handle(s, init_msg())
  withr::local_options(warn = 0, show.error.messages = TRUE)
  expect_identical(call_result(s, "seen")$content[[1]]$text, "1 FALSE")
  expect_equal(getOption("warn"), 0)
  expect_true(getOption("show.error.messages"))
  withr::local_options(warn = -1)
  expect_identical(call_result(s, "seen")$content[[1]]$text, "-1 FALSE")
  withr::local_options(warn = 2)
  expect_identical(call_result(s, "seen")$content[[1]]$text, "2 FALSE")
})

test_that("unencodable return values are contained errors (J3.2)", {
  env_tool <- tool(function() new.env(), "Returns an environment.", name = "env_tool")
  s <- mcp_handler(env_tool)
  mcp_handle(s, init_msg())
  r <- call_result(s, "env_tool")
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "could not be converted to JSON")
})

test_that("tool names are checked byte-wise to the end (no trailing newline)", {
  expect_error(tool(function() 1, "x", name = "abc\n"), class = "mcplite_error", regexp = "`name`")
})

test_that("a provider built-in tool is rejected with a clear reason", {
  builtin <- structure(list(), class = c("ellmer::ToolBuiltIn", "S7_object"))
  expect_error(mcp_server(builtin), class = "mcplite_error", regexp = "built-in")
  expect_error(mcp_handler(list(builtin)), class = "mcplite_error", regexp = "`tools\\[\\[1\\]\\]`.*built-in")
})

test_that("R5.7: tools from an .R file, and no tools for the session tools, as mcptools takes them", {
  dir <- withr::local_tempdir()
  file <- file.path(dir, "tools.R")
  writeLines(c(
    "helper <- function(x) x * 2",
    "list(mcplite::tool(function(x) helper(x), 'Double.', name = 'double',",
    "  arguments = list(x = mcplite::type_number())))"
  ), file)
  # What the file prints never reaches standard output (the protocol's).
  writeLines(c("cat('printed by the tools file\\n')", readLines(file)), file)
  out <- capture.output(tools <- server_tools(file))
  expect_identical(out, character())
  expect_length(tools, 1L)
  expect_identical(tools[[1]](4), 8)
  # The file's variables stay in its own environment.
  expect_false(exists("helper", envir = globalenv(), inherits = FALSE))
  writeLines("42", file)
  expect_error(server_tools(file), "must yield a tool or a list of tools", class = "mcplite_error_argument")
  writeLines("stop('broken')", file)
  expect_error(server_tools(file), "failed when it was sourced: broken", class = "mcplite_error_argument")
  expect_null(server_tools(NULL))

  # End to end: a server script of `mcp_server("tools.R")`, and one of
  # `mcp_server()` (the live-session tools alone).
  skip_on_cran()
  writeLines(c("list(mcplite::tool(function(x) x * 2, 'Double.', name = 'double',",
               "  arguments = list(x = mcplite::type_number())))"), file)
  script <- file.path(dir, "server.R")
  writeLines(sprintf("mcplite::mcp_server(%s)", deparse(file)), script)
  srv <- local_mcp_connect_script(script)
  expect_identical(mcp_call(srv, "double", list(x = 21))$content[[1]]$text, "42")
  bare <- file.path(dir, "bare.R")
  writeLines("mcplite::mcp_server()", bare)
  srv <- local_mcp_connect_script(bare)
  expect_setequal(names(mcp_list_tools(srv)), c("list_r_sessions", "select_r_session", "list_r_objects",
                                                "describe_r_object", "read_r_help", "run_r_code"))
})
