# mcp_client_config(): paths, JSON and shell escaping, the R_LIBS entry, and
# errors. Library placement is exercised in real Rscript subprocesses.

write_script <- function(dir, lines = "mcplite::mcp_server(list())", file = "server.R") {
  dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  path <- file.path(dir, file)
  writeLines(lines, path)
  path
}

rscript <- function() file.path(R.home("bin"), "Rscript")

test_that("the entry uses this R's Rscript, --vanilla and the absolute script path", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  cfg <- mcp_client_config(path)
  expect_s3_class(cfg, "mcplite_client_config")
  expect_true(file.exists(cfg$command))
  expect_identical(
    normalizePath(cfg$command),
    normalizePath(file.path(R.home("bin"), "Rscript"))
  )
  expect_identical(cfg$args, c("--vanilla", normalizePath(path)))
  expect_identical(cfg$name, "server")
  expect_identical(cfg$client, "claude_desktop")

  parsed <- jsonlite::fromJSON(cfg$json, simplifyVector = FALSE)
  expect_identical(names(parsed), "mcpServers")
  expect_identical(names(parsed$mcpServers), "server")
  entry <- parsed$mcpServers$server
  expect_identical(entry$command, cfg$command)
  expect_identical(entry$args, list("--vanilla", normalizePath(path)))
  expect_identical(format(cfg), cfg$json)
  expect_identical(as.character(cfg), cfg$json)
})

test_that("a relative script path becomes absolute and normalized", {
  dir <- withr::local_tempdir()
  write_script(file.path(dir, "sub"))
  cfg <- withr::with_dir(dir, mcp_client_config(file.path("sub", "..", "sub", "server.R")))
  expect_identical(cfg$args[[2]], normalizePath(file.path(dir, "sub", "server.R")))
  expect_false(grepl("..", cfg$args[[2]], fixed = TRUE))
  expect_true(startsWith(cfg$args[[2]], "/") || grepl("^[A-Za-z]:", cfg$args[[2]]))
})

test_that("name defaults to the file name and can be set", {
  dir <- withr::local_tempdir()
  path <- write_script(dir, file = "my stats server.R")
  expect_identical(mcp_client_config(path)$name, "my-stats-server")
  cfg <- mcp_client_config(path, name = "r.stats_1")
  expect_identical(cfg$name, "r.stats_1")
  expect_identical(names(jsonlite::fromJSON(cfg$json)$mcpServers), "r.stats_1")
})

test_that("each client gets its own entry shape", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  desktop <- jsonlite::fromJSON(mcp_client_config(path)$json, simplifyVector = FALSE)
  code <- jsonlite::fromJSON(mcp_client_config(path, client = "claude_code")$json,
    simplifyVector = FALSE
  )
  cursor <- jsonlite::fromJSON(mcp_client_config(path, client = "cursor")$json,
    simplifyVector = FALSE
  )
  expect_null(desktop$mcpServers$server$type)
  expect_null(cursor$mcpServers$server$type)
  expect_identical(names(code$mcpServers$server)[1:3], c("type", "command", "args"))
  expect_identical(code$mcpServers$server$type, "stdio")
  expect_identical(cursor$mcpServers$server$args, desktop$mcpServers$server$args)
})

test_that("spaces, quotes and backslashes survive JSON and shell quoting", {
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  odd <- file.path(dir, "we\"ird \\ dir's $HOME `x`")
  path <- write_script(odd, file = "my server.R")
  cfg <- mcp_client_config(path, name = "odd", env = c(EXTRA = "a b'c\"d\\e"))
  expected <- normalizePath(path)
  expect_true(grepl("\\", expected, fixed = TRUE))

  # JSON: the parsed entry holds the exact strings.
  entry <- jsonlite::fromJSON(cfg$json, simplifyVector = FALSE)$mcpServers$odd
  expect_identical(entry$args[[2]], expected)
  expect_identical(entry$env$EXTRA, "a b'c\"d\\e")
  expect_true(grepl("we\\\"ird \\\\ dir's", cfg$json, fixed = TRUE))

  # Shell: a real sh parses the command line back into the same words.
  out <- system2("sh", c("-c", shQuote(paste(
    "claude() { for a in \"$@\"; do printf '%s\\n' \"$a\"; done; };", cfg$claude_code
  ))), stdout = TRUE)
  env_words <- paste0(names(cfg$env), "=", cfg$env)
  expect_identical(out, c(
    "mcp", "add", "--transport", "stdio",
    as.vector(rbind("--env", env_words)),
    "odd", "--", cfg$command, "--vanilla", expected
  ))
})

test_that("env entries are validated and merged after R_LIBS", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  cfg <- mcp_client_config(path, env = list(OTEL_R_TRACES_EXPORTER = "stderr"))
  expect_identical(cfg$env[["OTEL_R_TRACES_EXPORTER"]], "stderr")
  expect_identical(tail(names(cfg$env), 1), "OTEL_R_TRACES_EXPORTER")
  own <- mcp_client_config(path, env = c(R_LIBS = "/opt/r-libs"))
  expect_identical(own$env, c(R_LIBS = "/opt/r-libs"))
  expect_identical(jsonlite::fromJSON(own$json)$mcpServers$server$env$R_LIBS, "/opt/r-libs")

  expect_error(mcp_client_config(path, env = "stderr"), "`env`", class = "mcplite_error")
  expect_error(mcp_client_config(path, env = c(`1BAD` = "x")), "`env`", class = "mcplite_error")
  expect_error(mcp_client_config(path, env = list(A = 1)), "`env`", class = "mcplite_error")
  expect_error(mcp_client_config(path, env = c(A = NA)), "`env`", class = "mcplite_error")
})

test_that("the env entry matches where mcplite is installed in this session", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  cfg <- mcp_client_config(path)
  lib <- normalizePath(dirname(getNamespaceInfo(asNamespace("mcplite"), "path")))
  default <- normalizePath(c(.Library, .Library.site), mustWork = FALSE)
  if (lib %in% default) {
    expect_length(cfg$env, 0)
    expect_null(jsonlite::fromJSON(cfg$json)$mcpServers$server$env)
  } else {
    libs <- strsplit(cfg$env[["R_LIBS"]], .Platform$path.sep, fixed = TRUE)[[1]]
    expect_identical(libs[[1]], lib)
    expect_false(any(libs %in% default))
  }
})

# Copy the installed package into a fresh library and run mcp_client_config()
# from a separate Rscript that sees it either as an extra library (R_LIBS) or
# as a site library (R_LIBS_SITE, which R treats as a default library).
config_from_subprocess <- function(lib, script, var) {
  out <- tempfile(fileext = ".json")
  code <- sprintf(
    "cfg <- mcplite::mcp_client_config(%s); writeLines(cfg$json, %s)",
    deparse(script), deparse(out)
  )
  # The site libraries must still hold mcplite's dependencies, also under
  # R CMD check, which runs tests with a site library setting of its own.
  site <- unique(c(.Library.site, dirname(find.package("jsonlite"))))
  env <- c(R_LIBS = "", R_LIBS_USER = tempfile(), R_LIBS_SITE = paste(site, collapse = .Platform$path.sep))
  env[[var]] <- if (var == "R_LIBS_SITE") {
    paste(c(lib, site), collapse = .Platform$path.sep)
  } else {
    lib
  }
  res <- processx::run(rscript(), c("--vanilla", "-e", code),
    env = c("current", env), error_on_status = FALSE
  )
  if (res$status != 0) stop("Rscript failed: ", res$stderr)
  jsonlite::fromJSON(paste(readLines(out), collapse = "\n"), simplifyVector = FALSE)
}

copy_installed_package <- function() {
  lib <- withr::local_tempdir(.local_envir = parent.frame())
  file.copy(getNamespaceInfo(asNamespace("mcplite"), "path"), lib, recursive = TRUE)
  lib
}

test_that("R_LIBS is added when mcplite lives outside the default libraries", {
  skip_if_not_installed("processx")
  lib <- copy_installed_package()
  path <- write_script(withr::local_tempdir())
  parsed <- config_from_subprocess(lib, path, "R_LIBS")
  entry <- parsed$mcpServers$server
  expect_identical(entry$env$R_LIBS, normalizePath(lib))

  # The entry really launches the server: start it as a client would, with
  # the configured environment (and no user library to fall back on).
  server <- mcp_connect(entry$command, unlist(entry$args),
    env = c(unlist(entry$env), R_LIBS_USER = tempfile(), R_LIBS_SITE = tempfile(), HOME = tempdir()),
    protocol = "2025-06-18"
  )
  expect_identical(mcp_server_info(server)$server$name, "mcplite")
  expect_identical(mcp_list_tools(server), structure(list(), names = character()))
  expect_identical(mcp_close(server), "exited with status 0")
})

test_that("no env entry when mcplite is in a default (site) library", {
  skip_if_not_installed("processx")
  lib <- copy_installed_package()
  path <- write_script(withr::local_tempdir())
  parsed <- config_from_subprocess(lib, path, "R_LIBS_SITE")
  expect_null(parsed$mcpServers$server$env)
  expect_identical(parsed$mcpServers$server$args[[2]], normalizePath(path))
})

test_that("the script must exist and be a file", {
  dir <- withr::local_tempdir()
  # (No script at all is the session tools' server, R5.7.)
  expect_error(mcp_client_config(file.path(dir, "missing.R")), "`script`.*does not exist",
    class = "mcplite_error"
  )
  expect_error(mcp_client_config(dir), "`script`.*directory", class = "mcplite_error")
  expect_error(mcp_client_config(c("a.R", "b.R")), "`script`", class = "mcplite_error")
  expect_error(mcp_client_config(NA_character_), "`script`", class = "mcplite_error")
  expect_error(mcp_client_config(""), "`script`", class = "mcplite_error")
})

test_that("the script must end with a server call", {
  dir <- withr::local_tempdir()
  bad <- list(
    c("library(mcplite)", "x <- 1"),
    c("mcp_server(list())", "print('after')"),
    c("library(mcplite)", "tools <- list()", "# mcp_server(tools)"),
    c("server <- function() mcp_server(list())"),
    c("other::mcp_server(list())"),
    character()
  )
  for (lines in bad) {
    path <- write_script(dir, lines, file = "bad.R")
    expect_error(mcp_client_config(path), "`script`.*mcp_server", class = "mcplite_error")
  }
  path <- write_script(dir, c("f <- function(", "mcp_server(list())"), file = "broken.R")
  expect_error(mcp_client_config(path), "`script`.*not valid R code", class = "mcplite_error")

  good <- list(
    c("library(mcplite)", "mcp_server(list())"),
    c("mcplite::mcp_server(", "  list(),", "  instructions = 'hi'", ")", "# trailing comment"),
    "mcplite:::mcp_server(list())"
  )
  for (lines in good) {
    path <- write_script(dir, lines, file = "good.R")
    expect_s3_class(mcp_client_config(path), "mcplite_client_config")
  }
})

test_that("name and client are validated", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  expect_error(mcp_client_config(path, name = "has space"), "`name`", class = "mcplite_error")
  expect_error(mcp_client_config(path, name = ""), "`name`", class = "mcplite_error")
  expect_error(mcp_client_config(path, name = 1), "`name`", class = "mcplite_error")
  expect_error(mcp_client_config(path, name = strrep("a", 129)), "`name`", class = "mcplite_error")
  expect_error(mcp_client_config(path, client = "vscode"), "`client`", class = "mcplite_error")
  expect_error(mcp_client_config(path, client = c("cursor", "claude_code")), "`client`",
    class = "mcplite_error"
  )
})

test_that("printing shows the JSON and the claude mcp add line", {
  dir <- withr::local_tempdir()
  path <- write_script(dir)
  cfg <- mcp_client_config(path, client = "cursor")
  out <- capture.output(res <- print(cfg))
  expect_identical(res, cfg)
  text <- paste(out, collapse = "\n")
  expect_true(grepl(cfg$json, text, fixed = TRUE))
  expect_true(grepl(cfg$claude_code, text, fixed = TRUE))
  expect_true(grepl(".cursor/mcp.json", text, fixed = TRUE))
  expect_true(startsWith(cfg$claude_code, "claude mcp add --transport stdio "))
})

test_that("mcp_client_config(url = ) writes HTTP entries for each client", {
  url <- "http://127.0.0.1:8080/mcp"
  code <- mcp_client_config(url = url, name = "r-tools", client = "claude_code", token = "tok-1")
  entry <- jsonlite::fromJSON(code$json, simplifyVector = FALSE)$mcpServers$`r-tools`
  # Claude Code expands ${VAR} in .mcp.json headers: the token is not in the entry.
  expect_identical(entry, list(type = "http", url = url, headers = list(Authorization = "Bearer ${MCPLITE_TOKEN}")))
  expect_identical(code$token_env, "MCPLITE_TOKEN")
  expect_false(grepl("tok-1", code$json, fixed = TRUE))
  expect_false(grepl("tok-1", code$claude_code, fixed = TRUE))
  skip_on_os("windows")
  expect_identical(
    code$claude_code,
    "claude mcp add --transport http r-tools http://127.0.0.1:8080/mcp --header \"Authorization: Bearer ${MCPLITE_TOKEN}\""
  )
  expect_match(code$token_note, "refers to the token by the environment variable MCPLITE_TOKEN", fixed = TRUE)
  expect_true(all(strwrap(code$token_note) %in% capture.output(print(code))))

  cursor <- mcp_client_config(url = url, name = "r-tools", client = "cursor")
  entry <- jsonlite::fromJSON(cursor$json, simplifyVector = FALSE)$mcpServers$`r-tools`
  expect_identical(entry, list(url = url))
  # Cursor with a token: the URL and the bearer header, nothing else (issue 16).
  cursor <- mcp_client_config(url = "https://tools.example/mcp", name = "r-tools", client = "cursor",
    token = "tok-2", token_env = "R_TOOLS_TOKEN")
  entry <- jsonlite::fromJSON(cursor$json, simplifyVector = FALSE)$mcpServers$`r-tools`
  # Cursor's own interpolation syntax.
  expect_identical(entry, list(url = "https://tools.example/mcp", headers = list(Authorization = "Bearer ${env:R_TOOLS_TOKEN}")))
  expect_match(cursor$token_note, "set R_TOOLS_TOKEN to the token in the environment Cursor starts in", fixed = TRUE)
  expect_true(all(strwrap(cursor$token_note) %in% capture.output(print(cursor))))
  expect_output(print(cursor), ".cursor/mcp.json", fixed = TRUE)

  # Claude Desktop cannot refer to a variable: the value, and printing says so.
  # Plain http:// to another machine warns.
  expect_warning(
    desktop <- mcp_client_config(url = "http://tools.example:8080/mcp", client = "claude_desktop", token = "tok-1"),
    "`url` is plain http:// to tools.example, not this machine: the token and every call cross the network unencrypted"
  )
  expect_null(desktop$token_env)
  expect_match(desktop$token_note, "Claude Desktop's configuration cannot refer to an environment variable", fixed = TRUE)
  expect_true(all(strwrap(desktop$token_note) %in% capture.output(print(desktop))))
  entry <- jsonlite::fromJSON(desktop$json, simplifyVector = FALSE)$mcpServers$mcplite
  expect_identical(entry$command, "npx")
  expect_identical(unlist(entry$args), c(
    "-y", "mcp-remote", "http://tools.example:8080/mcp", "--allow-http",
    "--header", "Authorization:${MCPLITE_AUTH_HEADER}"
  ))
  expect_identical(entry$env, list(MCPLITE_AUTH_HEADER = "Bearer tok-1"))
  local <- mcp_client_config(url = url, client = "claude_desktop")
  expect_identical(unlist(jsonlite::fromJSON(local$json, simplifyVector = FALSE)$mcpServers$mcplite$args),
    c("-y", "mcp-remote", url))
  expect_output(print(code), "claude mcp add --transport http")
})

test_that("mcp_client_config(url = ) warns only for plain http:// to another machine", {
  for (u in c("http://127.0.0.1:8080/mcp", "http://localhost/mcp", "http://[::1]:9/mcp", "http://127.0.1.1/mcp",
              "https://tools.example/mcp")) {
    expect_no_warning(mcp_client_config(url = u, client = "cursor", token = "tok-3"))
  }
  for (u in c("http://10.0.0.5:8080/mcp", "http://tools.example/mcp", "http://[2001:db8::1]/mcp")) {
    expect_warning(mcp_client_config(url = u, client = "claude_code"), "unencrypted")
  }
})

test_that("mcp_client_config(url = ) checks its arguments", {
  expect_error(mcp_client_config(url = "http://a/mcp", token = "t", token_env = "1BAD"), "`token_env` must be the name",
    class = "mcplite_error")
  expect_error(mcp_client_config(url = "ftp://x"), "`url` must be a single http:// or https:// URL", class = "mcplite_error")
  expect_error(mcp_client_config(url = c("http://a", "http://b")), "`url`", class = "mcplite_error")
  expect_error(mcp_client_config(url = "http://a/mcp", token = "a b"), "`token` must be NULL or", class = "mcplite_error")
  script <- tempfile(fileext = ".R")
  writeLines("mcplite::mcp_server(list())", script)
  expect_error(mcp_client_config(script, url = "http://a/mcp"), "either `script`.*or `url`", class = "mcplite_error")
  expect_error(mcp_client_config(script, token = "t"), "`token` is only used with `url`", class = "mcplite_error")
})

# mcp_connect_config(): the servers of a configuration file, connected.
test_that("configuration files connect to each server", {
  skip_on_cran()
  skip_if_not_installed("withr")
  withr::local_envvar(MCPLITE_TEST_SECRET = "s3cret")
  dir <- withr::local_tempdir()
  config <- file.path(dir, "config.json")
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = ":")
  echo_env <- paste(legacy_sh, "read call; printf '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s|%s\"}]}}\\n' \"$MCPLITE_TEST_SECRET\" \"$TOKEN\"; cat >/dev/null", sep = "\n")
  writeLines(jsonlite::toJSON(auto_unbox = TRUE, pretty = TRUE, list(mcpServers = list(
    everything = list(command = rscript, args = list("--vanilla", client_server_script()), env = list(R_LIBS = libs)),
    shell = list(command = "/bin/sh", args = list("-c", echo_env), env = list(TOKEN = "t0k"), timeout = 10),
    off = list(command = "/nonexistent", disabled = TRUE)
  ))), config)
  servers <- mcp_connect_config(config)
  on.exit(mcp_close(servers), add = TRUE)
  expect_identical(names(servers), c("everything", "shell"))
  expect_identical(servers$everything$name, "everything")
  expect_identical(mcp_call(servers$shell, "env")$content[[1]]$text, "|t0k")
  tools <- mcp_tools(servers["everything"], prefix = TRUE)
  expect_true("everything_echo" %in% names(tools))
  only <- mcp_connect_config(config, servers = "shell")
  expect_identical(names(only), "shell")
  mcp_close(only)

  # failures: stop (closing what was opened) or warn and skip
  bad <- file.path(dir, "bad.json")
  writeLines('{"mcpServers": {"ok": {"command": "/bin/sh", "args": ["-c", "cat"]}, "missing": {"command": "/nonexistent/srv"}}}', bad)
  withr::local_options(mcplite.client_probe_timeout = 0.2)
  expect_error(mcp_connect_config(bad, servers = "missing"), class = "mcplite_error_connection")
  expect_warning(none <- mcp_connect_config(bad, servers = "missing", on_error = "warn"), "Cannot start")
  expect_identical(none, list())

  # malformed files name the problem
  expect_field_error(mcp_connect_config(file.path(dir, "nope.json")), "path")
  writeLines("{", bad)
  expect_field_error(mcp_connect_config(bad), "path")
  writeLines('{"servers": {}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers")
  writeLines('{"mcpServers": {"x": {"args": []}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x")
  writeLines('{"mcpServers": {"x": {"command": "a", "env": {"A": 1}}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x$env")
  writeLines('{"mcpServers": {"x": {"type": "sse", "url": "http://localhost/sse"}}}', bad)
  expect_field_error(mcp_connect_config(bad), "mcpServers$x$type")
  expect_field_error(mcp_connect_config(config, servers = "nope"), "servers")
})

# A legacy sh server that lists two tools and answers any call by writing
# the request to its stderr and "called" (ids taken from each request).
two_tools_sh <- paste(legacy_sh, paste0(
  "while read l; do id=$(echo \"$l\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); case \"$l\" in ",
  "*tools/list*) echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"tools\":[",
  "{\"name\":\"read_file\",\"inputSchema\":{\"type\":\"object\"}},",
  "{\"name\":\"delete_file\",\"inputSchema\":{\"type\":\"object\"}}]}}';; ",
  "*) echo \"$l\" >&2; echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"called\"}]}}';; ",
  "esac; done"), sep = "\n")

write_config <- function(path, servers) {
  writeLines(jsonlite::toJSON(list(mcpServers = servers), auto_unbox = TRUE, pretty = TRUE), path)
  path
}

test_that("K8.5: ignore_tools hides tools from the listing and blocks calls without asking the server", {
  skip_on_cran()
  dir <- withr::local_tempdir()
  config <- write_config(file.path(dir, "config.json"), list(
    files = list(command = "/bin/sh", args = list("-c", two_tools_sh), ignore_tools = list("delete_*")),
    one = list(command = "/bin/sh", args = list("-c", two_tools_sh), ignore_tools = "read_file")
  ))
  servers <- mcp_connect_config(config)
  on.exit(mcp_close(servers), add = TRUE)
  expect_identical(names(mcp_list_tools(servers$files)), "read_file")
  expect_identical(names(mcp_list_tools(servers$one)), "delete_file")
  tools <- mcp_tools(servers["files"])
  expect_identical(names(tools), "read_file")
  err <- expect_client_error(mcp_call(servers$files, "delete_file"), "mcplite_error_ignored_tool")
  expect_match(conditionMessage(err), "`delete_file`.*`files`.*ignore_tools")
  expect_identical(err$server, "files")
  # an allowed call goes through; the server saw it and never the blocked one (it writes each
  # call to stderr, which is read beside its answers: the line may come after the answer)
  expect_identical(mcp_call(servers$files, "read_file")$content[[1]]$text, "called")
  wait_until(function() any(grepl("\"read_file\"", mcp_stderr(servers$files))), "the call on the server's stderr")
  expect_false(any(grepl("delete_file", mcp_stderr(servers$files))))

  bad <- write_config(file.path(dir, "bad.json"), list(x = list(command = "a", ignore_tools = list(1, 2))))
  expect_field_error(mcp_connect_config(bad), "mcpServers$x$ignore_tools")
})

test_that("K8.5: `*` in ignore_tools stands for any characters, everything else is literal", {
  conn <- new_connection(NULL, "t", "stdio", "t", 1)
  conn_set_ignored(conn, c("a.b", "x*", "*_admin", "(paren)"))
  names <- c("a.b", "axb", "x", "xyz", "db_admin", "admin", "(paren)", "paren", "ax")
  expect_identical(conn_ignores(conn, names), c(TRUE, FALSE, TRUE, TRUE, TRUE, FALSE, TRUE, FALSE, FALSE))
  conn_set_ignored(conn, "*")
  expect_true(all(conn_ignores(conn, names)))
  conn_set_ignored(conn, character())
  expect_false(any(conn_ignores(conn, names)))
})

test_that("K8.6: with no path, the configuration file comes from the options, then ~/.config/mcplite, then ~/.config/mcptools", {
  skip_on_cran()
  skip_on_os("windows")
  home <- withr::local_tempdir()
  withr::local_envvar(HOME = home)
  withr::local_options(mcplite.config = NULL, .mcptools_config = NULL)
  err <- expect_error(mcp_connect_config(), class = "mcplite_error")
  expect_match(conditionMessage(err), "`path`.*mcplite.config.*\\.mcptools_config.*~/.config/mcplite/config.json.*~/.config/mcptools/config.json")
  expect_error(mcp_tools(), class = "mcplite_error")

  dir.create(file.path(home, ".config", "mcptools"), recursive = TRUE)
  write_config(file.path(home, ".config", "mcptools", "config.json"),
               list(mcptools_server = list(command = "/bin/sh", args = list("-c", two_tools_sh))))
  tools <- mcp_tools()
  expect_identical(sort(names(tools)), c("delete_file", "read_file"))
  mcp_close(tools)

  dir.create(file.path(home, ".config", "mcplite"), recursive = TRUE)
  write_config(file.path(home, ".config", "mcplite", "config.json"),
               list(mine = list(command = "/bin/sh", args = list("-c", two_tools_sh), ignore_tools = "read_*")))
  servers <- mcp_connect_config()
  expect_identical(names(servers), "mine")
  mcp_close(servers)

  other <- write_config(file.path(home, "other.json"),
                        list(by_option = list(command = "/bin/sh", args = list("-c", two_tools_sh))))
  withr::with_options(list(.mcptools_config = other), {
    servers <- mcp_connect_config()
    expect_identical(names(servers), "by_option")
    mcp_close(servers)
  })
  withr::with_options(list(mcplite.config = file.path(home, "missing.json"), .mcptools_config = other), {
    expect_field_error(mcp_connect_config(), "path")
  })
  withr::with_options(list(mcplite.config = 1), expect_field_error(mcp_connect_config(), "mcplite.config"))
})

test_that("K8.4/K8.6: mcp_tools() of a file warns about a server that fails, names it, and returns the others' tools", {
  skip_on_cran()
  dir <- withr::local_tempdir()
  withr::local_options(mcplite.client_probe_timeout = 0.5)
  config <- write_config(file.path(dir, "config.json"), list(
    broken = list(command = "/nonexistent/server"),
    good = list(command = "/bin/sh", args = list("-c", two_tools_sh))
  ))
  w <- NULL
  tools <- withCallingHandlers(mcp_tools(config), mcplite_warning_server = function(cnd) {
    w <<- cnd
    invokeRestart("muffleWarning")
  })
  on.exit(mcp_close(tools), add = TRUE)
  expect_s3_class(w, "mcplite_warning_server")
  expect_identical(w$server, "broken")
  expect_s3_class(w$error, "mcplite_error_connection")
  expect_match(conditionMessage(w), "^Skipped MCP server `broken`: ")
  expect_identical(sort(names(tools)), c("delete_file", "read_file"))
  expect_identical(tools$read_file()$content[[1]]$text, "called")

  # all or nothing
  expect_error(mcp_tools(config, on_error = "stop"), class = "mcplite_error_connection")
  expect_field_error(mcp_tools(config, on_error = "sometimes"), "on_error")
})

test_that("R5.7: mcp_client_config() without a script serves the session tools; `entry` is an agent SDK's", {
  cfg <- mcp_client_config()
  expect_identical(cfg$name, "r-session")
  expect_identical(cfg$args, c("--vanilla", "-e", "mcplite::mcp_server()"))
  expect_identical(cfg$entry$type, "stdio")
  expect_identical(cfg$entry$command, cfg$command)
  expect_identical(cfg$entry$args, cfg$args)
  parsed <- jsonlite::fromJSON(cfg$json, simplifyVector = FALSE)
  expect_identical(unlist(parsed$mcpServers$`r-session`$args), cfg$args)
  # The entry starts a server that lists the session tools.
  skip_on_cran()
  srv <- local_mcp_connect(cfg$entry$command, cfg$entry$args,
                           env = unlist(cfg$entry$env) %||% NULL)
  expect_true("list_r_sessions" %in% names(mcp_list_tools(srv)))
})

test_that("K8.4: an entry's timeout bounds each call overall, as in mcptools (progress does not extend it)", {
  forever <- paste(
    legacy_sh, "read call",
    "i=0; while :; do i=$((i+1)); sleep 0.1; echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":'$i'}}'; done",
    sep = "\n"
  )
  config <- withr::local_tempfile(fileext = ".json")
  writeLines(jsonlite::toJSON(auto_unbox = TRUE, list(mcpServers = list(
    slow = list(command = "/bin/sh", args = list("-c", forever), timeout = 2)
  ))), config)
  conn <- mcp_connect_config(config)[[1]]
  on.exit(mcp_close(conn), add = TRUE)
  n <- 0L
  started <- Sys.time()
  err <- expect_client_error(mcp_call(conn, "forever", progress = function(...) n <<- n + 1L),
                             "mcplite_error_timeout")
  expect_identical(err$seconds, 2)
  expect_gt(n, 2L)
  expect_lt(as.numeric(difftime(Sys.time(), started, units = "secs")), 10)
})
