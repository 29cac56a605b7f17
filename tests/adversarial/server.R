# Server for the adversarial suite (tests/adversarial/adversarial.py):
#   Rscript --vanilla server.R <package>
# Serves the package's exported functions with package_tools()'s and
# mcp_server()'s defaults (no capability allowed, RULES R8.8; a confined
# worker, N7.1) and, beside them, `adversarial_probe`:
# the driver's window on the process state that must survive every call
# (RULES R8.10).
#
#   Rscript --vanilla server.R self-test
# serves instead a few base functions with every capability they need
# allowed, for the driver to see each of its canaries fire.
#
# ADVERSARIAL_WRAPPERS, when set, is a directory of command wrappers put
# first on PATH here rather than in the environment the process starts with,
# so that R's own start-up scripts do not run them.
library(mcplite)
package <- commandArgs(trailingOnly = TRUE)[[1L]]
# The test command's shared package_tools() cache (scripts/run-tests.sh sets
# MCPLITE_TEST_PACKAGE_CACHE; the testthat step works it out first): where
# the cache lives is no default the attacks are about, and reading the
# classification there spares each run classifying nine packages again.
# Unset, the user's cache, as before.
cache_dir <- Sys.getenv("MCPLITE_TEST_PACKAGE_CACHE")
if (nzchar(cache_dir)) options(mcplite.cache_dir = cache_dir)
wrappers <- Sys.getenv("ADVERSARIAL_WRAPPERS")
if (nzchar(wrappers)) {
  Sys.setenv(PATH = paste(wrappers, Sys.getenv("PATH"), sep = .Platform$path.sep))
}
# As many server scripts do, this one keeps a setting it read from the
# environment in a global variable: the secret is in the process twice.
api_key <- Sys.getenv("MCPLITE_CANARY_SECRET")
probe <- tool(
  function() {
    list(wd = getwd(), search = search(), rng = RNGkind(), digits = getOption("digits"),
         path = Sys.getenv("PATH"))
  },
  name = "adversarial_probe",
  description = "The working directory, search path, RNG kinds, digits option and PATH."
)
unsafe <- function() {
  package_tools("base", include = c("system", "Sys.getenv", "readLines", "writeLines", "quit"),
                allow = c("run_commands", "read_secrets", "read_files", "write_files", "network",
                          "processes", "change_session"),
                root = Sys.getenv("ADVERSARIAL_ROOT"), quiet = TRUE)
}
# The self-test shows each canary firing, so its tools run unconfined; the
# packages are served with mcp_server()'s defaults, which confine package
# tools in a worker (RULES N7.1).
if (package == "self-test") {
  mcp_server(c(unsafe(), list(probe)), confine = FALSE)
} else {
  mcp_server(c(package_tools(package, quiet = TRUE), list(probe)))
}
