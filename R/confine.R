# Confined workers (RULES N7): a server whose tools include package tools
# (and any server with confine = TRUE) runs its tools in worker processes
# that confine themselves by the kernel once they have run the server's
# script up to mcp_server(), before they serve their first call
# (rust/engine/src/confine.rs: Landlock, resource limits and seccomp on
# Linux).

check_confine <- function(confine) {
  check_bool(confine, allow_null = TRUE)
  if (isTRUE(confine) && !identical(Sys.info()[["sysname"]], "Linux")) {
    abort(
      "`confine = TRUE` needs the Linux kernel's Landlock and seccomp; on this platform workers ",
      "cannot be confined (run the server as an unprivileged user, in a container or a virtual machine).",
      class = "mcplite_error_workers"
    )
  }
  invisible()
}

# Does `tools` hold a tool made by package_tools()?
has_package_tools <- function(tools) {
  if (is_servable_tool(tools)) {
    tools <- list(tools)
  }
  is.list(tools) && any(vapply(tools, is_package_tool, logical(1)))
}

is_package_tool <- function(t) {
  env <- if (is.function(t)) environment(t)
  is.environment(env) && is.environment(env$call_env) && isTRUE(env$call_env$.mcplite_package_tool)
}

# RULES N7.1: what `confine = NULL` means. TRUE when the tools include
# package tools and workers can be confined here; FALSE (with a note on
# standard error saying why the package tools run unconfined) when they
# cannot. In a worker the script is there: the tools, the platform and the
# kernel count, as they did for the server.
confine_default <- function(confine, tools, worker = FALSE, command = worker_command) {
  if (!is.null(confine)) {
    return(confine)
  }
  if (!has_package_tools(tools)) {
    return(FALSE)
  }
  why <- if (!identical(Sys.info()[["sysname"]], "Linux")) {
    "confinement by the kernel is available on Linux only"
  } else if (worker) {
    # The server asked the same kernel (a worker of a server that could not
    # confine, and started workers anyway, is not confined either).
    engine_confine_available()
  } else {
    engine_confine_available() %||% tryCatch(
      {
        command()
        NULL
      },
      mcplite_error_workers = function(e) {
        "there is no script to start confined workers with (see \"Worker processes\" in ?mcp_server)"
      }
    )
  }
  if (is.null(why)) {
    return(TRUE)
  }
  if (!worker) {
    message(
      "mcplite: the package tools are not confined: ", why, ". ",
      "Set `confine = FALSE` to say this is meant."
    )
  }
  FALSE
}

# RULES N7.2: the memory and file size limits of a confined worker, in
# bytes: MCPLITE_CONFINE_MEMORY (default 4 GiB) and MCPLITE_CONFINE_FILE_SIZE
# (default 1 GiB), each a whole number of bytes with an optional unit (K, M,
# G or T, powers of 1024: "8G"), or "none". Read by the server (so that a
# wrong value stops it before any worker starts) and by each worker.
confine_limits <- function() {
  list(
    memory = env_bytes("MCPLITE_CONFINE_MEMORY", 4 * 1024^3),
    file_size = env_bytes("MCPLITE_CONFINE_FILE_SIZE", 1024^3)
  )
}

# RULES N7.5: the CPU time one call may take in a confined worker, in
# seconds: MCPLITE_CALL_CPU, a whole number of seconds of at least 1, or
# "none" (Inf); default 600.
confine_call_cpu <- function() {
  env_seconds("MCPLITE_CALL_CPU", 600)
}

# A number of bytes from the environment variable `var` (RULES N5.3, N7.2).
env_bytes <- function(var, default) {
  value <- Sys.getenv(var, "")
  if (!nzchar(value)) {
    return(default)
  }
  if (identical(tolower(trimws(value)), "none")) {
    return(Inf)
  }
  upper <- toupper(value)
  m <- regmatches(upper, regexec("^\\s*([0-9]+)\\s*([KMGT]?)B?\\s*$", upper))[[1L]]
  if (length(m) == 0L || as.numeric(m[[2L]]) < 1) {
    abort(
      "The environment variable `", var, "` must be a number of bytes of at least 1, with an ",
      "optional unit K, M, G or T (\"4G\"), or \"none\", not \"", value, "\".",
      class = "mcplite_error_workers"
    )
  }
  as.numeric(m[[2L]]) * 1024^(match(m[[3L]], c("", "K", "M", "G", "T")) - 1L)
}

# Names of environment variables that look like secrets: a confined worker
# does not keep them.
secret_variable_pattern <- paste(
  "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "API_?KEY", "ACCESS_?KEY", "PRIVATE",
  "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "KEY$",
  sep = "|"
)

# What a worker may still read and write: R, the libraries, the system's
# shared files; its temporary directory and the roots of the package tools
# it serves. Not the working directory (the server's script lives there),
# not /proc of other processes, not /etc beyond what R and the C library read.
confine_policy <- function(tools) {
  roots <- unique(unlist(lapply(tools, package_tool_root), use.names = FALSE))
  read <- c(R.home(), .libPaths(), "/usr", "/lib", "/lib32", "/lib64", "/etc/R", "/etc/ld.so.cache",
            "/etc/localtime", "/etc/fonts", "/etc/ssl", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
            "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full",
            "/sys/devices/system/cpu")
  write <- c(tempdir(), roots, "/dev/null")
  list(read = unique(read[file.exists(read)]), write = unique(write[file.exists(write)]))
}

# The `root` of a package tool (RULES R8.8), or NULL.
package_tool_root <- function(t) {
  if (!is.function(t)) {
    return(NULL)
  }
  guard <- environment(t)$guard
  if (is.list(guard)) guard$root
}

confine_worker <- function(tools) {
  limits <- confine_limits()
  env <- names(Sys.getenv())
  secrets <- grep(secret_variable_pattern, env, ignore.case = TRUE, value = TRUE)
  if (length(secrets)) {
    Sys.unsetenv(secrets)
  }
  policy <- confine_policy(tools)
  invisible(engine_confine(policy$read, policy$write, limits$memory, limits$file_size))
}
