# Tools generated from installed packages with package_tools(), served over
# stdio for the Python client tests (tests/clients/python/test_package_tools.py).
# The cases and the results of calling the same functions directly are in
# package_tools_cases.R.
cache_dir <- Sys.getenv("MCPLITE_CACHE_DIR")
if (nzchar(cache_dir)) options(mcplite.cache_dir = cache_dir)

tools <- c(
  mcplite::package_tools(
    "stats",
    include = c("median", "qnorm", "p.adjust", "quantile", "sd", "t.test", "cor", "weighted.mean"),
    annotations = list(read_only_hint = TRUE), quiet = TRUE
  ),
  # read.csv() reads files (RULES R8.8): allowed inside a directory of its own,
  # where the tests put their file (MCPLITE_TEST_ROOT).
  mcplite::package_tools("utils", include = c("read.csv", "head"), shape = "read.csv", quiet = TRUE,
                         allow = "read_files", root = Sys.getenv("MCPLITE_TEST_ROOT", tempdir()))
)
mcplite::mcp_server(tools, instructions = "Functions of stats and utils.")
