#' Launch a server from `_server.yml`
#'
#' `launch_server()` is what hosts that follow the `_server.yml` deployment
#' standard (Posit Connect, buoyant) call to start a project whose
#' `_server.yml` says `engine: mcplite`. The file names the tools file and,
#' optionally, options of [mcp_server()]:
#'
#' ```yaml
#' engine: mcplite
#' tools: tools.R
#' path: /mcp
#' allowed_hosts: connect.example.com
#' ```
#'
#' `tools` is an `.R` file, relative to `_server.yml`, whose last value is a
#' list of tools (see `tools` in [mcp_server()]). `path`, `allowed_hosts`,
#' `allowed_origins`, `allow_public`, `workers`, `instructions` and
#' `session_tools` are passed to [mcp_server()], which serves over HTTP on
#' `host` and `port`. Behind a host that authenticates its users itself
#' (Connect), set `allowed_hosts` to the host's name, and `allow_public:
#' true` when it makes the server listen beyond loopback without a token.
#'
#' @param settings Path of the `_server.yml` file.
#' @param host Address to listen on; `NULL`: `127.0.0.1`.
#' @param port Port to listen on; `NULL`: `MCPLITE_PORT`, else 8080.
#' @param ... Must be empty.
#' @return What [mcp_server()] returns, once the server stops.
#' @seealso `vignette("serve-http")`.
#' @export
#' @examples
#' dir <- tempfile("project-")
#' dir.create(dir)
#' writeLines(c("engine: mcplite", "tools: tools.R"), file.path(dir, "_server.yml"))
#' writeLines(c(
#'   "list(mcplite::tool(function(x) x * 2, \"Double a number.\", name = \"double\",",
#'   "  arguments = list(x = mcplite::type_number())))"
#' ), file.path(dir, "tools.R"))
#' # A host runs, in a process of its own:
#' #   mcplite::launch_server(file.path(dir, "_server.yml"), host = "127.0.0.1", port = 8080)
launch_server <- function(settings, host = NULL, port = NULL, ...) {
  check_dots_empty(...)
  check_string(settings, allow_empty = FALSE, what = "the path of a `_server.yml` file")
  if (!file.exists(settings) || dir.exists(settings)) {
    abort_arg("`settings` must be the path of a `_server.yml` file, but \"", settings, "\" is not one.")
  }
  if (!requireNamespace("yaml", quietly = TRUE)) {
    abort("`launch_server()` reads `_server.yml` with the yaml package, which is not installed.")
  }
  conf <- tryCatch(yaml::read_yaml(settings), error = function(e) {
    abort_arg("`settings` (\"", settings, "\") is not valid YAML: ", conditionMessage(e))
  })
  known <- c("engine", "tools", "path", "allowed_hosts", "allowed_origins", "allow_public", "workers",
             "instructions", "session_tools")
  if (!is.list(conf) || is.null(names(conf))) {
    abort_arg("`settings` (\"", settings, "\") must hold a mapping with `engine: mcplite` and `tools`.")
  }
  unknown <- setdiff(names(conf), known)
  if (length(unknown) > 0L) {
    abort_arg("`settings` (\"", settings, "\") has members mcplite does not know: ",
              paste0("`", unknown, "`", collapse = ", "), " (it knows ", paste0("`", known, "`", collapse = ", "), ").")
  }
  if (!identical(conf$engine, "mcplite")) {
    abort_arg("`settings` (\"", settings, "\") must say `engine: mcplite`, not ", describe(conf$engine), ".")
  }
  if (!is_scalar_string(conf$tools)) {
    abort_arg("`settings` (\"", settings, "\") must name the tools file in `tools` (a path relative to it).")
  }
  tools <- file.path(dirname(normalizePath(settings)), conf$tools)
  mcp_server(
    tools = tools, instructions = conf$instructions, transport = "http",
    host = host %||% "127.0.0.1", port = port, path = conf$path,
    allowed_hosts = conf$allowed_hosts, allowed_origins = conf$allowed_origins,
    allow_public = conf$allow_public, workers = conf$workers, session_tools = isTRUE(conf$session_tools)
  )
}
