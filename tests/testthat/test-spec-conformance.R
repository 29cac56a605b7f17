# Rule-by-rule conformance tests (RULES sections 1, 3-7 and 10) through the
# public in-process dispatcher: exact response bytes wherever RULES.md gives
# them. End-to-end process rules (section 7) are at the end of the file.

spec_version <- function() as.character(utils::packageVersion("mcplite"))

spec_init <- function(version, id = 1) {
  sprintf(
    '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"demo","version":"1.0"}}}',
    id, version
  )
}

spec_call <- function(id, name, arguments = NULL, meta = NULL) {
  members <- c(
    sprintf('"name":"%s"', name),
    if (!is.null(arguments)) paste0('"arguments":', arguments),
    meta
  )
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}', id, paste(members, collapse = ","))
}

spec_M <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
spec_S <- function() {
  sprintf('"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"%s"}}', spec_version())
}

# The default payload options, whatever the session had.
spec_default_options <- function(env = parent.frame()) {
  withr::local_options(list(
    mcplite.json.null = NULL, mcplite.json.na = NULL,
    mcplite.json.auto_unbox = NULL, mcplite.json.digits = NULL
  ), .local_envir = env)
}

# The two tools of the worked exchanges (L9, M6).
spec_add_numbers <- function() {
  tool(
    function(x, y) {
      x + y
    },
    name = "add_numbers",
    description = "Add two numbers and return the result.",
    arguments = list(
      x = type_number("First number."),
      y = type_number("Second number.")
    ),
    annotations = list(title = "Add", read_only_hint = TRUE)
  )
}

spec_mean_sd <- function() {
  tool(
    function(values) {
      v <- unlist(values)
      tool_result(structured_content = list(mean = mean(v), sd = sd(v)))
    },
    name = "mean_sd",
    description = "Mean and standard deviation.",
    arguments = list(values = type_array(type_number()))
  )
}

add_numbers_listing <- paste0(
  '{"name":"add_numbers","description":"Add two numbers and return the result.",',
  '"inputSchema":{"type":"object","properties":{"x":{"type":"number","description":"First number."},',
  '"y":{"type":"number","description":"Second number."}},"required":["x","y"],"additionalProperties":false},',
  '"annotations":{"title":"Add","readOnlyHint":true}}'
)
mean_sd_listing <- paste0(
  '{"name":"mean_sd","description":"Mean and standard deviation.",',
  '"inputSchema":{"type":"object","properties":{"values":{"type":"array","items":{"type":"number"}}},',
  '"required":["values"],"additionalProperties":false}}'
)

test_that("L9: the worked legacy exchange, byte for byte, with real R tools", {
  spec_default_options()
  s <- mcp_handler(list(spec_add_numbers(), spec_mean_sd()), instructions = "Arithmetic helpers.")
  v <- spec_version()
  expect_identical(
    mcp_handle(s, spec_init("2025-06-18")),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},',
      '"serverInfo":{"name":"mcplite","version":"', v, '"},"instructions":"Arithmetic helpers."}}'
    )
  )
  expect_null(mcp_handle(s, '{"jsonrpc":"2.0","method":"notifications/initialized"}'))
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    paste0('{"jsonrpc":"2.0","id":2,"result":{"tools":[', add_numbers_listing, ",", mean_sd_listing, "]}}")
  )
  expect_identical(
    mcp_handle(s, spec_call(3, "add_numbers", '{"x":1.5,"y":2.25}')),
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3.75"}],"isError":false}}'
  )
  expect_identical(
    mcp_handle(s, spec_call(4, "mean_sd", '{"values":[1,2,4]}')),
    paste0(
      '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\\"mean\\":2.3333,\\"sd\\":1.5275}"}],',
      '"isError":false,"structuredContent":{"mean":2.3333,"sd":1.5275}}}'
    )
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

test_that("L9 on 2024-11-05: fallback text only, no annotations", {
  spec_default_options()
  s <- mcp_handler(list(spec_add_numbers(), spec_mean_sd()), instructions = "Arithmetic helpers.")
  expect_match(mcp_handle(s, spec_init("2024-11-05")), '"protocolVersion":"2024-11-05"', fixed = TRUE)
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"tools":[',
      sub(',"annotations":{"title":"Add","readOnlyHint":true}', "", add_numbers_listing, fixed = TRUE),
      ",", mean_sd_listing, "]}}"
    )
  )
  expect_identical(
    mcp_handle(s, spec_call(4, "mean_sd", '{"values":[1,2,4]}')),
    '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\\"mean\\":2.3333,\\"sd\\":1.5275}"}],"isError":false}}'
  )
})

test_that("M6: the worked modern exchange, byte for byte, with real R tools", {
  spec_default_options()
  s <- mcp_handler(list(spec_add_numbers(), spec_mean_sd()), instructions = "Arithmetic helpers.")
  S <- spec_S()
  supported <- '["2026-07-28","2025-11-25","2025-06-18","2024-11-05"]'
  expect_identical(
    mcp_handle(s, paste0(
      '{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
      '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"demo","version":"1.0"}}}}'
    )),
    paste0(
      '{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","supportedVersions":', supported,
      ',"capabilities":{"tools":{"listChanged":false},"logging":{}},"instructions":"Arithmetic helpers.",',
      '"ttlMs":300000,"cacheScope":"public",', S, "}}"
    )
  )
  expect_identical(
    mcp_handle(s, spec_call('"b"', "add_numbers", '{"x":2,"y":3}', spec_M)),
    paste0('{"jsonrpc":"2.0","id":"b","result":{"resultType":"complete","content":[{"type":"text","text":"5"}],"isError":false,', S, "}}")
  )
  expect_identical(
    mcp_handle(s, paste0('{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{', spec_M, "}}")),
    paste0(
      '{"jsonrpc":"2.0","id":"c","result":{"resultType":"complete","tools":[', add_numbers_listing, ",",
      mean_sd_listing, '],"ttlMs":300000,"cacheScope":"public",', S, "}}"
    )
  )
  expect_identical(
    mcp_handle(s, paste0('{"jsonrpc":"2.0","id":"d","method":"ping","params":{', spec_M, "}}")),
    '{"jsonrpc":"2.0","id":"d","error":{"code":-32601,"message":"Method not found"}}'
  )
  expect_identical(
    mcp_handle(s, paste0(
      '{"jsonrpc":"2.0","id":"e","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",',
      '"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )),
    paste0(
      '{"jsonrpc":"2.0","id":"e","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":',
      supported, ',"requested":"2025-11-25"}}}'
    )
  )
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":"f","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'),
    '{"jsonrpc":"2.0","id":"f","error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/clientCapabilities must be an object"}}'
  )
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":"g","method":"tools/list"}'),
    '{"jsonrpc":"2.0","id":"g","error":{"code":-32600,"message":"Invalid Request: server not initialized"}}'
  )
  # Modern structured content is emitted whatever its JSON type (P1), and a
  # contained error carries resultType and the server _meta (L6.6, M4.3).
  expect_identical(
    mcp_handle(s, spec_call(1, "mean_sd", '{"values":[2,4]}', spec_M)),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":',
      '"{\\"mean\\":3,\\"sd\\":1.4142}"}],"isError":false,"structuredContent":{"mean":3,"sd":1.4142},', S, "}}"
    )
  )
  expect_identical(
    mcp_handle(s, spec_call(2, "add_numbers", '{"x":"a","y":1}', spec_M)),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text",',
      '"text":"Invalid arguments for tool `add_numbers`: `x` must be of type \\"number\\", got \\"a\\". ',
      'The tool was not run."}],"isError":true,', S, "}}"
    )
  )
})

test_that("R5.2: argument checks run in the documented order", {
  add <- spec_add_numbers()
  # 2 (instructions) before 3 (registry)
  expect_error(mcp_server(1, instructions = 1), class = "mcplite_error", regexp = "`instructions`")
  expect_error(mcp_handler(list(add, add), instructions = NA_character_), class = "mcplite_error", regexp = "`instructions`")
  # 3 (registry) and 5 (duplicates) before 6 (payload options)
  withr::with_options(list(mcplite.json.digits = -1), {
    expect_error(mcp_server("x.R"), class = "mcplite_error", regexp = "`tools`")
    expect_error(mcp_server(list(add, add)), class = "mcplite_error", regexp = "repeated: \"add_numbers\"")
    expect_error(mcp_server(add), class = "mcplite_error", regexp = "`mcplite.json.digits`")
  })
  # 4 (re-validation) names `tools` and the tool; it runs before 5.
  broken <- add
  meta <- attr(broken, "mcplite")
  meta$annotations <- list(read_only_hint = "yes")
  attr(broken, "mcplite") <- meta
  err <- expect_error(mcp_handler(list(add, broken, broken)), class = "mcplite_error")
  expect_match(conditionMessage(err), "`tools[[2]]` (\"add_numbers\")", fixed = TRUE)
  expect_match(conditionMessage(err), "`annotations$read_only_hint`", fixed = TRUE)
  # 5: every duplicated name once, in order of first repeat.
  a <- tool(function() 1, "A.", name = "a")
  b <- tool(function() 1, "B.", name = "b")
  expect_error(
    mcp_handler(list(a, b, b, a, a, b)),
    class = "mcplite_error", regexp = "repeated: \"b\", \"a\"\\.$"
  )
})

test_that("R5.2/L3.2: \"\" instructions are advertised; an empty registry lists no tools", {
  s <- mcp_handler(list(), instructions = "")
  expect_identical(
    mcp_handle(s, spec_init("2025-11-25")),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"logging":{}},',
      '"serverInfo":{"name":"mcplite","version":"', spec_version(), '"},"instructions":""}}'
    )
  )
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'
  )
  expect_identical(
    mcp_handle(s, spec_call(3, "anything")),
    '{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: unknown tool"}}'
  )
})

test_that("R1.8/R5.2.4: tools/list never fails once the server is built", {
  # Metadata broken after mcp_handler() does not affect the prepared listing.
  add <- spec_add_numbers()
  s <- mcp_handler(add)
  meta <- attr(add, "mcplite")
  meta$name <- "bad name"
  attr(add, "mcplite") <- meta
  mcp_handle(s, spec_init("2025-06-18"))
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    paste0('{"jsonrpc":"2.0","id":2,"result":{"tools":[', add_numbers_listing, "]}}")
  )
})

test_that("R6.4: an option made invalid while serving is a contained tool error naming it", {
  spec_default_options()
  plain <- tool(function() {
    options(mcplite.json.na = "bogus")
    1.5
  }, "Breaks the option, returns a number.", name = "plain")
  structured <- tool(function() {
    r <- tool_result(structured_content = list(a = 1))
    options(mcplite.json.auto_unbox = "maybe")
    r
  }, "Builds a result, then breaks an option.", name = "structured")
  s <- mcp_handler(list(plain, structured))
  mcp_handle(s, spec_init("2025-11-25"))
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(2, "plain")))$result
  expect_true(res$isError)
  expect_length(res$content, 1L)
  expect_match(res$content[[1]]$text, "`mcplite.json.na`", fixed = TRUE)
  expect_match(res$content[[1]]$text, "\"string\"", fixed = TRUE)
  options(mcplite.json.na = NULL)
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(3, "structured")))$result
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, "`mcplite.json.auto_unbox`", fixed = TRUE)
  options(mcplite.json.auto_unbox = NULL)
  # The server keeps serving, and the call works again once the option is fixed.
  fixed <- tool(function() 1.5, "Returns a number.", name = "fixed")
  s <- mcp_handler(list(plain, fixed))
  mcp_handle(s, spec_init("2025-11-25"))
  expect_true(jsonlite::parse_json(mcp_handle(s, spec_call(4, "plain")))$result$isError)
  options(mcplite.json.na = NULL)
  expect_identical(
    mcp_handle(s, spec_call(5, "fixed")),
    '{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"1.5"}],"isError":false}}'
  )
})

test_that("R6.3: payload options never touch protocol fields, schemas or metadata", {
  annotated <- tool(
    function() {
      tool_result(
        content_text("x", annotations = list(priority = 0.123456789, custom = NA), meta = list(m = c(1.5, NA))),
        structured_content = list(v = 0.123456789, w = NA_real_),
        meta = list(k = 0.123456789, n = NULL, one = 1L)
      )
    },
    "Everything fixed-encoded.", name = "annotated",
    annotations = list(ratio = 0.123456789, flag = NA),
    output_schema = type_from_schema(list(type = "object", maximum = 0.123456789))
  )
  run <- function() {
    s <- mcp_handler(annotated)
    list(
      list = mcp_handle(s, paste0('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{', spec_M, "}}")),
      call = mcp_handle(s, spec_call(2, "annotated", NULL, spec_M))
    )
  }
  spec_default_options()
  base <- run()
  expect_match(base$list, '"annotations":{"ratio":0.123456789,"flag":null},"outputSchema":{"type":"object","maximum":0.123456789}', fixed = TRUE)
  expect_match(
    base$call,
    paste0(
      '"content":[{"type":"text","text":"x","annotations":{"priority":0.123456789,"custom":null},"_meta":{"m":[1.5,"NA"]}}],',
      '"isError":false,"structuredContent":{"v":0.1235,"w":"NA"},"_meta":{"k":0.123456789,"n":null,"one":1,'
    ),
    fixed = TRUE
  )
  withr::local_options(list(
    mcplite.json.auto_unbox = FALSE, mcplite.json.digits = I(2),
    mcplite.json.na = "string", mcplite.json.null = "list"
  ))
  changed <- run()
  expect_identical(changed$list, base$list)
  expect_identical(
    changed$call,
    sub('"structuredContent":{"v":0.1235,"w":"NA"}', '"structuredContent":{"v":[0.12],"w":["NA"]}', base$call, fixed = TRUE)
  )
})

test_that("R6.3: NULL -> {} and list() -> [] for ordinary values ignore the options", {
  spec_default_options()
  null_tool <- tool(function() NULL, "NULL.", name = "null_tool")
  empty_tool <- tool(function() list(), "Empty list.", name = "empty_tool")
  s <- mcp_handler(list(null_tool, empty_tool))
  mcp_handle(s, spec_init("2025-11-25"))
  withr::local_options(list(mcplite.json.null = "list", mcplite.json.auto_unbox = FALSE))
  expect_identical(
    mcp_handle(s, spec_call(2, "null_tool")),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{}"}],"isError":false}}'
  )
  expect_identical(
    mcp_handle(s, spec_call(3, "empty_tool")),
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"[]"}],"isError":false}}'
  )
})

test_that("J3 via mcp_handle: character-like values are literal text, never parsed", {
  spec_default_options()
  ret <- function(value) tool(function() value, "Returns a value.", name = "ret")
  text_of <- function(value) {
    out <- mcp_handle(ret(value), spec_call(1, "ret", NULL, spec_M))
    jsonlite::parse_json(out)$result$content[[1]]$text
  }
  expect_identical(text_of(jsonlite::toJSON(list(a = 1))), '{"a":[1]}')
  expect_identical(text_of(structure(c("a", "b"), class = "json")), "a\nb")
  expect_identical(text_of(I("x")), "x")
  expect_identical(text_of(c(a = "named", b = NA)), "named\nNA")
  expect_identical(text_of("multi\nline \u00e9"), "multi\nline \u00e9")
  expect_identical(text_of(1:3), "[1,2,3]")
  expect_identical(text_of(TRUE), "true")
  expect_identical(text_of(structure(list(), names = character())), "{}")
})

test_that("J4 via mcp_handle: root list() is {}, arrays and strings only where allowed", {
  spec_default_options()
  sc <- function(value) tool(function() tool_result(structured_content = value), "Structured.", name = "sc")
  modern <- function(value) mcp_handle(sc(value), spec_call(1, "sc", NULL, spec_M))
  expect_match(modern(list()), '"content":[{"type":"text","text":"{}"}],"isError":false,"structuredContent":{},', fixed = TRUE)
  expect_match(modern(list(1L, "a")), '"text":"[1,\\"a\\"]"}],"isError":false,"structuredContent":[1,"a"],', fixed = TRUE)
  expect_match(modern("{\"a\":1}"), '"text":"\\"{\\\\\\"a\\\\\\":1}\\""}],"isError":false,"structuredContent":"{\\"a\\":1}",', fixed = TRUE)
  legacy <- function(value, version) {
    s <- mcp_handler(sc(value))
    mcp_handle(s, spec_init(version))
    mcp_handle(s, spec_call(2, "sc"))
  }
  expect_identical(
    legacy(list(1L, "a"), "2025-06-18"),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[1,\\"a\\"]"}],"isError":false}}'
  )
  expect_identical(
    legacy(list(), "2025-11-25"),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{}"}],"isError":false,"structuredContent":{}}}'
  )
  expect_identical(
    legacy(data.frame(a = 1:2), "2025-11-25"),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[{\\"a\\":1},{\\"a\\":2}]"}],"isError":false}}'
  )
})

# Tools that take any arguments: an open input schema (RULES L6.7 checks
# nothing), so the J6 mapping itself is what these tests see.
open_schema <- type_from_schema('{"type":"object"}')

test_that("J6 via mcp_handle: argument types, boundaries, empty objects, nested nulls, UTF-8", {
  probe <- tool(function(...) {
    a <- list(...)
    vapply(names(a), function(n) {
      v <- a[[n]]
      paste0(n, "=", paste(deparse(v, control = c("keepInteger", "keepNA", "niceNames", "showAttributes")), collapse = ""))
    }, "")
  }, "Deparse the arguments.", name = "probe", arguments = open_schema)
  run <- function(args) {
    out <- mcp_handle(probe, spec_call(1, "probe", args, spec_M))
    strsplit(jsonlite::parse_json(out)$result$content[[1]]$text, "\n", fixed = TRUE)[[1]]
  }
  expect_identical(
    run('{"max":2147483647,"min":-2147483647,"over":2147483648,"under":-2147483648,"zero":0,"frac":1.0,"exp":1e0}'),
    c("max=2147483647L", "min=-2147483647L", "over=2147483648", "under=-2147483648",
      "zero=0L", "frac=1", "exp=1")
  )
  expect_identical(
    run('{"obj":{},"arr":[],"nested":{"a":null,"b":[null,{}]},"t":true,"f":false}'),
    c("obj=structure(list(), names = character(0))", "arr=list()",
      "nested=list(a = NULL, b = list(NULL, structure(list(), names = character(0))))",
      "t=TRUE", "f=FALSE")
  )
  enc <- tool(function(s) paste(Encoding(s), nchar(s), s == "h\u00e9\u2603\U0001F600"), "Encoding.", name = "enc",
              arguments = open_schema)
  out <- mcp_handle(enc, spec_call(1, "enc", '{"s":"h\\u00e9\u2603\\ud83d\\ude00"}', spec_M))
  expect_identical(jsonlite::parse_json(out)$result$content[[1]]$text, "UTF-8 4 TRUE")
  # Member order is kept.
  order_tool <- tool(function(...) paste(names(list(...)), collapse = ","), "Names.", name = "order_tool",
                     arguments = open_schema)
  out <- mcp_handle(order_tool, spec_call(1, "order_tool", '{"z":1,"a":2,"m":3}', spec_M))
  expect_identical(jsonlite::parse_json(out)$result$content[[1]]$text, "z,a,m")
})

test_that("J6.1: a lone surrogate escape arrives as U+FFFD", {
  echo <- tool(function(s) s, "Echo.", name = "echo", arguments = open_schema)
  out <- mcp_handle(echo, spec_call(1, "echo", '{"s":"a\\ud800b\\ud83d\\ude00"}', spec_M))
  expect_identical(jsonlite::parse_json(out)$result$content[[1]]$text, "a\ufffdb\U0001F600")
})

test_that("J6.1: the number token decides integer or double", {
  # sign(1 / n) tells -0.0 (-1) from 0 (1)
  probe <- tool(function(n) paste(typeof(n), format(n, digits = 17), sign(1 / n)), "Type of n.", name = "probe",
                arguments = open_schema)
  arrives_as <- function(token) {
    out <- mcp_handle(probe, spec_call(1, "probe", paste0('{"n":', token, "}"), spec_M))
    jsonlite::parse_json(out)$result$content[[1]]$text
  }
  # no fraction, no exponent, within +-2147483647: integer (so -0 is 0L)
  expect_identical(arrives_as("-0"), "integer 0 1")
  expect_identical(arrives_as("2147483647"), "integer 2147483647 1")
  expect_identical(arrives_as("-2147483647"), "integer -2147483647 -1")
  # anything else: double, keeping the sign of zero, +-Inf beyond the range
  expect_identical(arrives_as("-0.0"), "double 0 -1")
  expect_identical(arrives_as("-2147483648"), "double -2147483648 -1")
  expect_identical(arrives_as("1e2"), "double 100 1")
  expect_identical(arrives_as("12345678901234567890"), "double 12345678901234567168 1")
  expect_identical(arrives_as("1e400"), "double Inf 0")
  expect_identical(arrives_as("-1e400"), "double -Inf 0")
})

test_that("L6.3/L6.6: R's argument matching; error text is exactly conditionMessage()", {
  # An open schema lets the call reach R's own matching (L6.7 refuses both
  # calls under add_numbers' closed schema: see the test below).
  add <- tool(function(x, y) x + y, "Add.", name = "add_numbers", arguments = open_schema)
  s <- mcp_handler(add)
  mcp_handle(s, spec_init("2025-11-25"))
  expect_identical(
    mcp_handle(s, spec_call(2, "add_numbers", '{"x":1}')),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"argument \\"y\\" is missing, with no default"}],"isError":true}}'
  )
  expect_identical(
    mcp_handle(s, spec_call(3, "add_numbers", '{"x":1,"y":2,"z":3}')),
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"unused argument (z = 3)"}],"isError":true}}'
  )
  custom <- tool(function() {
    cnd <- structure(class = c("my_error", "error", "condition"), list(message = "raw", call = quote(f(x))))
    stop(cnd)
  }, "Custom condition.", name = "custom")
  registerS3method("conditionMessage", "my_error", function(c) paste0("custom: ", c$message, "\nline 2"))
  multi <- tool(function() stop("first line\n  second \"quoted\" line"), "Multi-line error.", name = "multi")
  s <- mcp_handler(list(custom, multi))
  mcp_handle(s, spec_init("2025-11-25"))
  expect_identical(
    mcp_handle(s, spec_call(2, "custom")),
    '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"custom: raw\\nline 2"}],"isError":true}}'
  )
  expect_identical(
    mcp_handle(s, spec_call(3, "multi")),
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"first line\\n  second \\"quoted\\" line"}],"isError":true}}'
  )
})

test_that("L6.7/R1.9: arguments are checked against the schema before the tool is called", {
  called <- 0L
  typed <- tool(
    function(n) {
      called <<- called + 1L
      paste(class(n), length(n))
    },
    "Declares an integer.", name = "typed",
    arguments = list(n = type_integer())
  )
  s <- mcp_handler(typed)
  mcp_handle(s, spec_init("2025-11-25"))
  text <- function(args) jsonlite::parse_json(mcp_handle(s, spec_call(2, "typed", args)))$result$content[[1]]$text
  refused <- function(problem) paste0("Invalid arguments for tool `typed`: ", problem, ". The tool was not run.")
  expect_identical(text('{"n":"not a number"}'), refused('`n` must be of type "integer", got "not a number"'))
  expect_identical(text('{"n":[1,2,3]}'), refused('`n` must be of type "integer", got [1,2,3]'))
  expect_identical(text('{"n":1.5}'), refused('`n` must be of type "integer", got 1.5'))
  expect_identical(text("{}"), refused("missing required argument `n`"))
  expect_identical(text('{"n":1,"FUN":"system"}'), refused("unexpected argument `FUN` (the tool takes `n`)"))
  expect_identical(called, 0L)
  # A conforming call runs (2.0 is an integer in JSON Schema, a double in R).
  expect_identical(text('{"n":2}'), "integer 1")
  expect_identical(text('{"n":2.0}'), "numeric 1")
  expect_identical(called, 2L)
})

test_that("R2.9, L6.7: a type_ignore() argument sent by the client is refused, and fun keeps its default", {
  called <- FALSE
  t <- tool(function(a, secret = "unset") {
    called <<- TRUE
    paste(a, secret)
  }, "Ignore.", name = "ign", arguments = list(a = type_string(), secret = type_ignore()))
  expect_identical(
    mcp_handle(t, spec_call(1, "ign", '{"a":"x","secret":"sent"}', spec_M)),
    paste0('{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":',
           '"Invalid arguments for tool `ign`: unexpected argument `secret` (the tool takes `a`). The tool was not run."}],',
           '"isError":true,', spec_S(), "}}")
  )
  expect_false(called)
  expect_identical(
    mcp_handle(t, spec_call(2, "ign", '{"a":"x"}', spec_M)),
    paste0('{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"x unset"}],"isError":false,', spec_S(), "}}")
  )
})

test_that("P4: projection emits author schemas verbatim, valid or not", {
  t <- tool(function() 1, "Odd schema.", name = "odd",
            output_schema = type_from_schema('{"type":"object","properties":[],"required":{}}'))
  s <- mcp_handler(t)
  mcp_handle(s, spec_init("2025-06-18"))
  expect_identical(
    mcp_handle(s, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"odd","description":"Odd schema.",',
      '"inputSchema":{"type":"object","properties":{},"additionalProperties":false},',
      '"outputSchema":{"type":"object","properties":[],"required":{}}}]}}'
    )
  )
})

test_that("J1.3: bytes that are not valid UTF-8 are written as <xx>, as jsonlite writes them", {
  skip_if_not(l10n_info()[["UTF-8"]], "needs a UTF-8 session")
  spec_default_options()
  bad <- rawToChar(as.raw(c(0x61, 0xff, 0x62)))
  marked <- bad
  Encoding(marked) <- "UTF-8"
  plain <- tool(function() bad, "Invalid UTF-8 text.", name = "plain")
  block <- tool(function() tool_result(content_text(bad)), "Invalid UTF-8 block.", name = "block")
  listed <- tool(function() list(a = bad), "Invalid UTF-8 in a JSON value.", name = "listed")
  named <- tool(function() stats::setNames(list(1L), bad), "Invalid UTF-8 in a name.", name = "named")
  structured <- tool(function() tool_result(content_text("ok"), structured_content = list(a = bad)),
                     "Invalid UTF-8 in structured content.", name = "structured")
  # marked UTF-8 although it is not: jsonlite writes the raw byte, the wire <ff>
  mislabelled <- tool(function() list(a = marked), "Mislabelled UTF-8.", name = "mislabelled")
  s <- mcp_handler(list(plain, block, listed, named, structured, mislabelled))
  mcp_handle(s, spec_init("2025-11-25"))
  expected <- list(
    plain = "a<ff>b", block = "a<ff>b", listed = '{"a":"a<ff>b"}', named = '{"a<ff>b":1}',
    structured = "ok", mislabelled = '{"a":"a<ff>b"}'
  )
  for (nm in names(expected)) {
    out <- mcp_handle(s, spec_call(2, nm))
    expect_true(validUTF8(out), info = nm)
    res <- jsonlite::parse_json(out)$result
    expect_false(res$isError, info = nm)
    expect_identical(res$content[[1]]$text, expected[[nm]], info = nm)
  }
  out <- jsonlite::parse_json(mcp_handle(s, spec_call(3, "structured")))$result
  expect_identical(out$structuredContent, list(a = "a<ff>b"))
  # the values are jsonlite's own (the listed tool's payload JSON)
  expect_identical(
    enc2utf8(as.character(jsonlite::toJSON(list(a = bad), auto_unbox = TRUE))),
    '{"a":"a<ff>b"}'
  )
})

test_that("J1.3: a string marked \"bytes\" is written where jsonlite writes it, else a contained tool error", {
  raw_bytes <- rawToChar(as.raw(c(0x61, 0xff, 0x62)))
  Encoding(raw_bytes) <- "bytes"
  plain <- tool(function() raw_bytes, "Bytes text.", name = "plain")
  listed <- tool(function() list(a = raw_bytes), "Bytes in a JSON value.", name = "listed")
  # the whole value is the one string: jsonlite writes its bytes, the wire <ff>
  level <- tool(function() factor(raw_bytes), "A bytes factor.", name = "level")
  scalar <- tool(function() tool_result(structured_content = raw_bytes), "Bytes structured.", name = "scalar")
  s <- mcp_handler(list(plain, listed, level, scalar))
  mcp_handle(s, spec_init("2025-11-25"))
  for (nm in c("plain", "listed", "level", "scalar")) {
    out <- mcp_handle(s, spec_call(2, nm))
    expect_true(validUTF8(out), info = nm)
    res <- jsonlite::parse_json(out)$result
    if (nm %in% c("plain", "listed")) {
      expect_true(res$isError, info = nm)
      expect_match(res$content[[1]]$text, "\"bytes\" encoding", info = nm)
    } else {
      expect_false(res$isError, info = nm)
      expect_identical(res$content[[1]]$text, '"a<ff>b"', info = nm)
    }
  }
  out <- jsonlite::parse_json(mcp_handle(s, spec_call(3, "scalar", NULL, spec_M)))$result
  expect_identical(out$structuredContent, "a<ff>b")
  expect_identical(mcp_handle(s, '{"jsonrpc":"2.0","id":3,"method":"ping"}'), '{"jsonrpc":"2.0","id":3,"result":{}}')
})

test_that("J4.6: structured content that does not match the output schema is a tool error naming the fix", {
  spec_default_options()
  fit <- tool(
    function(p = NA_real_, error = FALSE) tool_result(structured_content = list(p = p), is_error = error),
    "A p-value that may be missing.", name = "fit",
    arguments = list(p = type_number(required = FALSE, nullable = TRUE), error = type_boolean(required = FALSE)),
    output_schema = type_object(p = type_number(nullable = TRUE))
  )
  rows <- tool(
    function() tool_result(structured_content = list(rows = data.frame(a = c(1, NA), b = c("x", "y")))),
    "Rows.", name = "rows",
    output_schema = type_object(rows = type_array(type_object(a = type_number(nullable = TRUE), b = type_string())))
  )
  s <- mcp_handler(list(fit, rows))
  text <- paste(
    "The result of tool `fit` does not match its output schema: at `/p`, \"NA\" is not of types \"number\",",
    "\"null\", so the result was not sent. R writes a missing number (NA, NaN, Inf) as a string by default:",
    "set options(mcplite.json.na = \"null\") to write null (a nullable type such as",
    "type_number(nullable = TRUE) accepts it), or return NULL for the value."
  )
  # every protocol version, whether or not it carries the schema and the content
  for (v in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    mcp_handle(s, spec_init(v))
    res <- jsonlite::parse_json(mcp_handle(s, spec_call(2, "fit")))$result
    expect_identical(res, list(content = list(list(type = "text", text = text)), isError = TRUE), info = v)
  }
  expect_identical(
    mcp_handle(s, spec_call(3, "fit", NULL, spec_M)),
    paste0(
      '{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":',
      jsonlite::toJSON(text, auto_unbox = TRUE), '}],"isError":true,', spec_S(), "}}"
    )
  )
  # a data frame row that leaves out its NA cell
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(4, "rows", NULL, spec_M)))$result
  expect_true(res$isError)
  expect_match(res$content[[1]]$text, 'at `/rows/1`, "a" is a required property', fixed = TRUE)
  expect_match(res$content[[1]]$text, "NA in a data frame", fixed = TRUE)
  # conforming values, and a result marked as an error, are sent as they are
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(5, "fit", '{"p":0.5}', spec_M)))$result
  expect_identical(res$structuredContent, list(p = 0.5))
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(6, "fit", '{"error":true}', spec_M)))$result
  expect_true(res$isError)
  expect_identical(res$structuredContent, list(p = "NA"))
  # the two fixes the text names
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(7, "fit", '{"p":null}', spec_M)))$result
  expect_false(res$isError)
  expect_identical(res$structuredContent, list(p = NULL))
  withr::local_options(mcplite.json.na = "null")
  for (name in c("fit", "rows")) {
    res <- jsonlite::parse_json(mcp_handle(s, spec_call(8, name, NULL, spec_M)))$result
    expect_false(res$isError, info = name)
  }
  expect_identical(res$structuredContent, list(rows = list(list(a = 1L, b = "x"), list(a = NULL, b = "y"))))
  # the type-array spelling of a nullable type (a schema written by hand) is checked alike
  arr <- tool(function(p = NA) tool_result(structured_content = list(p = p)), "Typed by hand.", name = "arr",
    arguments = list(p = type_number(required = FALSE, nullable = TRUE)),
    output_schema = type_from_schema('{"type":"object","properties":{"p":{"type":["number","null"]}}}'))
  s <- mcp_handler(list(arr))
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(9, "arr", '{"p":0.5}', spec_M)))$result
  expect_identical(res$structuredContent, list(p = 0.5))
  withr::local_options(mcplite.json.na = "string")
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(10, "arr", NULL, spec_M)))$result
  expect_match(res$content[[1]]$text, 'at `/p`, "NA" is not of types "null", "number"', fixed = TRUE)
})

test_that("J4.6: the first mismatch of each tool is noted once on stderr", {
  skip_if_not_installed("processx")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "a <- tool(function() tool_result(structured_content = list(n = 'x')), 'A.', name = 'a',",
    "  output_schema = type_object(n = type_integer()))",
    "b <- tool(function() tool_result(structured_content = list(n = 1.5)), 'B.', name = 'b',",
    "  output_schema = type_object(n = type_integer()))",
    "s <- mcp_handler(list(a, b))",
    "m <- '\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}'",
    "for (t in c('a', 'a', 'b', 'a')) {",
    "  out <- mcp_handle(s, sprintf('{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",%s}}', t, m))",
    "  cat(jsonlite::parse_json(out)$result$isError, '')",
    "}"
  ), script)
  res <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", script), error_on_status = FALSE,
    timeout = 60, env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)))
  expect_identical(res$stdout, "TRUE TRUE TRUE TRUE ", info = res$stderr)
  notes <- grep("^mcplite: ", strsplit(res$stderr, "\n")[[1]], value = TRUE)
  expect_length(notes, 2L)
  expect_match(notes[[1]], 'The result of tool `a` does not match its output schema: at `/n`, "x" is not of type "integer"',
    fixed = TRUE)
  expect_match(notes[[2]], "tool `b`.*1.5 is not of type \"integer\".*noted once per tool")
})

test_that("R4.4/P4: the stored fallback is kept; structured content is re-encoded at projection", {
  spec_default_options()
  late <- tool(function() {
    r <- tool_result(structured_content = list(v = pi))
    options(mcplite.json.digits = I(2))
    r
  }, "Options change after construction.", name = "late")
  on.exit(options(mcplite.json.digits = NULL), add = TRUE)
  expect_identical(
    mcp_handle(late, spec_call(1, "late", NULL, spec_M)),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\\"v\\":3.1416}"}],',
      '"isError":false,"structuredContent":{"v":3.1},', spec_S(), "}}"
    )
  )
})

test_that("R3.4/M4.3: NULL metadata values are null; the server identity replaces an author value", {
  t <- tool(function() {
    tool_result(
      content_text("x", meta = list(a = NULL, b = "k")),
      meta = list(`io.modelcontextprotocol/serverInfo` = "author", k = NULL)
    )
  }, "Meta.", name = "meta_tool")
  expect_identical(
    mcp_handle(t, spec_call(1, "meta_tool", NULL, spec_M)),
    paste0(
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"x","_meta":{"a":null,"b":"k"}}],',
      '"isError":false,"_meta":{"k":null,"io.modelcontextprotocol/serverInfo":{"name":"mcplite","version":"', spec_version(), '"}}}}'
    )
  )
  s <- mcp_handler(t)
  mcp_handle(s, spec_init("2025-11-25"))
  expect_identical(
    mcp_handle(s, spec_call(2, "meta_tool")),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"x","_meta":{"a":null,"b":"k"}}],',
      '"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":"author","k":null}}}'
    )
  )
})

test_that("P2/P3: block wire shapes from the constructors, and the 2024-11-05 replacement", {
  blocks <- tool(function() {
    tool_result(list(
      content_text("t", annotations = list(audience = "user", priority = 0, last_modified = "2025-01-01", `x-ext` = list(a = 1))),
      content_image("aW1n", "image/png", meta = list(m = TRUE)),
      content_audio("YXVk", "audio/wav"),
      content_resource_link("file:///r.csv", "r.csv", size = 0),
      content_resource("mem://x", text = "hello", mime_type = "text/plain",
                       annotations = list(priority = 1), meta = list(o = "outer")),
      content_resource("mem://y", blob = "Ymxi"),
      content_audio("YXVk", "audio/wav")
    ), is_error = TRUE, structured_content = list(a = 1), meta = list(r = 1))
  }, "Every block.", name = "blocks")
  s <- mcp_handler(blocks)
  mcp_handle(s, spec_init("2025-06-18"))
  expect_identical(
    mcp_handle(s, spec_call(2, "blocks")),
    paste0(
      '{"jsonrpc":"2.0","id":2,"result":{"content":[',
      '{"type":"text","text":"t","annotations":{"audience":["user"],"priority":0,"lastModified":"2025-01-01","x-ext":{"a":1}}},',
      '{"type":"image","data":"aW1n","mimeType":"image/png","_meta":{"m":true}},',
      '{"type":"audio","data":"YXVk","mimeType":"audio/wav"},',
      '{"type":"resource_link","uri":"file:///r.csv","name":"r.csv","size":0},',
      '{"type":"resource","resource":{"uri":"mem://x","mimeType":"text/plain","text":"hello"},"annotations":{"priority":1},"_meta":{"o":"outer"}},',
      '{"type":"resource","resource":{"uri":"mem://y","blob":"Ymxi"}},',
      '{"type":"audio","data":"YXVk","mimeType":"audio/wav"}',
      '],"isError":true,"structuredContent":{"a":1},"_meta":{"r":1}}}'
    )
  )
  mcp_handle(s, spec_init("2024-11-05", id = 3))
  res <- jsonlite::parse_json(mcp_handle(s, spec_call(4, "blocks")))
  expect_identical(names(res$result), c("content", "isError"))
  expect_true(res$result$isError)
  expect_length(res$result$content, 1L)
  text <- res$result$content[[1]]$text
  expect_match(text, "2024-11-05", fixed = TRUE)
  # distinct types, first-occurrence order: audio before resource_link
  expect_identical(
    regmatches(text, gregexpr("audio|resource_link", text))[[1]],
    c("audio", "resource_link")
  )
})

test_that("R7.1: mcp_handle() takes JSON text, json objects and fixed-encoded lists", {
  add <- spec_add_numbers()
  s <- mcp_handler(add)
  expect_identical(
    mcp_handle(s, list(jsonrpc = "2.0", id = 12, method = "ping", params = list(x = 0.1, y = NULL))),
    '{"jsonrpc":"2.0","id":12,"result":{}}'
  )
  expect_identical(
    mcp_handle(s, jsonlite::toJSON(list(jsonrpc = "2.0", id = "j", method = "ping"), auto_unbox = TRUE)),
    '{"jsonrpc":"2.0","id":"j","result":{}}'
  )
  # The list is fixed-encoded: doubles keep full precision.
  out <- mcp_handle(s, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = "add_numbers", arguments = list(x = 0.123456789, y = 1e-10)), `_meta` = NULL
  ))
  expect_identical(out, '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: server not initialized"}}')
  precise <- tool(function(x) sprintf("%.10f", x), "Formats x.", name = "precise",
                  arguments = list(x = type_number()))
  out <- mcp_handle(precise, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(
      name = "precise", arguments = list(x = 0.123456789),
      `_meta` = list(`io.modelcontextprotocol/protocolVersion` = "2026-07-28",
                     `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character()))
    )
  ))
  expect_match(out, '"text":"0.1234567890"', fixed = TRUE)
  # Notifications, client responses and blank lines: NULL.
  expect_null(mcp_handle(s, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'))
  expect_null(mcp_handle(s, '{"jsonrpc":"2.0","id":1,"result":{}}'))
  expect_null(mcp_handle(s, ""))
})

test_that("section 0: validation errors are mcplite_error and name the argument in backticks", {
  cases <- list(
    list(quote(tool(function() 1, "d", name = "x", arguments = list(a = 1))), "arguments"),
    list(quote(type_enum(character())), "values"),
    list(quote(type_array(1)), "items"),
    list(quote(type_object(type_string())), ".description"),
    list(quote(type_object(.required = NA)), ".required"),
    list(quote(type_string(required = "yes")), "required"),
    list(quote(type_from_schema(text = "{}", path = "x.json")), "path"),
    list(quote(content_text(1)), "text"),
    list(quote(content_image("d", "")), "mime_type"),
    list(quote(content_resource_link("u", "n", size = -1)), "size"),
    list(quote(content_text("x", annotations = list(priority = 2))), "annotations$priority"),
    list(quote(content_text("x", annotations = list(audience = "robot"))), "annotations$audience"),
    list(quote(content_text("x", annotations = list(lastModified = "x"))), "annotations$lastModified"),
    list(quote(content_text("x", meta = list(1))), "meta"),
    list(quote(tool_result(content_text("x"), is_error = NA)), "is_error"),
    list(quote(tool_result()), "content"),
    list(quote(tool_result(structured_content = new.env())), "structured_content"),
    list(quote(mcp_handler(list(), instructions = 1)), "instructions"),
    list(quote(mcp_handle(list(), 42)), "message")
  )
  for (case in cases) {
    err <- tryCatch(eval(case[[1]]), error = function(e) e)
    expect_s3_class(err, "mcplite_error")
    expect_true(
      grepl(paste0("`", case[[2]], "`"), conditionMessage(err), fixed = TRUE),
      info = paste(deparse(case[[1]]), "->", conditionMessage(err))
    )
  }
  withr::with_options(list(mcplite.json.null = "none"), {
    err <- tryCatch(tool_result(content_text("x")), error = function(e) e)
    expect_s3_class(err, "mcplite_error")
    expect_match(conditionMessage(err), "`mcplite.json.null`.*\"null\".*\"list\"")
  })
})

test_that("section 0: jsonlite is the only import outside R's base packages", {
  desc <- utils::packageDescription("mcplite")
  imports <- trimws(strsplit(desc$Imports %||% "", ",")[[1]])
  imports <- sub("\\s*\\(.*\\)$", "", imports[nzchar(imports)])
  base <- rownames(utils::installed.packages(priority = "base"))
  expect_identical(setdiff(imports, base), "jsonlite")
  deps <- trimws(strsplit(desc$Depends %||% "", ",")[[1]])
  expect_true(all(grepl("^R( |\\(|$)", deps[nzchar(deps)])))
})

test_that("documentation: every export has a help topic with examples", {
  skip_if(!nzchar(system.file("help", package = "mcplite")), "no installed help")
  db <- tools::Rd_db("mcplite")
  aliases <- unlist(lapply(db, tools:::.Rd_get_metadata, "alias"))
  exports <- getNamespaceExports("mcplite")
  expect_identical(setdiff(exports, aliases), character())
  has_examples <- vapply(db, function(rd) length(tools:::.Rd_get_section(rd, "examples")) > 0L, TRUE)
  for (fn in exports) {
    topic <- names(db)[vapply(db, function(rd) fn %in% tools:::.Rd_get_metadata(rd, "alias"), TRUE)]
    expect_true(length(topic) == 1L && has_examples[[topic]], info = fn)
  }
})

# ---------------------------------------------------------------------------
# Section 7 and W2.2 end to end: `Rscript --vanilla server.R` over pipes.

spec_server_script <- function(after = TRUE) {
  f <- tempfile("spec-server-", fileext = ".R")
  writeLines(c(
    "library(mcplite)",
    "proc_fd <- dir.exists('/proc/self/fd')",
    "orig <- if (proc_fd) Sys.readlink(c('/proc/self/fd/0', '/proc/self/fd/1')) else c('', '')",
    "fds_before <- if (proc_fd) sort(list.files('/proc/self/fd')) else character()",
    "add <- tool(function(x, y) x + y, 'Add.', name = 'add',",
    "  arguments = list(x = type_number(), y = type_number()))",
    "sleepy <- tool(function(seconds) { Sys.sleep(seconds); 'woke up' }, 'Sleep.', name = 'sleepy',",
    "  arguments = list(seconds = type_number()))",
    "warns <- tool(function() { warning('spec-audit-warning'); 'warned' }, 'Warn.', name = 'warns')",
    "nested <- tool(function() mcp_server(list()), 'Start a second server.', name = 'nested')",
    "# S1.2: children must not inherit the protocol descriptors.",
    "fds <- tool(function() {",
    "  if (!proc_fd) return('no /proc')",
    "  child <- system('ls -l /proc/self/fd/', intern = TRUE)",
    "  paste(vapply(orig, function(t) any(grepl(paste0('-> ', t), child, fixed = TRUE)), TRUE), collapse = ',')",
    "}, 'Inspect a child process.', name = 'fds')",
    "mcp_server(list(add, sleepy, warns, nested, fds))",
    "# S2: descriptors restored and private ones closed after returning.",
    "fds_after <- if (proc_fd) sort(list.files('/proc/self/fd')) else character()",
    "now <- if (proc_fd) Sys.readlink(c('/proc/self/fd/0', '/proc/self/fd/1')) else c('', '')",
    if (after) "cat('AFTER', identical(now, orig), identical(fds_after, fds_before), '\\n')"
  ), f)
  f
}

spec_env <- function() c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))

spec_rscript <- function() file.path(R.home("bin"), "Rscript")

spec_lines <- function(x) {
  x <- sub("\n$", "", x)
  if (nzchar(x)) strsplit(x, "\n", fixed = TRUE)[[1]] else character()
}

test_that("W2.2, S1.2, S2, S5, S8, R5.2.7, C4.3 and C5.1 end to end", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- spec_server_script()
  on.exit(unlink(script), add = TRUE)
  input <- c(
    spec_init("2025-11-25"),
    '{"jsonrpc":"2.0","id":99,"result":{}}',
    spec_call(2, "sleepy", '{"seconds":0.5}'),
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"stop"}}',
    '{"jsonrpc":"2.0","id":3,"method":"ping"}',
    spec_call(4, "fds"),
    spec_call(5, "nested"),
    spec_call(6, "add", '{"x":1,"y":2}')
  )
  f <- tempfile(fileext = ".jsonl")
  on.exit(unlink(f), add = TRUE)
  writeLines(input, f)
  res <- processx::run(spec_rscript(), c("--vanilla", script), stdin = f,
                       error_on_status = FALSE, timeout = 60, env = spec_env())
  out <- spec_lines(res$stdout)
  expect_identical(res$status, 0L)
  # RULES C4.3: the cancellation names call 2, which is dropped unanswered;
  # RULES C5.1: the legacy ping may be answered before earlier requests, so
  # answers are matched by id. Everything else keeps its order (S3).
  after <- if (dir.exists("/proc/self/fd")) "AFTER TRUE TRUE " else character()
  expect_identical(tail(out, length(after)), after)
  answers <- head(out, length(out) - length(after))
  ids <- vapply(answers, function(l) as.character(jsonlite::parse_json(l)$id), "", USE.NAMES = FALSE)
  expect_setequal(ids, c("1", "3", "4", "5", "6"))
  expect_identical(ids[ids != "3"], c("1", "4", "5", "6"))
  by_id <- stats::setNames(answers, ids)
  expect_match(by_id[["1"]], '^\\{"jsonrpc":"2.0","id":1,"result":\\{"protocolVersion":"2025-11-25"')
  expect_identical(by_id[["3"]], '{"jsonrpc":"2.0","id":3,"result":{}}')
  if (dir.exists("/proc/self/fd")) {
    expect_identical(by_id[["4"]], '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"FALSE,FALSE"}],"isError":false}}')
  }
  nested <- jsonlite::parse_json(by_id[["5"]])$result
  expect_true(nested$isError)
  expect_match(nested$content[[1]]$text, "already running", fixed = TRUE)
  expect_identical(by_id[["6"]], '{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"3"}],"isError":false}}')
  # S8/W2.2: the only stderr output is one diagnostic for the client response.
  err <- spec_lines(res$stderr)
  expect_length(err, 1L)
  expect_match(err[1], "^mcplite: ")
})

test_that("S6: a tool's warning reaches stderr while the server still runs", {
  skip_on_cran()
  skip_if_not_installed("processx")
  script <- spec_server_script()
  on.exit(unlink(script), add = TRUE)
  p <- processx::process$new(spec_rscript(), c("--vanilla", script),
                             stdin = "|", stdout = "|", stderr = "|", env = spec_env())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  p$write_input(paste0(spec_init("2025-11-25"), "\n", spec_call(2, "warns"), "\n"))
  out <- character()
  err <- ""
  deadline <- Sys.time() + 30
  while ((length(out) < 2L || !grepl("spec-audit-warning", err, fixed = TRUE)) && Sys.time() < deadline) {
    p$poll_io(200)
    out <- c(out, p$read_output_lines())
    err <- paste0(err, p$read_error())
  }
  expect_true(p$is_alive())
  expect_identical(out[2], '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"warned"}],"isError":false}}')
  expect_match(err, "spec-audit-warning", fixed = TRUE)
  close(p$get_input_connection())
  p$wait(30000)
  expect_identical(p$get_exit_status(), 0L)
})

test_that("S7: SIGTERM keeps its default effect", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(Sys.which("mkfifo") == "", "mkfifo is not available")
  # The shell starts the server, sends `initialize`, waits for the answer,
  # sends SIGTERM and reports the status `wait` sees: 128 + 15 when the
  # server died of the signal. (processx occasionally cannot collect the
  # status of a signalled child and reports NA, so it is not used here.)
  script <- spec_server_script()
  dir <- tempfile("spec-sigterm-")
  dir.create(dir)
  on.exit(unlink(c(script, dir), recursive = TRUE), add = TRUE)
  writeLines(spec_init("2025-11-25"), file.path(dir, "init"))
  sh <- paste(
    "d=\"$1\"; mkfifo \"$d/in\"",
    "\"$2\" --vanilla \"$3\" < \"$d/in\" > \"$d/out\" 2> \"$d/err\" & pid=$!",
    "exec 3> \"$d/in\"; cat \"$d/init\" >&3",
    "i=0; while [ ! -s \"$d/out\" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done",
    "kill -TERM $pid; wait $pid; echo \"status=$?\"",
    sep = "\n"
  )
  res <- system2("sh", c("-c", shQuote(sh), "sh", shQuote(dir), shQuote(spec_rscript()), shQuote(script)),
    stdout = TRUE, stderr = FALSE, env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = .Platform$path.sep)))
  )
  expect_length(readLines(file.path(dir, "out")), 1L)
  expect_identical(res, paste0("status=", 128L + tools::SIGTERM))
})

test_that("R5.2.8: an interactive session on a terminal refuses to serve", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  p <- processx::process$new(
    file.path(R.home("bin"), "R"), c("--vanilla", "--interactive", "--no-echo", "--no-readline"),
    pty = TRUE, env = spec_env()
  )
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  p$write_input(paste0(
    "t <- mcplite::tool(function() 1, 'd', name = 'a'); ",
    "r <- tryCatch(mcplite::mcp_server(t), mcplite_error = function(e) conditionMessage(e)); ",
    "cat('RESULT:', interactive(), isatty(stdin()), r, '\\n'); q('no')\n"
  ))
  out <- ""
  deadline <- Sys.time() + 60
  while (Sys.time() < deadline) {
    p$poll_io(200)
    chunk <- tryCatch(p$read_output(), error = function(e) NULL)
    if (is.null(chunk)) break
    out <- paste0(out, chunk)
    if (!p$is_alive() && grepl("RESULT:", out, fixed = TRUE)) break
  }
  expect_match(out, "RESULT: TRUE TRUE `mcp_server()` blocks the console", fixed = TRUE)
  expect_match(out, "Rscript --vanilla /absolute/path/to/server.R", fixed = TRUE)
})

test_that("S7/S8: an interrupt while idle is ignored with exactly one stderr diagnostic", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- spec_server_script()
  on.exit(unlink(script), add = TRUE)
  p <- processx::process$new(spec_rscript(), c("--vanilla", script),
                             stdin = "|", stdout = "|", stderr = "|", env = spec_env())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  read_until <- function(n, pattern = NULL, timeout = 30) {
    out <- character()
    err <- ""
    deadline <- Sys.time() + timeout
    while (Sys.time() < deadline) {
      p$poll_io(200)
      out <- c(out, p$read_output_lines())
      err <- paste0(err, p$read_error())
      if (length(out) >= n && (is.null(pattern) || grepl(pattern, err))) break
    }
    list(out = out, err = err)
  }
  p$write_input(paste0(spec_init("2025-11-25"), "\n"))
  first <- read_until(1L)
  expect_length(first$out, 1L)
  p$interrupt()
  second <- read_until(0L, "mcplite: ")
  p$write_input('{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
  third <- read_until(1L)
  expect_identical(third$out, '{"jsonrpc":"2.0","id":2,"result":{}}')
  close(p$get_input_connection())
  p$wait(30000)
  expect_identical(p$get_exit_status(), 0L)
  err <- spec_lines(paste0(first$err, second$err, third$err, p$read_all_error()))
  expect_length(err, 1L)
  expect_match(err[1], "^mcplite: .*interrupt")
})

test_that("S4: a closed stdout ends serving with exactly one stderr diagnostic and status 0", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  script <- spec_server_script(after = FALSE)
  on.exit(unlink(script), add = TRUE)
  p <- processx::process$new(spec_rscript(), c("--vanilla", script),
                             stdin = "|", stdout = "|", stderr = "|", env = spec_env())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  close(p$get_output_connection())
  try(p$write_input(paste0(
    spec_init("2025-11-25"), "\n",
    strrep('{"jsonrpc":"2.0","id":2,"method":"ping"}\n', 50)
  )), silent = TRUE)
  p$wait(30000)
  expect_false(p$is_alive())
  expect_identical(p$get_exit_status(), 0L)
  err <- spec_lines(p$read_all_error())
  expect_length(err, 1L)
  expect_match(err[1], "^mcplite: .*broken pipe")
})
