# Confined workers (RULES N7): mcp_server(workers = N, confine = TRUE) has
# each worker process confine itself by the kernel once it has run the
# server's script up to mcp_server(), before it serves its first call
# (rust/engine/src/confine.rs: Landlock and seccomp on Linux).

check_confine <- function(confine) {
  if (!is_true_false(confine)) {
    abort("`confine` must be TRUE or FALSE, not ", describe(confine), ".")
  }
  if (confine && !identical(Sys.info()[["sysname"]], "Linux")) {
    abort(
      "`confine = TRUE` needs the Linux kernel's Landlock and seccomp; on this platform workers ",
      "cannot be confined (run the server as an unprivileged user, in a container or a virtual machine).",
      class = "mcplite_error_workers"
    )
  }
  invisible()
}

# After worker_options(): confinement is of the workers, so it needs some.
check_confine_workers <- function(confine, pool) {
  if (confine && is.null(pool)) {
    abort(
      "`confine = TRUE` confines the worker processes that run the tools: set `workers` to 2 or more.",
      class = "mcplite_error_workers"
    )
  }
  invisible()
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
  env <- names(Sys.getenv())
  secrets <- grep(secret_variable_pattern, env, ignore.case = TRUE, value = TRUE)
  if (length(secrets)) {
    Sys.unsetenv(secrets)
  }
  policy <- confine_policy(tools)
  invisible(engine_confine(policy$read, policy$write))
}
