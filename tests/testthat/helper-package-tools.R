# Helpers of the package_tools() tests (test-package-*.R).

# tools/call through the engine; returns the parsed result.
call_tool <- function(session, name, args = structure(list(), names = character())) {
  line <- mcp_handle(session, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = name, arguments = args, `_meta` = modern_meta())
  ))
  jsonlite::parse_json(line, simplifyVector = FALSE)$result
}

input_schema <- function(x) jsonlite::parse_json(tool_spec(x)$input_schema, simplifyVector = FALSE)

# The text a hand-written tool returning `value` sends (the server's ordinary
# conversion of the value of a direct call).
direct_text <- function(value) {
  direct <- tool(function() value, "Direct call.", name = "direct")
  call_tool(mcp_handler(direct), "direct")$content[[1]]$text
}

stats_tools <- function(...) package_tools("stats", quiet = TRUE, ...)

# The value of `expr` and every message it emitted (muffled).
with_messages <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = msgs)
}

# Install a small package made of `files` (a named list: path in the source
# -> lines; DESCRIPTION is written) into a new library, and return the
# library's path.
install_test_package <- function(name, files, version = "1.2.3") {
  src <- file.path(tempfile("mcplite-pkg-src-"), name)
  files$DESCRIPTION <- c(
    paste0("Package: ", name), paste0("Version: ", version), "Title: Fixture", "Description: Fixture.",
    "License: MIT", "Author: a", "Maintainer: a <a@example.org>", "Encoding: UTF-8"
  )
  for (f in names(files)) {
    dir.create(dirname(file.path(src, f)), recursive = TRUE, showWarnings = FALSE)
    writeLines(files[[f]], file.path(src, f))
  }
  lib <- tempfile("mcplite-fixture-lib-")
  dir.create(lib)
  status <- system2(file.path(R.home("bin"), "R"),
                    c("CMD", "INSTALL", "--no-test-load", paste0("--library=", shQuote(lib)), shQuote(src)),
                    stdout = FALSE, stderr = FALSE)
  if (status != 0) stop("could not install the test package ", name)
  lib
}
