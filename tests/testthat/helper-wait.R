# Waiting for conditions instead of for fixed times.

# Wait until `f()` is TRUE (checked every 50 ms); an error naming `what` after
# `seconds`.
wait_until <- function(f, what, seconds = 30) {
  deadline <- Sys.time() + seconds
  while (!isTRUE(f())) {
    if (Sys.time() > deadline) stop("timed out waiting for ", what)
    Sys.sleep(0.05)
  }
  invisible(TRUE)
}

# Send SIGINT to this R process from a background shell as soon as `file`
# exists (written by the tool, server or callback of the call made next, once
# that call is under way), so that the interrupt arrives while R waits for
# the call. Nothing is sent if the file has not appeared after 30 s.
interrupt_when <- function(file) {
  system2("/bin/sh", c("-c", shQuote(sprintf(
    "i=0; while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; [ -e %s ] && kill -INT %d",
    shQuote(file), shQuote(file), Sys.getpid()
  ))), wait = FALSE)
}

# Skip unless this R has tcltk (checked without loading it into the test's
# own process: once loaded, R's interrupt check runs Tcl's event loop, which
# loses interrupts, RULES S7).
skip_without_tcltk <- function() {
  skip_if_not(isTRUE(capabilities("tcltk")) && nzchar(system.file(package = "tcltk")), "R has no tcltk")
}
