# Client benchmark, mcplite (R): N sequential `tools/call add` round trips
# through mcp_call() against the server given on the command line.
#   Rscript --vanilla bench/client/client_bench.R N WARMUP command [args...]
# Prints one JSON line: protocol, per-call p50/p90/p99/mean (us), calls/s and
# the client's CPU time per call (this R process and its threads).
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[[1]])
warmup <- as.integer(args[[2]])
cmd <- args[[3]]
cargs <- args[-(1:3)]
suppressPackageStartupMessages(library(mcplite))
env <- c(BENCH_TOOLS = "1", R_LIBS = paste(.libPaths(), collapse = ":"))
# BENCH_PROTOCOL: a version to insist on (default: negotiate)
conn <- mcp_connect(cmd, cargs, env = env, name = "bench", protocol = Sys.getenv("BENCH_PROTOCOL", "auto"))
version <- mcp_server_info(conn)$protocol_version
for (i in seq_len(warmup)) mcp_call(conn, "add", list(x = i, y = 1))
times <- numeric(n)
cpu0 <- proc.time()
t_start <- Sys.time()
for (i in seq_len(n)) {
  t0 <- Sys.time()
  res <- mcp_call(conn, "add", list(x = i, y = 0.5))
  times[[i]] <- as.double(Sys.time()) - as.double(t0)
}
wall <- as.double(Sys.time()) - as.double(t_start)
cpu <- proc.time() - cpu0
stopifnot(identical(res$content[[1]]$text, paste0(n, ".5")))
mcp_close(conn)
us <- times * 1e6
q <- stats::quantile(us, c(0.5, 0.9, 0.99), names = FALSE)
cat(sprintf(
  '{"client":"%s","protocol":"%s","n":%d,"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,"mean_us":%.1f,"calls_per_s":%.0f,"client_cpu_us":%.1f}\n',
  Sys.getenv("BENCH_CLIENT_LABEL", "mcplite-r"), version, n, q[[1]], q[[2]], q[[3]], mean(us), n / wall, (cpu[["user.self"]] + cpu[["sys.self"]]) / n * 1e6
))
