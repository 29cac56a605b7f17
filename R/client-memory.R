# The in-memory client (RULES K9): mcp_connect(tools = ) connects the
# engine's client to an engine server in this process, through the link of
# rust/mcplite-r/src/memory.rs. The connection is an ordinary one (R/client-connection.R,
# transport "memory"), so mcp_call(), mcp_list_tools(), mcp_server_info(),
# mcp_tools() and mcp_close() take it unchanged.

connect_memory <- function(tools, name, timeout, protocol, instructions = NULL) {
  # A handler brings its instructions and live-session tools along; other
  # tools are checked as mcp_server() checks them.
  handler <- if (inherits(tools, "mcplite_handler")) {
    if (!is.null(instructions)) {
      abort_arg("`instructions` applies to tools, not to a handler (give them to `mcp_handler()`).")
    }
    tools
  } else {
    mcp_handler(tools, instructions = instructions)
  }
  name <- check_connection_name(name, "memory")
  # RULES K9.2: heartbeats only when MCPLITE_PROGRESS_INTERVAL asks for them.
  interval <- if (nzchar(Sys.getenv("MCPLITE_PROGRESS_INTERVAL"))) progress_interval(NULL) else Inf
  ptr <- client_connect_memory(
    handler$spec, server_version(), handler$instructions,
    if (identical(protocol, "auto")) NULL else protocol, timeout, interval,
    client_version(), name
  )
  n <- length(handler$spec$names)
  target <- paste0(n, if (n == 1L) " tool" else " tools", " in this R session")
  conn <- new_connection(ptr, name, "memory", target, timeout)
  conn$spec <- handler$spec
  conn
}

# RULES K9.4: an in-memory call's tool warnings and messages are collected
# while it runs and signalled again from mcp_call(), in order, once it
# returned (so expect_warning() and expect_message() see them, and nothing
# is written to standard error).
memory_call <- function(x, call) {
  sink <- new.env(parent = emptyenv())
  sink$conditions <- list()
  restore <- collect_tool_conditions(x$spec, sink)
  # The tool runs now, in this process: as a server runs it (R/server.R).
  old <- serving_options()
  ev <- tryCatch(call(), finally = {
    options(old)
    restore()
  })
  for (cnd in sink$conditions) {
    if (inherits(cnd, "warning")) warning(cnd) else message(cnd)
  }
  ev
}
