# Server for bench/package-tools.R. BENCH_PKGTOOLS selects the catalogue:
#   "one"   one hand-written tool (the baseline);
#   "stats" that tool plus package_tools("stats") (every exported function).
# MCPLITE_CACHE_DIR, when set, is the cache directory for rendered help pages.
cache_dir <- Sys.getenv("MCPLITE_CACHE_DIR")
if (nzchar(cache_dir)) options(mcplite.cache_dir = cache_dir)
library(mcplite)
add <- tool(function(x, y) x + y, "Add two numbers.", name = "add",
            arguments = list(x = type_number(), y = type_number()))
tools <- list(add)
if (identical(Sys.getenv("BENCH_PKGTOOLS"), "stats")) {
  tools <- c(tools, package_tools("stats", quiet = TRUE))
}
mcp_server(tools)
