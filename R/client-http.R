# The MCP client over Streamable HTTP (RULES K4): the URL, headers and CA
# bundle checked in R; the connection is the engine's (rust/engine/src/client/http_link.rs).

# `${NAME}` in header values -> the environment variable's value. The names
# and values are then checked by the engine (RULES K4.1).
interpolate_headers <- function(headers) {
  if (is.null(headers) || length(headers) == 0L) {
    return(character())
  }
  values <- named_strings(headers)
  nms <- names(values)
  if (is.null(values)) {
    abort_arg("`headers` must be a named character vector (or a named list of single strings).")
  }
  for (i in seq_along(values)) {
    values[[i]] <- interpolate_value(values[[i]], paste0("`headers$", nms[[i]], "`"))
  }
  names(values) <- nms
  values
}

# `${NAME}` in one string -> the environment variable's value; `what` names
# the string in the error (never its value, which may hold a secret).
interpolate_value <- function(v, what) {
  refs <- regmatches(v, gregexpr("\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}", v))[[1L]]
  for (ref in unique(refs)) {
    var <- substr(ref, 3L, nchar(ref) - 1L)
    val <- Sys.getenv(var, unset = NA)
    if (is.na(val)) {
      abort_arg(what, " refers to the environment variable `", var, "`, which is not set.")
    }
    v <- gsub(ref, val, v, fixed = TRUE)
  }
  v
}

connect_http <- function(url, headers, ca_file, name, timeout, protocol, oauth = NULL, allow_http = FALSE,
                         capabilities = "{}", log_level = NULL) {
  if (!is_scalar_string(url) || !grepl("^https?://[^/?#]+", url)) {
    abort_arg("`url` must be a single http:// or https:// URL, not ",
              if (is_scalar_string(url)) paste0("\"", url, "\"") else describe(url), ".")
  }
  headers <- interpolate_headers(headers)
  ca_file <- check_ca_file(ca_file)
  if (isTRUE(allow_http) && is.list(oauth) && is.null(oauth[["allow_http"]])) {
    oauth[["allow_http"]] <- TRUE
  } else if (isTRUE(allow_http) && (is.null(oauth) || isTRUE(oauth))) {
    oauth <- list(allow_http = TRUE)
  }
  oauth <- oauth_settings(oauth)
  host <- sub("^https?://([^/?#]+).*$", "\\1", url)
  host <- sub("^[^@]*@", "", host)
  check_cleartext_credentials(url, host, headers, allow_http)
  name <- check_connection_name(name, host)
  ptr <- client_connect_http(
    url, unname(headers), names(headers) %||% character(), if (identical(protocol, "auto")) NULL else protocol,
    timeout, probe_timeout(), max_message(), client_version(), capabilities, log_level, ca_file, oauth, name
  )
  new_connection(ptr, name, "http", url, timeout)
}

# The CA bundle for https:// URLs (RULES K4.6): `ca_file`, else
# SSL_CERT_FILE, else CURL_CA_BUNDLE (curl's), else NULL (the platform's
# trust store).
check_ca_file <- function(ca_file) {
  what <- "`ca_file`"
  if (is.null(ca_file)) {
    vars <- c("SSL_CERT_FILE", "CURL_CA_BUNDLE")
    set <- vars[nzchar(Sys.getenv(vars))]
    if (length(set) == 0L) {
      return(NULL)
    }
    ca_file <- Sys.getenv(set[[1L]])
    what <- paste("The environment variable", set[[1L]])
  }
  if (!is_scalar_string(ca_file) || !file.exists(ca_file) || dir.exists(ca_file)) {
    abort_arg(what, " must be the path of a PEM file of CA certificates, not ",
              if (is_scalar_string(ca_file)) paste0("\"", ca_file, "\"") else describe(ca_file), ".")
  }
  normalizePath(ca_file, mustWork = TRUE)
}

# RULES K4.7: credentials in `headers` are not sent in clear text to another
# machine: a plain http:// URL whose host is not a loopback address is
# refused when a header carries credentials, unless `allow_http`.
check_cleartext_credentials <- function(url, host, headers, allow_http) {
  if (isTRUE(allow_http) || !grepl("^http://", url, ignore.case = TRUE) || length(headers) == 0L) {
    return(invisible())
  }
  hostname <- tolower(if (startsWith(host, "[")) sub("^\\[([^]]*)\\].*$", "\\1", host) else sub(":[0-9]*$", "", host))
  loopback <- hostname %in% c("localhost", "::1") || grepl("[.]localhost$", hostname) ||
    grepl("^127[.][0-9]+[.][0-9]+[.][0-9]+$", hostname)
  if (loopback) {
    return(invisible())
  }
  credentials <- names(headers)[credential_header(names(headers))]
  if (length(credentials) > 0L) {
    abort_arg("`url` is plain http:// on another machine (\"", hostname, "\") and `headers` carry credentials (",
              paste0("`", credentials, "`", collapse = ", "), "): they would cross the network unencrypted. ",
              "Use https://, or set `allow_http = TRUE` (\"allow_http\": true in a configuration entry) to send ",
              "them anyway.")
  }
  invisible()
}

# Header names that carry credentials (RULES K4.7).
credential_header <- function(names) {
  lower <- tolower(names)
  lower %in% c("authorization", "proxy-authorization", "cookie") |
    grepl("key|token|secret|auth|session|password", lower)
}
