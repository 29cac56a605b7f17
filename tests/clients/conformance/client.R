# The mcplite client under the official conformance suite's client mode
# (tests/suites/21-conformance.sh): `conformance client --command "Rscript
# --vanilla client.R"` starts a test server per scenario, appends its URL to
# the command and names the scenario in MCP_CONFORMANCE_SCENARIO (and, for
# some sign-in scenarios, gives a pre-registered client in
# MCP_CONFORMANCE_CONTEXT). The client connects with the default
# `protocol = "auto"` (RULES K2), signing in when the server asks (RULES
# K10) with a user agent that fetches the authorization page and follows its
# redirect to the client's loopback listener, as a browser would once the
# user signed in; it lists the tools and does what the scenario asks for;
# the suite judges what reached its servers. Exit status 0 when the client
# saw what it expected.
library(mcplite)
args <- commandArgs(trailingOnly = TRUE)
url <- args[[length(args)]]
scenario <- Sys.getenv("MCP_CONFORMANCE_SCENARIO")
context <- Sys.getenv("MCP_CONFORMANCE_CONTEXT")
context <- if (nzchar(context)) jsonlite::fromJSON(context) else list()

# The browser: fetch the page, follow the redirect to the loopback listener.
options(mcplite.oauth_user_agent = function(page) {
  con <- url(page, method = "libcurl")
  on.exit(close(con))
  invisible(readLines(con, warn = FALSE))
})
oauth <- list(
  cache_dir = file.path(tempdir(), "oauth"),
  # The client's metadata document, for servers that take one as client ID.
  client_metadata_url = "https://conformance-test.local/client-metadata.json"
)
if (!is.null(context$client_id) && startsWith(scenario, "auth/")) {
  oauth$client_info <- context[intersect(names(context), c("client_id", "client_secret"))]
}
# Cross-app access: the ID token the user got from their identity provider,
# kept where a program keeps a secret (an environment variable).
if (!is.null(context$idp_id_token)) {
  Sys.setenv(MCP_CONFORMANCE_IDP_ID_TOKEN = context$idp_id_token)
  oauth$identity_provider <- list(
    token_endpoint = context$idp_token_endpoint, client_id = context$idp_client_id,
    id_token_env = "MCP_CONFORMANCE_IDP_ID_TOKEN"
  )
}
# The client-credentials extension with `private_key_jwt`: the key as a
# program would keep it, in a file only the user reads. The grant itself is
# chosen as a user leaves it: by default (the server offers only it).
if (!is.null(context$private_key_pem)) {
  key <- file.path(tempdir(), "client-key.pem")
  file.create(key)
  Sys.chmod(key, "0600")
  writeLines(context$private_key_pem, key)
  oauth$client_info$private_key_file <- key
  if (!is.null(context$signing_algorithm)) {
    oauth$client_info$token_endpoint_auth_signing_alg <- context$signing_algorithm
  }
}

# A user who accepts what the server's form proposes (RULES K12.4): the
# answer is the form's defaults.
accept_defaults <- function(question) question$defaults
conn <- mcp_connect(url = url, name = "conformance", timeout = 20, oauth = oauth,
                    elicitation = accept_defaults)
info <- mcp_server_info(conn)
cat("connected:", info$protocol_version, "(", info$era, ")\n")
tools <- mcp_list_tools(conn)
cat("tools:", names(tools), "\n")
text <- if (startsWith(scenario, "auth/")) {
  if (length(tools) > 0L) mcp_call(conn, names(tools)[[1]])$content[[1]]$text else ""
} else {
  switch(scenario,
    initialize = "",
    tools_call = mcp_call(conn, "add_numbers", list(a = 2, b = 40))$content[[1]]$text,
    "sse-retry" = mcp_call(conn, "test_reconnection", list())$content[[1]]$text,
    "elicitation-sep1034-client-defaults" = mcp_call(conn, "test_client_elicitation_defaults")$content[[1]]$text,
    stop("unknown scenario \"", scenario, "\"")
  )
}
cat("result:", text, "\n")
mcp_close(conn)
