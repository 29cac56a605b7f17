# Test data kept in the repository's tests/data (each folder's README.md says
# where its files come from): the official MCP schemas ("mcp-schema") and the
# ellmer fixtures ("ellmer").

# The folder `name` of tests/data, or the one the environment variable `env`
# names when it is set, as an absolute path; it must hold the file `probe`.
# tests/data is not in the package tarball (.Rbuildignore), so under R CMD
# check a test that needs it is skipped; anywhere else a missing folder is an
# error, not a skip.
test_data_dir <- function(name, env, probe) {
  dir <- Sys.getenv(env)
  if (!nzchar(dir)) dir <- test_path("..", "data", name)
  if (file.exists(file.path(dir, probe))) {
    return(normalizePath(dir))
  }
  if (nzchar(Sys.getenv("_R_CHECK_PACKAGE_NAME_"))) {
    skip(paste0("tests/data/", name, " is not in the package tarball (R CMD check)"))
  }
  stop("test data not found: no ", probe, " in ", dir, if (nzchar(Sys.getenv(env))) paste0(" (from ", env, ")"))
}
