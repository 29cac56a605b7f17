# The MCP client over HTTPS (issue 18): nginx terminates TLS with
# certificates from a CA made here with openssl and proxies to an mcplite
# HTTP server. Trusted through `ca_file` or SSL_CERT_FILE the connection
# works; with the platform's trust store alone (which does not hold the test
# CA), or with a certificate for another host name, it fails with a classed
# error naming the URL and the reason.

skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("withr")

# A CA, a certificate for localhost/127.0.0.1 and one for another name.
make_test_pki <- function(dir, ca_name = "mcplite test CA") {
  openssl <- Sys.which("openssl")
  skip_if(!nzchar(openssl), "openssl not found")
  run <- function(...) {
    out <- suppressWarnings(system2(openssl, shQuote(c(...)), stdout = TRUE, stderr = TRUE))
    if (!is.null(attr(out, "status"))) stop("openssl failed: ", paste(out, collapse = "\n"))
  }
  f <- function(x) file.path(dir, x)
  run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
      "-subj", paste0("/CN=", ca_name), "-keyout", f("ca.key"), "-out", f("ca.pem"),
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
  leaf <- function(stem, san) {
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=mcplite test",
        "-keyout", f(paste0(stem, ".key")), "-out", f(paste0(stem, ".csr")))
    writeLines(c(paste0("subjectAltName=", san), "extendedKeyUsage=serverAuth",
                 "basicConstraints=CA:FALSE"), f(paste0(stem, ".ext")))
    run("x509", "-req", "-in", f(paste0(stem, ".csr")), "-CA", f("ca.pem"), "-CAkey", f("ca.key"),
        "-CAcreateserial", "-days", "2", "-extfile", f(paste0(stem, ".ext")), "-out", f(paste0(stem, ".pem")))
  }
  leaf("good", "DNS:localhost,IP:127.0.0.1")
  leaf("wrong", "DNS:wrong.example")
  list(ca = f("ca.pem"), dir = dir)
}

# An mcplite HTTP server with one tool, `add`; returns its host:port.
start_backend <- function(envir = parent.frame()) {
  srv <- start_http_server(c(
    "library(mcplite)",
    "add <- tool(function(x, y) x + y, 'Add.', name = 'add', arguments = list(x = type_number(), y = type_number()))",
    "mcp_server(add, transport = 'http', port = 0L)"
  ), envir = envir)
  sub("^http://([^/]+)/mcp$", "\\1", srv$url)
}

# nginx with two TLS listeners in front of `backend` (host:port): one with
# the good certificate, one with the certificate for another name.
start_tls_front <- function(pki, backend, envir = parent.frame()) {
  server_block <- function(port, stem) c(
    "  server {",
    sprintf("    listen 127.0.0.1:%d ssl;", port),
    sprintf("    ssl_certificate %s;", file.path(pki$dir, paste0(stem, ".pem"))),
    sprintf("    ssl_certificate_key %s;", file.path(pki$dir, paste0(stem, ".key"))),
    "    location / {",
    sprintf("      proxy_pass http://%s;", backend),
    "      proxy_http_version 1.1;",
    "      proxy_set_header Connection \"\";",
    "      proxy_set_header Host 127.0.0.1;",
    "      proxy_buffering off;",
    "    }",
    "  }"
  )
  start_nginx(function(ports) c(
    "worker_processes 1;", "error_log stderr warn;", "pid nginx.pid;", "events { worker_connections 64; }",
    "http {", "  access_log off;", "  client_body_temp_path tmp/body;", "  proxy_temp_path tmp/proxy;",
    "  fastcgi_temp_path tmp/fastcgi;", "  uwsgi_temp_path tmp/uwsgi;", "  scgi_temp_path tmp/scgi;",
    server_block(ports[[1]], "good"), server_block(ports[[2]], "wrong"), "}"
  ), n = 2L, envir = envir)$ports
}

test_that("issue 18: https:// with a private CA given by ca_file or SSL_CERT_FILE", {
  pki <- make_test_pki(withr::local_tempdir())
  ports <- start_tls_front(pki, start_backend())
  url <- sprintf("https://127.0.0.1:%d/mcp", ports[[1]])
  withr::local_envvar(SSL_CERT_FILE = NA)

  conn <- mcp_connect(url = url, ca_file = pki$ca, timeout = 30)
  expect_identical(mcp_server_info(conn)$protocol_version, "2026-07-28")
  expect_identical(names(mcp_list_tools(conn)), "add")
  expect_identical(mcp_call(conn, "add", list(x = 2, y = 40))$content[[1]]$text, "42")
  mcp_close(conn)

  # the host name form of the URL, and the legacy era, over TLS
  conn <- mcp_connect(url = sprintf("https://localhost:%d/mcp", ports[[1]]), ca_file = pki$ca,
                      protocol = "2025-11-25")
  expect_identical(mcp_server_info(conn)$protocol_version, "2025-11-25")
  expect_identical(mcp_call(conn, "add", list(x = 1, y = 1))$content[[1]]$text, "2")
  mcp_close(conn)

  # SSL_CERT_FILE names the CA bundle when `ca_file` is not given
  withr::with_envvar(c(SSL_CERT_FILE = pki$ca), {
    conn <- mcp_connect(url = url)
    expect_identical(mcp_call(conn, "add", list(x = 3, y = 4))$content[[1]]$text, "7")
    mcp_close(conn)
  })
})

test_that("issue 18: an untrusted or misnamed certificate is a classed error naming the URL and why", {
  pki <- make_test_pki(withr::local_tempdir())
  ports <- start_tls_front(pki, start_backend())
  url <- sprintf("https://127.0.0.1:%d/mcp", ports[[1]])
  withr::local_envvar(SSL_CERT_FILE = NA)

  # the platform's trust store does not hold the test CA
  e <- expect_error(mcp_connect(url = url, timeout = 30), class = "mcplite_error_tls")
  expect_s3_class(e, "mcplite_error_connection")
  expect_identical(e$reason, "tls")
  expect_identical(e$url, url)
  expect_match(conditionMessage(e), url, fixed = TRUE)
  expect_match(conditionMessage(e), "not issued by a trusted certificate authority")

  # a certificate from the trusted CA, but for another host name
  wrong <- sprintf("https://127.0.0.1:%d/mcp", ports[[2]])
  e <- expect_error(mcp_connect(url = wrong, ca_file = pki$ca, timeout = 30), class = "mcplite_error_tls")
  expect_match(conditionMessage(e), wrong, fixed = TRUE)
  expect_match(conditionMessage(e), "not valid for the host name")

  # a CA file that is not the server's CA
  other <- make_test_pki(withr::local_tempdir(), "another CA")
  expect_error(mcp_connect(url = url, ca_file = other$ca, timeout = 30), "not issued by a trusted",
               class = "mcplite_error_tls")

  # plain HTTP to the TLS port: a clear connection error, no hang
  expect_error(mcp_connect(url = sub("^https", "http", url), timeout = 10), class = "mcplite_error_connection")
})

test_that("issue 18: ca_file and SSL_CERT_FILE are checked", {
  withr::local_envvar(SSL_CERT_FILE = NA)
  expect_error(mcp_connect(url = "https://127.0.0.1:9/mcp", ca_file = "/no/such/ca.pem"),
               "`ca_file` must be the path of a PEM file.*/no/such/ca.pem", class = "mcplite_error")
  expect_error(mcp_connect(url = "https://127.0.0.1:9/mcp", ca_file = 1), "`ca_file`", class = "mcplite_error")
  expect_error(mcp_connect("Rscript", ca_file = "x.pem"), "`ca_file` applies to `url`", class = "mcplite_error")
  withr::with_envvar(c(SSL_CERT_FILE = "/no/such/bundle.pem"), {
    expect_error(mcp_connect(url = "https://127.0.0.1:9/mcp"), "SSL_CERT_FILE must be the path",
                 class = "mcplite_error")
  })
  empty <- withr::local_tempfile(lines = "no certificates here")
  expect_error(mcp_connect(url = "https://127.0.0.1:9/mcp", ca_file = empty), "holds no PEM certificate",
               class = "mcplite_error_connection")
})

test_that("K4.6: HTTPS_PROXY and HTTP_PROXY are used by scheme, NO_PROXY bypasses them, CA variables are read", {
  pki <- make_test_pki(withr::local_tempdir())
  backend <- start_backend()
  ports <- start_tls_front(pki, backend)
  proxy <- start_tinyproxy()
  local_no_proxy_env()
  withr::local_envvar(SSL_CERT_FILE = NA, CURL_CA_BUNDLE = NA, HTTPS_PROXY = proxy$url)
  url <- sprintf("https://127.0.0.1:%d/mcp", ports[[1]])
  through <- function(hostport) sum(grepl(hostport, proxy$requests(), fixed = TRUE))

  # https:// through the proxy (a CONNECT tunnel: TLS is end to end)
  conn <- mcp_connect(url = url, ca_file = pki$ca, timeout = 30)
  expect_identical(mcp_call(conn, "add", list(x = 2, y = 40))$content[[1]]$text, "42")
  mcp_close(conn)
  expect_true(any(startsWith(proxy$requests(), sprintf("CONNECT 127.0.0.1:%d ", ports[[1]]))))

  # through the proxy too, a CA the trust store lacks is refused; the bundle
  # CURL_CA_BUNDLE names is used (as SSL_CERT_FILE, which comes first)
  expect_error(mcp_connect(url = url, timeout = 30), "not issued by a trusted", class = "mcplite_error_tls")
  withr::with_envvar(c(CURL_CA_BUNDLE = pki$ca), {
    conn <- mcp_connect(url = url, timeout = 30)
    expect_identical(mcp_call(conn, "add", list(x = 1, y = 2))$content[[1]]$text, "3")
    mcp_close(conn)
  })
  other <- make_test_pki(withr::local_tempdir(), "another CA")
  withr::with_envvar(c(SSL_CERT_FILE = other$ca, CURL_CA_BUNDLE = pki$ca), {
    expect_error(mcp_connect(url = url, timeout = 30), "not issued by a trusted", class = "mcplite_error_tls")
  })
  withr::with_envvar(c(CURL_CA_BUNDLE = "/no/such/bundle.pem"), {
    expect_error(mcp_connect(url = url), "CURL_CA_BUNDLE must be the path", class = "mcplite_error")
  })

  # NO_PROXY: straight to the server, the proxy sees nothing
  seen <- length(proxy$requests())
  withr::with_envvar(c(NO_PROXY = "localhost,127.0.0.1", CURL_CA_BUNDLE = pki$ca), {
    conn <- mcp_connect(url = url, timeout = 30)
    expect_identical(mcp_call(conn, "add", list(x = 5, y = 5))$content[[1]]$text, "10")
    mcp_close(conn)
  })
  expect_length(proxy$requests(), seen)

  # http:// goes through HTTP_PROXY, not HTTPS_PROXY
  plain <- sprintf("http://%s/mcp", backend)
  conn <- mcp_connect(url = plain, timeout = 30)
  mcp_close(conn)
  expect_identical(through(backend), 0L)
  withr::with_envvar(c(HTTP_PROXY = proxy$url), {
    conn <- mcp_connect(url = plain, timeout = 30)
    expect_identical(mcp_call(conn, "add", list(x = 20, y = 22))$content[[1]]$text, "42")
    mcp_close(conn)
  })
  expect_gt(through(backend), 0L)

  # A proxy that is not there, or that is no proxy (an MCP server answers the
  # CONNECT): a connection error that names the variable, never its value.
  gone <- sprintf("http://user:hunter2-secret@127.0.0.1:%d", free_port())
  withr::with_envvar(c(HTTPS_PROXY = gone), {
    e <- expect_error(mcp_connect(url = url, ca_file = pki$ca, timeout = 30), class = "mcplite_error_connection")
    expect_match(conditionMessage(e), "through the proxy of HTTPS_PROXY", fixed = TRUE)
    expect_false(grepl("hunter2", conditionMessage(e), fixed = TRUE))
  })
  withr::with_envvar(c(HTTPS_PROXY = paste0("http://", backend)), {
    e <- expect_error(mcp_connect(url = url, ca_file = pki$ca, timeout = 30), class = "mcplite_error_connection")
    expect_match(conditionMessage(e), "proxy")
  })
  withr::with_envvar(c(HTTPS_PROXY = "ftp://hunter2-secret@x"), {
    e <- expect_error(mcp_connect(url = url, ca_file = pki$ca), "HTTPS_PROXY is not a proxy URL",
                      class = "mcplite_error_connection")
    expect_false(grepl("hunter2", conditionMessage(e), fixed = TRUE))
  })
})
