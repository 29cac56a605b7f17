# Real HTTP servers for test-http.R, test-http-progress.R and test-client-tls.R.

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
