# Drive an mcplite server script through a short MCP session over stdio and
# print the transcript (client lines start with "->", server lines with "<-").
# Usage: Rscript --vanilla demo-client.R /absolute/path/to/server.R
args <- commandArgs(trailingOnly = TRUE)
script <- if (length(args)) args[[1]] else system.file("examples", "server.R", package = "mcplite")
rscript <- file.path(R.home("bin"), "Rscript")
p <- processx::process$new(rscript, c("--vanilla", script), stdin = "|", stdout = "|", stderr = "|")
on.exit(p$kill(), add = TRUE)

modern_meta <- '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
exchange <- list(
  list('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0"}}}', TRUE),
  list('{"jsonrpc":"2.0","method":"notifications/initialized"}', FALSE),
  list('{"jsonrpc":"2.0","id":2,"method":"tools/list"}', TRUE),
  list('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_numbers","arguments":{"x":1.5,"y":2.25}}}', TRUE),
  list('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mean_sd","arguments":{"values":[1,2,4]}}}', TRUE),
  list('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}', TRUE),
  list(paste0('{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{', modern_meta, '}}'), TRUE),
  list(paste0('{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add_numbers","arguments":{"x":2,"y":3},', modern_meta, '}}'), TRUE)
)

read_line <- function(timeout = 20000) {
  deadline <- Sys.time() + timeout / 1000
  while (Sys.time() < deadline) {
    line <- p$read_output_lines(n = 1)
    if (length(line)) return(line)
    p$poll_io(200)
  }
  stop("the server did not answer in time; its stderr:\n", p$read_all_error())
}

for (step in exchange) {
  cat("->", step[[1]], "\n")
  p$write_input(paste0(step[[1]], "\n"))
  if (isTRUE(step[[2]])) {
    cat("<-", read_line(), "\n")
  } else {
    cat("   (notification: no response)\n")
  }
}
invisible(close(p$get_input_connection()))
invisible(p$wait(10000))
cat("server exited with status", p$get_exit_status(), "\n")
