# Real HTTP servers (and nginx) for the HTTP, client and TLS tests.

http_rscript <- function() file.path(R.home("bin"), "Rscript")

# Start a server script over HTTP on a free port; returns the process and the
# endpoint URL read from its one start-up line on stderr.
start_http_server <- function(code, env = character(), envir = parent.frame()) {
  skip_if_not_installed("processx")
  skip_if(!nzchar(Sys.which("curl")), "curl not found")
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  p <- processx::process$new(
    http_rscript(), c("--vanilla", script),
    stdout = "|", stderr = "|",
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), env)
  )
  withr::defer(if (p$is_alive()) p$kill(), envir = envir)
  err <- ""
  deadline <- Sys.time() + 60
  while (Sys.time() < deadline && p$is_alive()) {
    p$poll_io(200)
    err <- paste0(err, p$read_error())
    url <- regmatches(err, regexpr("http://[^ ]+/mcp", err))
    if (length(url) == 1L) {
      return(list(process = p, url = url, stderr = err))
    }
  }
  stop("the server did not start: ", err, p$read_all_error())
}

# Three replicas of the server script `code` behind nginx with the shipped
# configuration (inst/deploy/nginx.conf, its upstream ports replaced by the
# replicas'), named as mcplite@.service names them (MCPLITE_REPLICA r8081,
# r8082, r8083) and each given `env`: list(url (nginx's endpoint), replicas
# (as start_http_server() gives them), nginx (its process)).
start_nginx_replicas <- function(code, env = character(), envir = parent.frame()) {
  skip_if(!nzchar(Sys.which("nginx")) && !file.exists("/usr/sbin/nginx"), "nginx not installed")
  conf_src <- system.file("deploy", "nginx.conf", package = "mcplite")
  skip_if(!nzchar(conf_src), "inst/deploy/nginx.conf not installed")
  replicas <- lapply(1:3, function(i) {
    start_http_server(code, env = c(env, MCPLITE_REPLICA = paste0("r808", i)), envir = envir)
  })
  ports <- vapply(replicas, function(r) sub("^http://127.0.0.1:([0-9]+)/mcp$", "\\1", r$url), "")
  conf <- readLines(conf_src)
  conf <- sub("server 127.0.0.1:808([1-3])", "server 127.0.0.1:PORT\\1", conf)
  for (i in 1:3) conf <- gsub(paste0("PORT", i), ports[[i]], conf, fixed = TRUE)
  nx <- start_nginx(function(p) sub("listen 127.0.0.1:8080;", sprintf("listen 127.0.0.1:%d;", p), conf, fixed = TRUE),
                    envir = envir)
  list(url = sprintf("http://127.0.0.1:%d/mcp", nx$ports[[1]]), replicas = replicas, nginx = nx$process)
}

# TRUE when something accepts TCP connections on 127.0.0.1:`port`.
port_listening <- function(port) {
  con <- suppressWarnings(tryCatch(
    socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE, timeout = 2),
    error = function(e) NULL
  ))
  if (is.null(con)) return(FALSE)
  close(con)
  TRUE
}

# Start nginx (foreground, its own prefix directory) with the lines
# `conf(ports)` as its configuration, for `n` loopback ports it listens on.
# The ports are picked below Linux's ephemeral range (32768 and up), where
# the servers under test and every outgoing connection get theirs, and must
# be free before the start. Returns the process and the ports once nginx
# accepts connections on all of them; another set of ports is tried when it
# cannot bind. A start that never succeeds fails the test.
start_nginx <- function(conf, n = 1L, envir = parent.frame()) {
  nginx <- Sys.which("nginx")
  if (!nzchar(nginx) && file.exists("/usr/sbin/nginx")) nginx <- "/usr/sbin/nginx"
  skip_if(!nzchar(nginx), "nginx not installed")
  prefix <- withr::local_tempdir(.local_envir = envir)
  dir.create(file.path(prefix, "tmp"))
  file <- file.path(prefix, "nginx.conf")
  errors <- character()
  for (attempt in 1:5) {
    ports <- sample(20000:32000, n)
    if (any(vapply(ports, port_listening, logical(1)))) next
    writeLines(conf(ports), file)
    px <- processx::process$new(nginx, c("-p", prefix, "-c", file, "-g", "daemon off;"),
      stdout = "|", stderr = "|")
    up <- function() all(vapply(ports, port_listening, logical(1)))
    deadline <- Sys.time() + 10
    while (px$is_alive() && Sys.time() < deadline && !up()) Sys.sleep(0.05)
    if (px$is_alive() && up()) {
      withr::defer(if (px$is_alive()) px$kill(), envir = envir)
      return(list(process = px, ports = ports))
    }
    px$kill()
    errors <- c(errors, px$read_all_error())
  }
  stop("nginx did not start: ", paste(errors, collapse = "\n"))
}

# A port nothing listens on, below Linux's ephemeral range (32768 and up), so
# that no outgoing connection holds it either.
free_port <- function() {
  for (i in 1:50) {
    port <- sample(20000:32000, 1L)
    if (!port_listening(port)) return(port)
  }
  stop("no free port")
}

# Start a server that is not an mcplite script (an SDK peer, a test server):
# `command args...`, with `env` added to the environment, and wait until it
# accepts connections on `port`; stopped when the calling test ends. R's
# LD_LIBRARY_PATH is not passed on (it breaks some Python builds). Its
# stderr is read with server_stderr().
start_peer_server <- function(command, args, port, env = character(), envir = parent.frame()) {
  penv <- Sys.getenv()
  penv <- c(penv[setdiff(names(penv), "LD_LIBRARY_PATH")], env)
  errfile <- tempfile(fileext = ".log")
  p <- processx::process$new(command, args, stdout = "|", stderr = errfile, env = penv, cleanup_tree = TRUE)
  withr::defer(if (p$is_alive()) p$kill(), envir = envir)
  attr(p, "errfile") <- errfile
  for (i in 1:150) {
    if (port_listening(port)) return(p)
    if (!p$is_alive()) break
    Sys.sleep(0.1)
  }
  p$kill()
  err <- paste(readLines(errfile, warn = FALSE), collapse = "\n")
  skip(paste("HTTP test server did not start:", substr(err, 1, 300)))
}

server_stderr <- function(p) paste(readLines(attr(p, "errfile"), warn = FALSE), collapse = "\n")

# One HTTP request with curl: the status, the body and the header lines.
curl_http <- function(url, body = NULL, headers = character(), method = NULL) {
  hdr <- tempfile()
  args <- c("-s", "-o", "-", "-D", hdr, "--max-time", "30")
  if (!is.null(method)) args <- c(args, "-X", method)
  for (h in headers) args <- c(args, "-H", h)
  if (!is.null(body)) args <- c(args, "-H", "Content-Type: application/json", "--data-binary", body)
  res <- processx::run("curl", c(args, url), error_on_status = FALSE)
  head <- readLines(hdr, warn = FALSE)
  status <- as.integer(sub("^HTTP/[0-9.]+ ([0-9]+).*", "\\1", head[grepl("^HTTP/", head)][1]))
  list(status = status, body = res$stdout, headers = head)
}

# A modern (2026-07-28) request with its mirrored headers.
modern_post <- function(url, method, name = NULL, params = list(), headers = character()) {
  params[["_meta"]] <- list(
    "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" = structure(list(), names = character())
  )
  body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 1L, method = method, params = params), auto_unbox = TRUE)
  h <- c("MCP-Protocol-Version: 2026-07-28", paste0("Mcp-Method: ", method), headers)
  if (!is.null(name)) h <- c(h, paste0("Mcp-Name: ", name))
  curl_http(url, body, h)
}

# tinyproxy (Debian's forward proxy; scripts/deps/20-clients.sh installs it)
# in the foreground on a free loopback port, logging every request it is
# asked to forward; stopped when the calling test ends. Returns its URL and
# `requests()`, the request lines it logged so far ("CONNECT host:port
# HTTP/1.1", "GET http://host:port/path HTTP/1.1").
start_tinyproxy <- function(envir = parent.frame()) {
  tp <- Sys.which("tinyproxy")
  if (!nzchar(tp) && file.exists("/usr/bin/tinyproxy")) tp <- "/usr/bin/tinyproxy"
  skip_if(!nzchar(tp), "tinyproxy not installed (scripts/deps/20-clients.sh)")
  dir <- withr::local_tempdir(.local_envir = envir)
  conf <- file.path(dir, "tinyproxy.conf")
  log <- file.path(dir, "tinyproxy.log")
  for (attempt in 1:5) {
    port <- free_port()
    writeLines(c(sprintf("Port %d", port), "Listen 127.0.0.1", "Allow 127.0.0.1", "Timeout 60",
                 "MaxClients 32", "LogLevel Connect", sprintf("LogFile \"%s\"", log)), conf)
    px <- processx::process$new(tp, c("-d", "-c", conf), stdout = "|", stderr = "|")
    deadline <- Sys.time() + 10
    while (px$is_alive() && Sys.time() < deadline && !port_listening(port)) Sys.sleep(0.05)
    if (px$is_alive() && port_listening(port)) {
      withr::defer(if (px$is_alive()) px$kill(), envir = envir)
      requests <- function() {
        lines <- if (file.exists(log)) readLines(log, warn = FALSE) else character()
        sub("^.*Request [(]file descriptor [0-9]+[)]: ", "", grep("Request [(]file descriptor", lines, value = TRUE))
      }
      return(list(url = sprintf("http://127.0.0.1:%d", port), requests = requests, process = px))
    }
    px$kill()
  }
  stop("tinyproxy did not start")
}

# No proxy variable from the machine's environment in this test.
local_no_proxy_env <- function(envir = parent.frame()) {
  vars <- c("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
            "no_proxy")
  withr::local_envvar(stats::setNames(rep(NA_character_, length(vars)), vars), .local_envir = envir)
}
