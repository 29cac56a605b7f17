# The in-memory client (RULES K9): mcp_connect(tools = ) connects the
# engine's client to an engine server in this process, through the link of
# rust/mcplite-r/src/memory.rs. The connection is an ordinary one (R/client-connection.R,
# transport "memory"), so mcp_call(), mcp_list_tools(), mcp_server_info(),
# mcp_tools() and mcp_close() take it unchanged.

connect_memory <- function(tools, name, timeout, protocol) {
  # A handler brings its instructions and live-session tools along; other
  # tools are checked as mcp_server() checks them.
  handler <- if (inherits(tools, "mcplite_handler")) tools else mcp_handler(tools)
  name <- check_connection_name(name, "memory")
  ptr <- client_connect_memory(
    handler$spec, server_version(), handler$instructions,
    if (identical(protocol, "auto")) NULL else protocol, timeout, progress_interval(NULL),
    client_version(), name
  )
  n <- length(handler$spec$names)
  new_connection(ptr, name, "memory", paste0(n, if (n == 1L) " tool" else " tools", " in this R session"), timeout)
}
