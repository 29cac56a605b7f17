# Signing in to Streamable HTTP servers with OAuth (RULES K10): the
# settings of `mcp_connect(oauth = )` and of a configuration entry's `oauth`
# checked and handed to the engine (rust/engine/src/client/oauth/) as JSON,
# and the user agent that shows the sign-in page, which the bridge calls on
# R's thread while it waits for the server (oauth_open()).

oauth_members <- c(
  "authorization_server", "resource", "scope", "scope_mode", "client_info", "manual_client_info",
  "client_metadata", "client_metadata_url", "redirect_uri", "callback_host", "callback_port",
  "callback_path", "cache_dir", "allow_http", "timeout", "grant_type", "identity_provider"
)

# The members of `identity_provider` (cross-app access).
identity_provider_members <- c("issuer", "token_endpoint", "client_id", "client_secret", "id_token_file",
                               "id_token_env")
grant_types <- c("authorization_code", "client_credentials", "cross_app_access")

# The members of `client_info` and `manual_client_info`.
client_info_members <- c(
  "client_id", "client_secret", "token_endpoint_auth_method", "private_key_file", "private_key_env",
  "token_endpoint_auth_signing_alg"
)

# Where sign-ins are kept when `oauth[["cache_dir"]]` is not given.
oauth_cache_dir <- function() {
  dir <- getOption("mcplite.oauth_cache_dir")
  if (!is.null(dir)) {
    if (!is_scalar_string(dir)) {
      abort("Option `mcplite.oauth_cache_dir` must be a directory (a single string), not ", describe(dir), ".")
    }
    return(path.expand(dir))
  }
  file.path(tools::R_user_dir("mcplite", "cache"), "oauth")
}

# `oauth` of mcp_connect() -> the engine's settings as JSON, or NULL (never
# sign in). `what` is how the argument is named in messages.
oauth_settings <- function(oauth, what = "oauth") {
  if (isFALSE(oauth)) {
    return(NULL)
  }
  if (is.null(oauth) || isTRUE(oauth)) {
    oauth <- list()
  }
  field <- function(m) paste0("`", what, "$", m, "`")
  if (!is.list(oauth) || is.object(oauth) || (length(oauth) > 0L && !is_named_list(oauth, empty_ok = FALSE))) {
    abort("`", what, "` must be NULL, TRUE, FALSE or a named list of sign-in settings, not ", describe(oauth), ".")
  }
  unknown <- setdiff(names(oauth), oauth_members)
  if (length(unknown) > 0L) {
    abort(field(unknown[[1L]]), " is not a sign-in setting; the settings are ",
          paste0("`", oauth_members, "`", collapse = ", "), ".")
  }
  for (m in c("authorization_server", "resource", "scope", "client_metadata_url", "redirect_uri",
              "callback_host", "callback_path", "cache_dir")) {
    if (!is.null(oauth[[m]]) && !(is_scalar_string(oauth[[m]]) && nzchar(oauth[[m]]))) {
      abort(field(m), " must be a non-empty string, not ", describe(oauth[[m]]), ".")
    }
  }
  mode <- oauth[["scope_mode"]]
  if (!is.null(mode) && !(is_scalar_string(mode) && mode %in% c("add", "override"))) {
    abort(field("scope_mode"), " must be \"add\" or \"override\", not ", describe(mode), ".")
  }
  port <- oauth[["callback_port"]]
  if (!is.null(port) && !(is.numeric(port) && length(port) == 1L && !is.na(port) && port == round(port) &&
                          port >= 0 && port <= 65535)) {
    abort(field("callback_port"), " must be a port number (0 to 65535), not ", describe(port), ".")
  }
  if (!is.null(oauth[["allow_http"]]) && !is_true_false(oauth[["allow_http"]])) {
    abort(field("allow_http"), " must be TRUE or FALSE, not ", describe(oauth[["allow_http"]]), ".")
  }
  if (!is.null(oauth[["timeout"]]) && !(is.numeric(oauth[["timeout"]]) && length(oauth[["timeout"]]) == 1L &&
                                   !is.na(oauth[["timeout"]]) && oauth[["timeout"]] > 0)) {
    abort(field("timeout"), " must be a positive number of seconds, not ", describe(oauth[["timeout"]]), ".")
  }
  grant <- oauth[["grant_type"]]
  if (!is.null(grant) && !(is_scalar_string(grant) && grant %in% grant_types)) {
    abort(field("grant_type"), " must be one of ", paste0("\"", grant_types, "\"", collapse = ", "), ", not ",
          describe(grant), ".")
  }
  idp <- oauth[["identity_provider"]]
  if (!is.null(idp)) {
    ok <- is.list(idp) && is_named_list(idp, empty_ok = FALSE) && all(names(idp) %in% identity_provider_members) &&
      is_scalar_string(idp[["client_id"]]) && all(vapply(idp, is_scalar_string, logical(1)))
    if (!ok) {
      abort(field("identity_provider"), " must be a list with the string `client_id` and optionally ",
            paste0("`", identity_provider_members[-3L], "`", collapse = ", "), " (strings).")
    }
    if (!is.null(idp[["client_secret"]])) {
      idp[["client_secret"]] <- interpolate_value(idp[["client_secret"]], field("identity_provider$client_secret"))
    }
    file <- idp[["id_token_file"]]
    if (!is.null(file)) {
      if (!file.exists(path.expand(file)) || dir.exists(path.expand(file))) {
        abort(field("identity_provider$id_token_file"), " must be the path of a file holding the ID token; \"",
              file, "\" does not exist.")
      }
      idp[["id_token_file"]] <- normalizePath(path.expand(file), mustWork = TRUE)
    }
    env <- idp[["id_token_env"]]
    if (!is.null(env) && !nzchar(Sys.getenv(env))) {
      abort(field("identity_provider$id_token_env"), " names the environment variable `", env, "`, which is not set.")
    }
    oauth[["identity_provider"]] <- idp
  }
  for (m in c("client_info", "manual_client_info")) {
    info <- oauth[[m]]
    if (is.null(info)) next
    ok <- is.list(info) && is_named_list(info, empty_ok = FALSE) &&
      all(names(info) %in% client_info_members) &&
      is_scalar_string(info[["client_id"]]) && all(vapply(info, is_scalar_string, logical(1)))
    if (!ok) {
      abort(field(m), " must be a list with the string `client_id` and optionally ",
            paste0("`", client_info_members[-1L], "`", collapse = ", "), " (strings).")
    }
    # A secret may come from the environment: `${NAME}`, as in headers.
    if (!is.null(info[["client_secret"]])) {
      info[["client_secret"]] <- interpolate_value(info[["client_secret"]], field(paste0(m, "$client_secret")))
    }
    key <- info[["private_key_file"]]
    if (!is.null(key)) {
      key <- path.expand(key)
      if (!file.exists(key) || dir.exists(key)) {
        abort(field(paste0(m, "$private_key_file")), " must be the path of a PEM private key file; \"",
              info[["private_key_file"]], "\" does not exist.")
      }
      info[["private_key_file"]] <- normalizePath(key, mustWork = TRUE)
    }
    env <- info[["private_key_env"]]
    if (!is.null(env) && !nzchar(Sys.getenv(env))) {
      abort(field(paste0(m, "$private_key_env")), " names the environment variable `", env, "`, which is not set.")
    }
    oauth[[m]] <- info
  }
  if (!is.null(oauth[["client_metadata"]]) && !(is.list(oauth[["client_metadata"]]) &&
                                           is_named_list(oauth[["client_metadata"]], empty_ok = TRUE))) {
    abort(field("client_metadata"), " must be a named list (members of the client's registration).")
  }
  if (is.null(oauth[["cache_dir"]])) {
    oauth[["cache_dir"]] <- oauth_cache_dir()
  }
  oauth[["cache_dir"]] <- path.expand(oauth[["cache_dir"]])
  if (!is.null(port)) oauth[["callback_port"]] <- as.integer(port)
  meta <- oauth[["client_metadata"]]
  if (!is.null(meta)) {
    # an empty list is written as an object
    oauth[["client_metadata"]] <- structure(meta, names = names(meta) %||% character())
  }
  as.character(jsonlite::toJSON(oauth, auto_unbox = TRUE, digits = NA))
}

# The bridge calls this on R's thread with the URL of a sign-in page
# (rust/mcplite-r/src/client.rs, show_sign_in_pages()): the option
# `mcplite.oauth_user_agent` (a function of the URL), else the command in
# MCPLITE_OAUTH_USER_AGENT (run with the URL as its last argument), else the
# browser in an interactive session; the URL is always printed otherwise.
oauth_open <- function(url, name) {
  agent <- getOption("mcplite.oauth_user_agent")
  if (is.function(agent)) {
    return(invisible(agent(url)))
  }
  command <- Sys.getenv("MCPLITE_OAUTH_USER_AGENT")
  if (nzchar(command)) {
    return(invisible(system(paste(command, shQuote(url)), ignore.stdout = TRUE, ignore.stderr = TRUE)))
  }
  message("MCP server `", name, "` asks you to sign in: ",
          if (interactive()) "opening " else "open ", url, if (!interactive()) " in a browser.")
  if (interactive()) {
    utils::browseURL(url)
  }
  invisible()
}
