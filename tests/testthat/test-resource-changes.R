# RULES U3.2 (issue 45 item 3): tools change the server's resources with
# mcp_resource_set() and mcp_resource_remove(). The notifications
# subscribers hear are tested in the engine (rust/engine/tests/
# subscriptions.rs, http/listen.rs) and with the official SDKs
# (tests/clients/python/test_subscriptions.py).

rpc <- function(h, method, params = NULL, id = 1) {
  msg <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(params)) msg$params <- params
  jsonlite::fromJSON(mcp_handle(h, jsonlite::toJSON(msg, auto_unbox = TRUE)), simplifyVector = FALSE)
}

notes_tools <- function() {
  notes <- character()
  list(
    tool(function(text) {
      notes <<- c(notes, text)
      mcp_resource_set(resource("notes://all", paste(notes, collapse = "\n"), title = "Notes"))
      mcp_resource_set(resource(paste0("notes://", length(notes)), text))
      length(notes)
    }, name = "add_note", description = "Add a note.", arguments = list(text = type_string())),
    tool(function(n, fail = FALSE) {
      mcp_resource_remove(paste0("notes://", n))
      if (fail) stop("changed my mind")
      "removed"
    }, name = "drop_note", description = "Remove a note.",
    arguments = list(n = type_integer(), fail = type_boolean(required = FALSE))),
    tool(function() mcp_resource_set("notes://all"), name = "bad_set", description = "A wrong argument.")
  )
}

handler_with <- function(tools, ..., resource_changes = TRUE) {
  h <- mcp_handler(tools, ..., resource_changes = resource_changes)
  rpc(h, "initialize", list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
                            clientInfo = list(name = "t", version = "1")), id = 0)
  h
}

call_tool <- function(h, name, args = setNames(list(), character())) {
  rpc(h, "tools/call", list(name = name, arguments = args))$result
}

read_text <- function(h, uri) {
  r <- rpc(h, "resources/read", list(uri = uri))
  if (is.null(r$result)) r$error$code else r$result$contents[[1]]$text
}

test_that("U3.2: a tool adds, replaces and removes resources; reads and the list follow", {
  h <- handler_with(notes_tools(), resources = resource("notes://all", "", title = "Notes"))
  expect_identical(call_tool(h, "add_note", list(text = "milk"))$content[[1]]$text, "1")
  expect_identical(call_tool(h, "add_note", list(text = "eggs"))$content[[1]]$text, "2")
  expect_identical(read_text(h, "notes://all"), "milk\neggs")
  expect_identical(read_text(h, "notes://2"), "eggs")
  listed <- rpc(h, "resources/list")$result$resources
  expect_identical(vapply(listed, function(r) r$uri, ""), c("notes://all", "notes://1", "notes://2"))
  expect_identical(listed[[1]][c("title", "size")], list(title = "Notes", size = 9L))
  expect_false(isTRUE(call_tool(h, "drop_note", list(n = 1L))$isError))
  expect_identical(read_text(h, "notes://1"), -32002L)
  expect_identical(read_text(h, "notes://2"), "eggs")
})

test_that("U3.2: a tool that fails changes nothing", {
  h <- handler_with(notes_tools(), resources = resource("notes://all", ""))
  call_tool(h, "add_note", list(text = "milk"))
  r <- call_tool(h, "drop_note", list(n = 1L, fail = TRUE))
  expect_true(r$isError)
  expect_identical(read_text(h, "notes://1"), "milk")
})

test_that("U3.2: changes need a tool of a server with resources, and a resource", {
  expect_error(mcp_resource_set(resource("notes://x", "x")), "call it from a tool",
               class = "mcplite_error_resources")
  expect_error(mcp_resource_remove("notes://x"), "mcp_resource_remove", class = "mcplite_error_resources")
  expect_error(mcp_resource_set("notes://x"), "`x` must be a resource", class = "mcplite_error_argument")
  expect_error(mcp_resource_remove(1), "`uri`", class = "mcplite_error_argument")
  # A server that does not allow changes (the default): the tool fails,
  # saying why, and the resource and capability stay as given.
  h <- handler_with(notes_tools(), resources = resource("notes://all", "x"), resource_changes = FALSE)
  r <- call_tool(h, "add_note", list(text = "milk"))
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "resource_changes = TRUE")
  expect_identical(read_text(h, "notes://all"), "x")
  expect_identical(rpc(h, "initialize", list(protocolVersion = "2025-11-25",
                                             capabilities = setNames(list(), character()),
                                             clientInfo = list(name = "t", version = "1")))$result$capabilities$resources,
                   list(subscribe = TRUE, listChanged = FALSE))
  expect_error(mcp_handler(notes_tools(), resource_changes = "yes"), "`resource_changes`",
               class = "mcplite_error_argument")
  # A server without resources: the tool fails, saying why, and the server
  # still has none.
  h <- handler_with(notes_tools())
  r <- call_tool(h, "add_note", list(text = "milk"))
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "with at least one resource")
  expect_identical(rpc(h, "resources/list")$error$code, -32601L)
  # What is not a resource is refused, inside a tool too.
  h <- handler_with(notes_tools(), resources = resource("notes://all", ""))
  r <- call_tool(h, "bad_set")
  expect_true(r$isError)
  expect_match(r$content[[1]]$text, "must be a resource")
})

test_that("U3.2: a URI only a template answered reads the resource set for it", {
  h <- handler_with(notes_tools(), resources = resource_template("notes://{n}", "note {{n}}: none yet"))
  expect_identical(read_text(h, "notes://1"), "note 1: none yet")
  call_tool(h, "add_note", list(text = "milk"))
  expect_identical(read_text(h, "notes://1"), "milk")
  expect_identical(read_text(h, "notes://2"), "note 2: none yet")
})

test_that("U3.2: with workers the changes come with the result and the server makes them", {
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  script <- file.path(dir, "server.R")
  writeLines(c(
    "library(mcplite)",
    "pid <- tool(function(text) {",
    "  mcp_resource_set(resource('notes://last', paste(text, Sys.getpid())))",
    "  Sys.getpid()",
    "}, name = 'note', description = 'Note.', arguments = list(text = type_string()))",
    "mcp_server(pid, resources = resource('notes://last', ''), workers = 2, resource_changes = TRUE)"
  ), script)
  conn <- local_mcp_connect_script(script)
  worker <- mcp_call(conn, "note", list(text = "hello"))$content[[1]]$text
  expect_false(identical(worker, as.character(Sys.getpid())))
  expect_identical(mcp_read_resource(conn, "notes://last")[[1]]$text, paste("hello", worker))
})

test_that("U3.2: confined workers never change resources", {
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  script <- file.path(dir, "server.R")
  writeLines(c(
    "library(mcplite)",
    "one <- tool(function() 1, name = 'one', description = 'One.')",
    "mcp_server(one, resources = resource('notes://last', ''), confine = TRUE, resource_changes = TRUE)"
  ), script)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)),
                                  stdout = TRUE, stderr = TRUE, input = character(),
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))))
  expect_match(paste(out, collapse = "\n"), "cannot be used with confined workers")
  expect_false(identical(attr(out, "status"), NULL))
})
