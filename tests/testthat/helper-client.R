# Helpers of the MCP client's tests (test-client*.R): mcplite's own server
# scripts, small shell-script servers, and the checks those tests share.

# A server script of tests/clients/servers (skips when the package sources
# are not there, as under R CMD check).
client_server_script <- function(name = "everything.R") {
  path <- test_path("..", "clients", "servers", name)
  skip_if_not(file.exists(path), paste("test server script not found:", path))
  normalizePath(path)
}

# A server written in sh. The client numbers its requests 1, 2, 3, ... (the
# `server/discover` probe is 1, `initialize` 2, the first call 3), so a script
# can answer without parsing JSON.
legacy_sh <- paste(
  "read probe; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}'",
  "read init; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}'",
  "read initialized",
  sep = "\n"
)

sh_connect <- function(body, ..., name = "sh") {
  mcp_connect("/bin/sh", c("-c", paste(legacy_sh, body, sep = "\n")), ..., name = name)
}

# The first mcp_call() with arguments lists the tools (request 3, for their
# input schemas, RULES K5.2): a server for such calls answers that listing
# (no tools here) and numbers its calls from 4.
list_sh <- "read list; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}'"

process_alive <- function(pid) {
  stat <- suppressWarnings(tryCatch(readLines(sprintf("/proc/%d/stat", pid), warn = FALSE),
                                    error = function(e) character()))
  length(stat) > 0L && !grepl("^\\S+ \\(.*\\) Z", stat[[1L]])
}

expect_client_error <- function(expr, class) {
  err <- tryCatch({
    force(expr)
    NULL
  }, error = function(e) e)
  expect_s3_class(err, class)
  expect_s3_class(err, "mcplite_error_client")
  expect_s3_class(err, "mcplite_error")
  invisible(err)
}
