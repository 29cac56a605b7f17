# Test data kept in the repository's tests/data (each folder's README.md says
# where its files come from): the official MCP schemas ("mcp-schema") and the
# ellmer fixtures ("ellmer").

# The folder `name` of tests/data, or the one the environment variable `env`
# names when it is set, as an absolute path; it must hold the file `probe`.
# These folders are in the package tarball too (.Rbuildignore leaves out
# only tests/data/r-api, which no testthat test reads), so the tests find
# them from a clone, an unpacked tarball and under R CMD check alike: a
# missing folder is an error, never a skip.
test_data_dir <- function(name, env, probe) {
  dir <- Sys.getenv(env)
  if (!nzchar(dir)) dir <- test_path("..", "data", name)
  if (file.exists(file.path(dir, probe))) {
    return(normalizePath(dir))
  }
  stop("test data not found: no ", probe, " in ", dir, if (nzchar(Sys.getenv(env))) paste0(" (from ", env, ")"))
}
