# The arguments of the MCP client's calls (R/client-arguments.R): shaped
# by the tool's input schema from the server's listing.

skip_on_cran()
skip_if_not_installed("withr")

test_that("arguments are shaped by the tool's input schema from tools/list (RULES K5.2)", {
  schema <- paste0(
    '{"type":"object","properties":{',
    '"values":{"type":"array","items":{"type":["number","null"]}},',
    '"opts":{"type":"object"},',
    '"note":{"type":["string","null"]},',
    '"n":{"type":"number"},',
    '"rows":{"type":"array","items":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}},',
    '"either":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}}'
  )
  listing <- sprintf(
    "read list; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":%s}]}}'",
    schema
  )
  reply <- function(id) sprintf("read call; echo \"$call\" >&2; echo '{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[]}}'", id)
  conn <- sh_connect(paste(listing, reply(4), reply(5), reply(6), "cat >/dev/null", sep = "\n"))
  on.exit(mcp_close(conn))
  # the `arguments` text of the i-th call the server received (it writes
  # each call to its stderr before answering)
  arguments_sent <- function(i) {
    deadline <- Sys.time() + 10
    while (length(mcp_stderr(conn)) < i && Sys.time() < deadline) Sys.sleep(0.02)
    sub('^.*"arguments":(.*)}}$', "\\1", mcp_stderr(conn)[[i]])
  }
  mcp_call(conn, "t", list(values = 5, opts = list(), note = NA, n = 1, rows = list(list(tags = "a")), either = "x"))
  expect_identical(
    (arguments_sent(1)),
    '{"values":[5],"opts":{},"note":null,"n":1,"rows":[{"tags":["a"]}],"either":"x"}'
  )
  mcp_call(conn, "t", list(values = c(1, NA), note = "fine", n = NA_real_))
  # NA elements become null where the items allow it; `n` does not allow null
  expect_identical((arguments_sent(2)), '{"values":[1,null],"note":"fine","n":"NA"}')
  # a tool the server did not list: the encoder's own rules
  mcp_call(conn, "unlisted", list(values = 5, opts = list()))
  expect_identical((arguments_sent(3)), '{"values":5,"opts":[]}')
})
