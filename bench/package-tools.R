# Server start-up with and without package_tools("stats") (issue 19).
#
#   R_LIBS=<library with mcplite> Rscript --vanilla bench/package-tools.R [rounds]
#
# For each variant, `rounds` times: spawn `Rscript --vanilla
# bench/servers/package_tools.R`, send `initialize` and `tools/list`, and record
# the wall time from spawn to the initialize response and to the tools/list
# response, plus the server's CPU time (user + system) up to the latter.
# Variants: "one tool" (baseline), "stats, warm cache" (help pages already
# rendered in the cache directory), "stats, cold cache" (empty cache
# directory every round). Also times package_tools("stats") and
# mcp_manifest() in this process. Prints a Markdown table (medians).
#
#   R_LIBS=<lib> Rscript --vanilla bench/package-tools.R [rounds] in-process
#
# times only the in-process part (no servers spawned), for comparing two
# builds quickly.
args <- commandArgs(TRUE)
rounds <- if (length(args)) as.integer(args[[1]]) else 7L
in_process_only <- identical(args[2], "in-process")
script <- normalizePath(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))),
                                  "servers", "package_tools.R"))
rscript <- file.path(R.home("bin"), "Rscript")
warm_dir <- tempfile("pkgtools-warm-")

init <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
list_req <- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'

read_line <- function(p, deadline) {
  repeat {
    line <- p$read_output_lines(n = 1L)
    if (length(line)) return(line)
    if (Sys.time() > deadline) stop("server timed out: ", p$read_all_error())
    p$poll_io(200L)
  }
}

start_once <- function(mode, cache_dir) {
  env <- c("current", BENCH_PKGTOOLS = mode, MCPLITE_CACHE_DIR = cache_dir)
  t0 <- Sys.time()
  p <- processx::process$new(rscript, c("--vanilla", script), stdin = "|", stdout = "|",
                             stderr = "|", env = env)
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  deadline <- t0 + 120
  p$write_input(paste0(init, "\n"))
  read_line(p, deadline)
  t_init <- as.numeric(Sys.time() - t0, units = "secs")
  p$write_input(paste0(list_req, "\n"))
  listing <- read_line(p, deadline)
  t_list <- as.numeric(Sys.time() - t0, units = "secs")
  cpu <- ps::ps_cpu_times(p$as_ps_handle())
  n_tools <- lengths(regmatches(listing, gregexpr("\"inputSchema\":", listing, fixed = TRUE)))
  close(p$get_input_connection())
  p$wait(10000)
  c(init = t_init, list = t_list, cpu = sum(cpu[c("user", "system")]), tools = n_tools,
    bytes = nchar(listing, "bytes"))
}

variants <- list(
  "one tool" = function() start_once("one", warm_dir),
  "stats, warm cache" = function() start_once("stats", warm_dir),
  "stats, cold cache" = function() start_once("stats", tempfile("pkgtools-cold-"))
)
if (!in_process_only) {
  invisible(start_once("stats", warm_dir)) # fill the warm cache
  res <- lapply(variants, function(f) do.call(rbind, replicate(rounds, f(), simplify = FALSE)))

  med <- function(x) sprintf("%.3f", stats::median(x))
  cat("| Server | tools | spawn → initialize (s) | spawn → tools/list (s) | server CPU (s) | tools/list bytes |\n")
  cat("|---|---:|---:|---:|---:|---:|\n")
  for (nm in names(res)) {
    r <- res[[nm]]
    cat(sprintf("| %s | %d | %s | %s | %s | %d |\n", nm, as.integer(r[1, "tools"]), med(r[, "init"]),
                med(r[, "list"]), med(r[, "cpu"]), as.integer(r[1, "bytes"])))
  }
}

# In process: building the catalogue and writing the manifest.
library(mcplite)
time_it <- function(f) {
  stats::median(vapply(seq_len(rounds), function(i) system.time(f())[["elapsed"]], numeric(1)))
}
options(mcplite.cache_dir = warm_dir)
invisible(package_tools("stats", quiet = TRUE)) # fill the warm cache
cat("\n| In process (median of ", rounds, ") | seconds |\n|---|---:|\n", sep = "")
cat(sprintf("| package_tools(\"stats\"), warm cache | %.3f |\n", time_it(function() package_tools("stats", quiet = TRUE))))
cat(sprintf("| package_tools(\"stats\", cache = FALSE) | %.3f |\n",
            time_it(function() package_tools("stats", quiet = TRUE, cache = FALSE))))
tools <- package_tools("stats", quiet = TRUE)
cat(sprintf("| mcp_manifest() of those tools | %.3f |\n", time_it(function() mcp_manifest(tools))))
unlink(warm_dir, recursive = TRUE)
