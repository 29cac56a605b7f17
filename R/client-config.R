# Configuration files in the `mcpServers` format of Claude Desktop, Claude
# Code, Cursor and mcptools: written for a server script or URL
# (mcp_client_config()), and read to connect to the servers they list
# (mcp_connect_config(), at the end of this file).

#' Configure an MCP client to launch a server script
#'
#' `mcp_client_config()` writes the configuration an MCP client needs to start
#' a server script: the `mcpServers` entry for Claude Desktop, Claude Code or
#' Cursor, and the equivalent `claude mcp add` command line for Claude Code.
#' Run it in the R installation (and with the library paths) the client should
#' use; paste the printed JSON into the client's configuration file, or run the
#' printed command.
#'
#' The entry launches the script the way mcplite servers are meant to run:
#'
#' * `command` is the absolute path of the `Rscript` that belongs to the R
#'   running this function (`file.path(R.home("bin"), "Rscript")`), so the
#'   client does not depend on its own `PATH`.
#' * `args` are `--vanilla` (no profile or saved workspace can print to
#'   standard output or change the session) and the normalized absolute path of
#'   the script, because clients do not promise a working directory.
#' * `env` holds `R_LIBS` when mcplite is installed outside R's default
#'   libraries ([.Library] and [.Library.site]). MCP clients start servers with
#'   their own environment, not your shell's, so a library you selected with
#'   `R_LIBS` or `.libPaths()` would otherwise be invisible to the server. The
#'   value lists the library that holds mcplite followed by the other
#'   non-default entries of [.libPaths()], in order. Variables given in `env`
#'   are added after it (and replace an automatic `R_LIBS`).
#'
#' The script must exist and its last top-level expression must be a call to
#' `mcp_server()` or `mcplite::mcp_server()`; the script is parsed, never run.
#'
#' @section Tokens:
#' With `url` and `token`, the token is kept out of the configuration where
#' the client allows it, referred to by the environment variable `token_env`
#' in the client's own syntax: `"Bearer ${MCPLITE_TOKEN}"` in Claude Code's
#' `.mcp.json`, `"Bearer ${env:MCPLITE_TOKEN}"` in Cursor's `mcp.json`, and
#' `"$MCPLITE_TOKEN"` (`%MCPLITE_TOKEN%` on Windows) in the `claude mcp add`
#' command line, which the shell expands (Claude Code then stores the
#' value). Set that variable to the token in the environment the client
#' starts in. Claude Desktop's configuration cannot refer to environment
#' variables: its entry holds the token (in the `env` of the `mcp-remote`
#' bridge), so keep that file readable by you only. Printing the result
#' says which applies. A plain `http://` URL to a host other than this
#' machine (`localhost`, `127.0.0.1`, `::1`) gives a warning: the token and
#' every call would cross the network unencrypted; put TLS in front (see
#' "Serve over HTTP").
#'
#' @param script Path to the server script, relative to the working directory
#'   or absolute.
#' @param name The server's name in the client (the key under `mcpServers`).
#'   Letters, digits, `_`, `.` and `-` only. By default, the script's file name
#'   without its extension.
#' @param client Which client the JSON is for: `"claude_desktop"` (the
#'   `claude_desktop_config.json` file), `"claude_code"` (a project's
#'   `.mcp.json`; adds `"type": "stdio"`) or `"cursor"` (`~/.cursor/mcp.json` or
#'   a project's `.cursor/mcp.json`).
#' @param url `NULL`, or the URL of a server already running over HTTP
#'   (`mcp_server(transport = "http")`, e.g. `"http://127.0.0.1:8080/mcp"`).
#'   Then no `script` is given and the entry connects to the URL instead of
#'   starting a process: `"type": "http"` with `url` for Claude Code, `url`
#'   for Cursor, and for Claude Desktop (whose configuration file starts local
#'   processes only) the `mcp-remote` bridge run with `npx`.
#' @param token `NULL` or the server's bearer token (with `url` only): sent as
#'   the `Authorization: Bearer` header. Where the client can read it from an
#'   environment variable, the configuration names `token_env` instead of
#'   holding the token (see "Tokens" below).
#' @param token_env The name of the environment variable the client reads
#'   the token from (with `token`), `"MCPLITE_TOKEN"` by default.
#' @param env Extra environment variables for the server: a named character
#'   vector or a named list of single strings, for example
#'   `c(OTEL_R_TRACES_EXPORTER = "stderr")` to trace to the client's log.
#' With no `script` (and no `url`), the entry starts
#' `Rscript -e "mcplite::mcp_server()"`: a server of the live-session tools
#' alone (see [mcp_session()]), named `"r-session"` by default.
#'
#' @return An object of class `mcplite_client_config`, a list with elements
#'   `name`, `client`, `url`, `json`, `claude_code`, `token_env` (the
#'   variable the entry refers to for the token, or `NULL`) and `token_note`
#'   (what printing says about the token, or `NULL`) for an HTTP server
#'   (`url`), and
#'   `name`, `client`, `command`, `args` (character), `env` (named character,
#'   possibly empty), `json` (the complete `{"mcpServers": {...}}` snippet as a
#'   single string) and `claude_code` (the `claude mcp add` command line, quoted
#'   for a POSIX shell, or for `cmd.exe` on Windows), and `entry` (a list of
#'   `type`, `command`, `args` and `env` that an agent SDK's `mcp_servers`
#'   list takes as it is). Printing it shows the JSON and the command line.
#' @seealso [mcp_server()] for writing the script, [mcp_handle()] for testing
#'   it without a client.
#' @export
#' @examples
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()))",
#'   "mcp_server(add)"
#' ), script)
#'
#' config <- mcp_client_config(script, name = "r-add")
#' config
#' config$command
#' config$args
#'
#' # Cursor, with tracing sent to the server's standard error
#' mcp_client_config(script, client = "cursor",
#'   env = c(OTEL_R_TRACES_EXPORTER = "stderr"))
#'
#' # A server already running over HTTP, with a bearer token that Claude
#' # Code reads from the environment variable MCPLITE_TOKEN
#' mcp_client_config(url = "http://127.0.0.1:8080/mcp", name = "r-tools",
#'   client = "claude_code", token = "my-secret-token-0123456789")
mcp_client_config <- function(script, name = NULL,
                              client = c("claude_desktop", "claude_code", "cursor"),
                              env = NULL, url = NULL, token = NULL, token_env = "MCPLITE_TOKEN") {
  if (!is.null(url)) {
    if (!missing(script)) {
      abort_arg("Supply either `script` (a server the client starts) or `url` (a server over HTTP), not both.")
    }
    return(http_client_config(url, name, client, token, token_env))
  }
  if (!is.null(token)) {
    abort_arg("`token` is only used with `url`: a client starting `script` talks to it over stdio.")
  }
  client <- check_client(client)
  env <- c(library_env(), check_env(env))
  env <- env[!duplicated(names(env), fromLast = TRUE)]
  command <- rscript_path()
  if (missing(script) || is.null(script)) {
    # RULES R5.7: no script, the live-session tools alone.
    name <- check_server_name(name %||% "r-session", "r-session")
    args <- c("--vanilla", "-e", "mcplite::mcp_server()")
  } else {
    script <- check_server_script(script)
    name <- check_server_name(name, script)
    args <- c("--vanilla", script)
  }

  entry <- list()
  if (client == "claude_code") entry$type <- "stdio"
  entry$command <- command
  entry$args <- I(args)
  if (length(env) > 0L) entry$env <- as.list(env)
  servers <- list()
  servers[[name]] <- entry
  json <- as.character(jsonlite::toJSON(list(mcpServers = servers),
    auto_unbox = TRUE, pretty = TRUE
  ))

  structure(
    list(
      name = name,
      client = client,
      command = command,
      args = args,
      env = env,
      json = json,
      claude_code = claude_add_command(name, command, args, env),
      # An agent SDK's `mcp_servers` entry, as is.
      entry = c(list(type = "stdio", command = command, args = args), if (length(env) > 0L) list(env = as.list(env)))
    ),
    class = "mcplite_client_config"
  )
}

#' @export
print.mcplite_client_config <- function(x, ...) {
  where <- switch(x$client,
    claude_desktop = paste0(
      "Claude Desktop: merge into \"mcpServers\" in claude_desktop_config.json\n",
      "(macOS: ~/Library/Application Support/Claude/, ",
      "Windows: %APPDATA%\\Claude\\), then restart Claude Desktop."
    ),
    claude_code = "Claude Code: merge into \"mcpServers\" in the project's .mcp.json.",
    cursor = "Cursor: merge into \"mcpServers\" in ~/.cursor/mcp.json or the project's .cursor/mcp.json."
  )
  cat(where, "\n\n", x$json, "\n\n", sep = "")
  if (!is.null(x$token_note)) cat(strwrap(x$token_note), "", sep = "\n")
  cat("Claude Code, from a terminal (add `--scope user` for every project):\n\n", sep = "")
  cat(x$claude_code, "\n", sep = "")
  invisible(x)
}

#' @export
format.mcplite_client_config <- function(x, ...) x$json

#' @export
as.character.mcplite_client_config <- function(x, ...) x$json

# The script exists, is a file, parses, and ends with a server call.
# Returns its normalized absolute path.
check_server_script <- function(script) {
  check_string(script, allow_empty = FALSE, what = "the path of a server script (a single string)")
  path <- path.expand(script)
  if (!file.exists(path)) {
    abort_arg("`script` must be an existing file; \"", script, "\" does not exist.")
  }
  if (dir.exists(path)) {
    abort_arg("`script` must be a file, not a directory: \"", script, "\".")
  }
  path <- normalizePath(path, winslash = "/", mustWork = TRUE)
  lines <- tryCatch(
    readLines(path, encoding = "UTF-8", warn = FALSE),
    error = function(e) abort_arg("`script` could not be read (\"", path, "\"): ", conditionMessage(e))
  )
  exprs <- tryCatch(
    parse(text = lines, keep.source = FALSE, encoding = "UTF-8"),
    error = function(e) {
      abort_arg("`script` is not valid R code (\"", path, "\"): ", conditionMessage(e))
    }
  )
  if (length(exprs) == 0L) {
    abort_arg(
      "`script` must end with a call to `mcplite::mcp_server()`, ",
      "but \"", path, "\" contains no R code."
    )
  }
  last <- exprs[[length(exprs)]]
  if (!is_server_call(last)) {
    shown <- paste(deparse(last, width.cutoff = 60L, nlines = 1L), collapse = "")
    if (nchar(shown) > 60L) shown <- paste0(substr(shown, 1L, 57L), "...")
    abort_arg(
      "`script` must end with a call to `mcplite::mcp_server()` that serves its tools, ",
      "but the last expression of \"", path, "\" is `", shown, "`."
    )
  }
  path
}

is_server_call <- function(expr) {
  if (!is.call(expr)) {
    return(FALSE)
  }
  fn <- expr[[1L]]
  if (identical(fn, as.name("mcp_server"))) {
    return(TRUE)
  }
  is.call(fn) && length(fn) == 3L &&
    (identical(fn[[1L]], as.name("::")) || identical(fn[[1L]], as.name(":::"))) &&
    identical(fn[[2L]], as.name("mcplite")) &&
    identical(fn[[3L]], as.name("mcp_server"))
}

check_server_name <- function(name, script) {
  if (is.null(name)) {
    name <- sub("\\.[^.]*$", "", basename(script))
    name <- gsub("[^A-Za-z0-9_.-]+", "-", name)
    name <- gsub("^[-.]+|[-.]+$", "", name)
    if (!nzchar(name)) name <- "mcplite"
    return(name)
  }
  if (!is_scalar_string(name) || !grepl("^[A-Za-z0-9_.-]{1,128}$", name, useBytes = TRUE) ||
    grepl("[^ -~]", name, useBytes = TRUE)) {
    abort_arg(
      "`name` must be a single string of 1 to 128 letters, digits, `_`, `.` or `-`, not ",
      if (is_scalar_string(name)) paste0("\"", name, "\"") else describe(name), "."
    )
  }
  name
}

check_client <- function(client) {
  check_choice(client, c("claude_desktop", "claude_code", "cursor"), "client")
}

# A named character vector from a named character vector or a named list of
# single strings; NULL when `x` is neither (or has missing names).
named_strings <- function(x) {
  ok <- if (is.list(x) && !is.object(x)) {
    all(vapply(x, is_scalar_string, logical(1)))
  } else {
    is.character(x) && !anyNA(x)
  }
  if (!ok || is.null(names(x)) || anyNA(names(x))) {
    return(NULL)
  }
  vapply(x, identity, character(1), USE.NAMES = TRUE)
}

check_env <- function(env) {
  if (is.null(env) || length(env) == 0L) {
    return(character())
  }
  values <- named_strings(env)
  nms <- names(values)
  if (is.null(values) || !all(grepl("^[A-Za-z_][A-Za-z0-9_]*$", nms)) || anyDuplicated(nms)) {
    abort_arg(
      "`env` must be a named character vector (or a named list of single strings) ",
      "with unique environment variable names, for example ",
      "`c(OTEL_R_TRACES_EXPORTER = \"stderr\")`."
    )
  }
  values
}

rscript_path <- function() {
  exe <- if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript"
  path <- file.path(R.home("bin"), exe)
  normalizePath(path, winslash = "/", mustWork = FALSE)
}

# R_LIBS for the server when mcplite lives outside R's default libraries:
# mcplite's library first, then the session's other non-default libraries.
library_env <- function() {
  norm <- function(p) normalizePath(p, winslash = "/", mustWork = FALSE)
  defaults <- unique(norm(c(.Library, .Library.site)))
  pkg_lib <- norm(dirname(getNamespaceInfo(asNamespace("mcplite"), "path")))
  if (pkg_lib %in% defaults) {
    return(character())
  }
  libs <- unique(c(pkg_lib, norm(.libPaths())))
  libs <- libs[!libs %in% defaults]
  c(R_LIBS = paste(libs, collapse = .Platform$path.sep))
}

claude_add_command <- function(name, command, args, env) {
  quote <- if (.Platform$OS.type == "windows") cmd_quote else sh_quote
  env_flags <- if (length(env) > 0L) {
    paste0("--env ", quote(paste0(names(env), "=", env)), collapse = " ")
  }
  paste(c(
    "claude mcp add --transport stdio", env_flags, quote(name), "--",
    quote(command), vapply(args, quote, character(1), USE.NAMES = FALSE)
  ), collapse = " ")
}

# Quote for a POSIX shell: words made only of safe characters stay bare, all
# others are single-quoted with embedded single quotes written as '\''.
sh_quote <- function(x) {
  safe <- grepl("^[A-Za-z0-9_./:=@%+,-]+$", x)
  ifelse(safe, x, paste0("'", gsub("'", "'\\''", x, fixed = TRUE), "'"))
}

# Quote for cmd.exe/PowerShell argument parsing: double quotes, with embedded
# double quotes backslash-escaped.
cmd_quote <- function(x) {
  safe <- grepl("^[A-Za-z0-9_./:=@%+,\\\\-]+$", x)
  ifelse(safe, x, paste0("\"", gsub("\"", "\\\"", x, fixed = TRUE), "\""))
}

# The entry for a server reached over HTTP (mcp_client_config(url = )).
http_client_config <- function(url, name, client, token, token_env) {
  if (!is_scalar_string(url) || !grepl("^https?://[^/?#\\s]+", url, perl = TRUE)) {
    abort_arg("`url` must be a single http:// or https:// URL such as \"http://127.0.0.1:8080/mcp\", not ",
      describe(url), ".")
  }
  name <- check_server_name(name %||% "mcplite", "mcplite")
  client <- check_client(client)
  if (!is.null(token) && (!is_scalar_string(token) || !nzchar(token) || grepl("[^!-~]", token))) {
    abort_arg("`token` must be NULL or a non-empty string of visible ASCII characters, not ", describe(token), ".")
  }
  if (!is_scalar_string(token_env) || !grepl("^[A-Za-z_][A-Za-z0-9_]*$", token_env)) {
    abort_arg("`token_env` must be the name of an environment variable (letters, digits and `_`, ",
      "not starting with a digit), such as \"MCPLITE_TOKEN\", not ", describe(token_env), ".")
  }
  host <- sub("^https?://([^/:]+|\\[[^]]+\\]).*$", "\\1", url)
  local <- tolower(host) %in% c("localhost", "[::1]") || grepl("^127\\.[0-9.]+$", host)
  if (startsWith(url, "http://") && !local) {
    warn("`url` is plain http:// to ", host, ", not this machine: the token and every call cross ",
      "the network unencrypted. Use https:// (TLS in front of the server, see \"Serve over HTTP\").",
      class = "mcplite_warning_insecure")
  }
  # The token as the client refers to the variable `token_env` (Claude
  # Desktop cannot: it gets the value).
  bearer <- if (!is.null(token)) {
    switch(client,
      claude_code = paste0("Bearer ${", token_env, "}"),
      cursor = paste0("Bearer ${env:", token_env, "}"),
      claude_desktop = paste("Bearer", token)
    )
  }
  token_note <- if (!is.null(token)) {
    if (identical(client, "claude_desktop")) {
      paste0("The token is written in the entry: Claude Desktop's configuration cannot refer to an ",
        "environment variable. Keep claude_desktop_config.json readable by you only.")
    } else {
      paste0("The entry refers to the token by the environment variable ", token_env, ": set ",
        token_env, " to the token in the environment ",
        if (identical(client, "cursor")) "Cursor" else "Claude Code", " starts in.")
    }
  }
  if (!is.null(token)) {
    token_note <- paste0(token_note, " The `claude mcp add` line below reads ", token_env,
      " too: the shell expands it, and Claude Code stores the value.")
  }
  headers <- if (!is.null(token)) list(Authorization = bearer)
  entry <- switch(client,
    claude_code = c(list(type = "http", url = url), if (!is.null(headers)) list(headers = headers)),
    cursor = c(list(url = url), if (!is.null(headers)) list(headers = headers)),
    claude_desktop = {
      args <- c("-y", "mcp-remote", url,
        if (startsWith(url, "http://") && !local) "--allow-http",
        if (!is.null(token)) c("--header", "Authorization:${MCPLITE_AUTH_HEADER}")
      )
      c(
        list(command = "npx", args = I(args)),
        if (!is.null(token)) list(env = list(MCPLITE_AUTH_HEADER = bearer))
      )
    }
  )
  servers <- list()
  servers[[name]] <- entry
  json <- as.character(jsonlite::toJSON(list(mcpServers = servers), auto_unbox = TRUE, pretty = TRUE))
  windows <- .Platform$OS.type == "windows"
  quote <- if (windows) cmd_quote else sh_quote
  # The shell expands the variable, so the token is neither printed nor in
  # the shell's history (double quotes: sh_quote would stop the expansion).
  header <- if (windows) {
    paste0("\"Authorization: Bearer %", token_env, "%\"")
  } else {
    paste0("\"Authorization: Bearer ${", token_env, "}\"")
  }
  add <- paste(c(
    "claude mcp add --transport http", quote(name), quote(url),
    if (!is.null(token)) c("--header", header)
  ), collapse = " ")
  structure(
    list(name = name, client = client, url = url, json = json, claude_code = add,
      token_env = if (!is.null(token) && !identical(client, "claude_desktop")) token_env,
      token_note = token_note),
    class = "mcplite_client_config"
  )
}

#' Connect to the servers of a configuration file
#'
#' `mcp_connect_config()` reads a configuration file in the JSON format used
#' by Claude Desktop and the mcptools package and connects to each server it
#' lists, with [mcp_connect()].
#'
#' The file holds an object `mcpServers` whose members configure one server
#' each, under its name:
#' * a local server started over stdio: `command`, optional `args` (array of
#'   strings), `env` (object of strings) and `cwd`;
#' * a remote Streamable HTTP server: `url`, optional `headers` (object of
#'   strings, values may use `${NAME}` for environment variables).
#'
#' Either kind may set `timeout`: as in mcptools, the seconds each request
#' may take overall (the connection, listing the tools, each call, however
#' often the server reports progress); 60 by default, when a call's progress
#' reports extend it up to ten times that (see [mcp_call()]). HTTP entries may
#' set `allow_http` (see [mcp_connect()]) and `oauth` (sign-in settings, see
#' "Signing in" in [mcp_connect()]). Either kind may set `ignore_tools`: tool names, or
#' patterns where `*` stands for any characters (`"delete_*"`), of tools to
#' hide and block: they are left out of [mcp_list_tools()] and [mcp_tools()],
#' and [mcp_call()] refuses them with an error of class
#' `mcplite_error_ignored_tool` (the server is never asked). An entry with
#' `"disabled": true` is skipped; `"type"` may say `"stdio"`, `"http"` or
#' `"streamable-http"`. Other members are ignored. Stdio servers get the
#' allowlisted environment described in [mcp_connect()] plus their `env`.
#'
#' @section Where the file is:
#' With no `path`, the file is the one named by the option
#' `mcplite.config`, else by the option `.mcptools_config` (mcptools' own),
#' else the first that exists of `~/.config/mcplite/config.json` and
#' `~/.config/mcptools/config.json` (where mcptools keeps it, so a file
#' written for mcptools is used as it is). When none exists the error names
#' the places looked at.
#'
#' @param path Path of the configuration file; `NULL` (the default) looks in
#'   the places listed under "Where the file is".
#' @param servers `NULL` (every server), or the names of the servers to
#'   connect to.
#' @param on_error `"stop"` (the default) closes the connections already made
#'   and raises the error of the server that failed; `"warn"` warns (a
#'   warning of class `mcplite_warning_server` whose `server` is the server's
#'   name and `error` the error) and skips that server.
#' @return A named list of connections (class `mcplite_connection`), in the
#'   order of the file.
#' @seealso [mcp_tools()] to turn the servers' tools into mcplite tools,
#'   [mcp_close()].
#' @export
#' @examples
#' script <- file.path(tempdir(), "add-server.R")
#' writeLines(c(
#'   "library(mcplite)",
#'   "add <- tool(function(x, y) x + y, \"Add two numbers.\",",
#'   "  arguments = list(x = type_number(), y = type_number()), name = \"add\")",
#'   "mcp_server(add)"
#' ), script)
#' config <- file.path(tempdir(), "config.json")
#' writeLines(sprintf(
#'   '{"mcpServers": {"adder": {"command": "%s", "args": ["--vanilla", "%s"],
#'     "env": {"R_LIBS": "%s"}}}}',
#'   file.path(R.home("bin"), "Rscript"), script, paste(.libPaths(), collapse = ":")
#' ), config)
#' servers <- mcp_connect_config(config)
#' names(servers)
#' mcp_call(servers$adder, "add", list(x = 2, y = 3))
#' mcp_close(servers)
mcp_connect_config <- function(path = NULL, servers = NULL, on_error = c("stop", "warn")) {
  on_error <- check_choice(on_error, c("stop", "warn"))
  entries <- read_client_config(path)
  if (!is.null(servers)) {
    check_character(servers, allow_null = TRUE, what = "a character vector of server names")
    unknown <- setdiff(servers, names(entries))
    if (length(unknown) > 0L) {
      abort_arg("`servers` names servers that `path` does not configure: ",
                paste0("\"", unknown, "\"", collapse = ", "), ".")
    }
    entries <- entries[names(entries) %in% servers]
  }
  out <- list()
  for (nm in names(entries)) {
    e <- entries[[nm]]
    if (isTRUE(e$disabled)) {
      next
    }
    conn <- tryCatch(
      connect_entry(nm, e),
      mcplite_error = function(err) {
        if (on_error == "warn") {
          warn_server(nm, err)
          return(NULL)
        }
        for (open in out) mcp_close(open)
        raise(err)
      }
    )
    if (!is.null(conn)) {
      out[[nm]] <- conn
    }
  }
  out
}

# A server of a configuration file (or of a list given to mcp_tools()) that
# failed: a warning of class `mcplite_warning_server` naming it, with the
# server's name and the error as fields.
warn_server <- function(server, err) {
  cnd <- structure(
    class = c("mcplite_warning_server", "warning", "condition"),
    list(message = paste0("Skipped MCP server `", server, "`: ", conditionMessage(err)), call = NULL,
         server = server, error = err)
  )
  warning(cnd)
}

# --- Reading configuration files ----------------------------------------------

# The `oauth` of an entry as mcp_connect() takes it: `allow_http` may also be
# given beside `url` (mcptools' place for it).
config_oauth <- function(nm, e) {
  oauth <- e[["oauth"]]
  if (isTRUE(e[["allow_http"]]) && (is.null(oauth) || is.list(oauth))) {
    oauth <- c(oauth, list(allow_http = TRUE))[!duplicated(c(names(oauth), "allow_http"))]
  }
  oauth
}

# The configuration file used when none is named (see "Where the file is" in
# ?mcp_connect_config): an option, else the first existing default.
default_client_config <- function() {
  for (opt in c("mcplite.config", ".mcptools_config")) {
    v <- getOption(opt)
    if (!is.null(v)) {
      if (!is_scalar_string(v)) {
        abort("Option `", opt, "` must be the path of a configuration file (a single string), not ",
              describe(v), ".")
      }
      return(v)
    }
  }
  candidates <- c(file.path("~", ".config", "mcplite", "config.json"),
                  file.path("~", ".config", "mcptools", "config.json"))
  found <- candidates[file.exists(path.expand(candidates))]
  if (length(found) == 0L) {
    abort("`path` was not given and there is no configuration file where one is looked for: ",
          "the options `mcplite.config` and `.mcptools_config` are not set and ",
          paste0("\"", candidates, "\"", collapse = " and "), " do not exist.")
  }
  found[[1L]]
}

read_client_config <- function(path) {
  if (is.null(path)) {
    path <- default_client_config()
  }
  check_string(path, what = "the path of a configuration file (a single string)")
  file <- path.expand(path)
  if (!file.exists(file) || dir.exists(file)) {
    abort_arg("`path` must be an existing configuration file; \"", path, "\" does not exist.")
  }
  text <- paste(readLines(file, encoding = "UTF-8", warn = FALSE), collapse = "\n")
  cfg <- tryCatch(
    json_decode(text),
    error = function(e) abort("`path` is not valid JSON (\"", path, "\"): ", conditionMessage(e))
  )
  servers <- if (is.list(cfg)) cfg[["mcpServers"]]
  if (!is.list(servers) || (length(servers) > 0L && is.null(names(servers)))) {
    abort("`path` must hold a JSON object with an `mcpServers` object (\"", path, "\").")
  }
  for (nm in names(servers)) {
    check_config_entry(nm, servers[[nm]])
  }
  servers
}

check_config_entry <- function(nm, e) {
  field <- function(f = NULL) paste0("`mcpServers$", nm, if (!is.null(f)) paste0("$", f), "`")
  if (!is.list(e) || (length(e) > 0L && is.null(names(e)))) {
    abort(field(), " must be an object.")
  }
  if (isTRUE(e$disabled)) {
    return(invisible())
  }
  type <- e[["type"]]
  transports <- c("stdio", "http", "streamable-http", "streamableHttp")
  if (!is.null(type) && !(is_scalar_string(type) && type %in% transports)) {
    abort(field("type"), " is ", if (is_scalar_string(type)) paste0("\"", type, "\"") else describe(type),
          "; only \"stdio\", \"http\" and \"streamable-http\" servers are supported.")
  }
  has_cmd <- !is.null(e[["command"]])
  has_url <- !is.null(e[["url"]])
  if (has_cmd == has_url) {
    abort(field(), " must have either `command` (a local server) or `url` (a remote server).")
  }
  strings <- function(x) is.list(x) && all(vapply(x, is_scalar_string, logical(1)))
  object_of_strings <- function(x) strings(x) && (length(x) == 0L || !is.null(names(x)))
  if (has_cmd) {
    if (!is_scalar_string(e$command)) abort(field("command"), " must be a string.")
    if (!is.null(e$args) && !strings(e$args)) abort(field("args"), " must be an array of strings.")
    if (!is.null(e$env) && !object_of_strings(e$env)) abort(field("env"), " must be an object of strings.")
    if (!is.null(e$cwd) && !is_scalar_string(e$cwd)) abort(field("cwd"), " must be a string.")
  } else {
    if (!is_scalar_string(e$url)) abort(field("url"), " must be a string.")
    if (!is.null(e$headers) && !object_of_strings(e$headers)) {
      abort(field("headers"), " must be an object of strings.")
    }
  }
  if (!is.null(e$timeout) && !(is.numeric(e$timeout) && length(e$timeout) == 1L && e$timeout > 0)) {
    abort(field("timeout"), " must be a positive number of seconds.")
  }
  if (!is.null(e[["allow_http"]]) && !is_true_false(e[["allow_http"]])) {
    abort(field("allow_http"), " must be true or false.")
  }
  if (!is.null(e[["oauth"]])) {
    oauth_settings(config_oauth(nm, e), what = paste0("mcpServers$", nm, "$oauth"))
  }
  ignore <- e[["ignore_tools"]]
  if (!is.null(ignore) && !is_scalar_string(ignore) && !(strings(ignore) && is.null(names(ignore)))) {
    abort(field("ignore_tools"), " must be a string or an array of strings (tool names, `*` for any characters).")
  }
  invisible()
}

connect_entry <- function(nm, e) {
  timeout <- if (is.null(e[["timeout"]])) 60 else as.double(e[["timeout"]])
  conn <- if (!is.null(e[["url"]])) {
    mcp_connect(url = e[["url"]], headers = unlist(e[["headers"]]), name = nm, timeout = timeout,
                oauth = config_oauth(nm, e), allow_http = isTRUE(e[["allow_http"]]))
  } else {
    env <- if (length(e[["env"]]) > 0L) unlist(e[["env"]]) else NULL
    mcp_connect(
      e[["command"]], as.character(unlist(e[["args"]])), env = env, cwd = e[["cwd"]],
      name = nm, timeout = timeout
    )
  }
  # mcptools' meaning of `timeout`: the whole of each request, progress or
  # not (RULES K8.4).
  if (!is.null(e[["timeout"]])) {
    conn$max_time <- timeout
  }
  conn_set_ignored(conn, as.character(unlist(e[["ignore_tools"]])))
  conn
}
