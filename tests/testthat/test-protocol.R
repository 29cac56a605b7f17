# The protocol constants R uses come from the engine's registries
# (rust/engine/src/version.rs, codes.rs) through the bridge.

test_that("the version lists are the engine's", {
  p <- mcplite:::protocol_constants()
  discover <- jsonlite::parse_json(mcp_handle(list(), list(
    jsonrpc = "2.0", id = 1L, method = "server/discover",
    params = list(`_meta` = list(
      `io.modelcontextprotocol/protocolVersion` = p$modern,
      `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
    ))
  )))
  expect_identical(unlist(discover$result$supportedVersions), p$server_versions)
  expect_identical(p$client_versions, p$server_versions)
  expect_true(p$modern %in% p$client_accepts)
  # The client accepts 2025-03-26 from a server but never insists on it.
  expect_true("2025-03-26" %in% p$client_accepts)
  expect_false("2025-03-26" %in% p$client_versions)
  err <- expect_error(mcp_connect("x", protocol = "1999-01-01"), class = "mcplite_error")
  expect_match(conditionMessage(err), paste0("\"", p$client_versions, "\"", collapse = ", "), fixed = TRUE)
})

test_that("the error codes are the engine's", {
  codes <- mcplite:::protocol_constants()$codes
  expect_type(codes, "integer")
  expect_identical(codes[["HEADER_MISMATCH"]], -32020L)
  expect_identical(codes[["UNSUPPORTED_VERSION"]], -32022L)
  expect_identical(mcplite:::protocol_code("INVALID_PARAMS"), -32602L)
  out <- jsonlite::parse_json(mcp_handle(list(), "{bad"))
  expect_identical(out$error$code, mcplite:::protocol_code("PARSE_ERROR"))
  expect_error(mcplite:::protocol_code("NO_SUCH_CODE"), "unknown protocol code")
})
