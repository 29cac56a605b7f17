#' Report a tool's progress to the client
#'
#' Call `mcp_progress()` from inside a tool to tell the MCP client how far a
#' long computation has come. When the client asked for progress (it sent a
#' progress token with the call), each report becomes a
#' `notifications/progress` message, and clients that reset their timeout on
#' progress keep waiting for the result. Everywhere else (the tool called
#' directly in R or from testthat, a client that asked for no progress,
#' [mcp_handle()]) it does nothing, so tools stay ordinary R functions.
#'
#' Each report reaches the client as the tool made it: the value, total and
#' message are sent unchanged. Reports are cheap, and the engine limits how
#' many it sends with a token bucket: a burst of up to ten reports goes out
#' at once, then at most ten a second (the bucket refills at that rate, up to
#' ten, while the tool is quiet), keeping only the latest report in between.
#' So a tool reporting a few steps has every step sent, and calling
#' `mcp_progress()` in every iteration of a long loop never floods the
#' client. The last report of a call is always sent, even when the rate limit
#' held it back: it goes out as the tool returns, before the result (never
#' after it; a cancelled call sends nothing more). A call costs about a
#' microsecond, like any small R function: in a loop of millions of trivial
#' iterations, report every thousandth one.
#'
#' While a call with a progress token runs, the server also sends heartbeats
#' of its own, from a thread that runs while R is busy: the first after one
#' second (or after `progress_interval` when that is shorter), then whenever
#' nothing was sent for `progress_interval` seconds (see [mcp_server()]); a
#' call that ends sooner gets none. Their message says how long the tool has
#' been running. Heartbeats never set the scale of the progress bar: the first one
#' before the tool's own first report has the value 0, and every other one
#' adds only a hair (a billionth) to the last value sent, because the protocol
#' wants each value to be larger than the one before. So a tool that reports
#' `0.5` of `1` after a few heartbeats is shown at half way. Once the tool
#' reports its own progress, heartbeats only fill long silences, repeating the
#' tool's last total and message with the running time added to it.
#'
#' @param progress A single finite number: the progress so far. Each report
#'   of a call must be larger than the one before (the protocol requires
#'   increasing values); a value that is not is an error of class
#'   `mcplite_error_progress`.
#' @param total `NULL` (unknown) or a single finite number: the value
#'   `progress` reaches when the work is done.
#' @param message `NULL` or a single string, shown by clients beside the
#'   progress (clients of protocol 2024-11-05 do not receive it).
#' @return Invisibly, `TRUE` when the report goes to a client, `FALSE` when
#'   nobody asked for progress.
#' @seealso [mcp_server()] for heartbeats and cancellation.
#' @export
#' @examples
#' fit_folds <- function(k = 5) {
#'   for (i in seq_len(k)) {
#'     Sys.sleep(0.01) # the real work
#'     mcp_progress(i, total = k, message = paste("fold", i, "of", k))
#'   }
#'   "done"
#' }
#' # Called directly, the reports go nowhere:
#' fit_folds()
mcp_progress <- function(progress, total = NULL, message = NULL) {
  # One call into the engine (a .External entry without extendr's wrapper)
  # checks the arguments and reports; it answers
  # TRUE or FALSE, or a small code when an argument is not what it takes,
  # and only then does R build the error message. The engine's check is the
  # one R would make (a single finite double or integer, not a factor; a
  # single string), so a classed number such as a count is accepted. This keeps a report in a
  # tight loop cheap (bench/README.md).
  sent <- .External(mcplite_progress, progress, total, message)
  if (is.logical(sent)) {
    return(invisible(sent))
  }
  progress_refused(sent, progress, total, message)
}

# The slow path of mcp_progress(): an argument the engine's check refused
# (code 1, 2 or 3 for progress, total or message), described by R, or a
# report the engine refused (a bridge error marker, raised with its class).
progress_refused <- function(sent, progress, total, message) {
  if (!is.numeric(sent)) {
    return(invisible(bridge_value(sent)))
  }
  if (!is.numeric(progress) || length(progress) != 1L || !is.finite(progress)) {
    abort_arg("`progress` must be a single finite number, not ", describe(progress), ".",
          class = "mcplite_error_progress")
  }
  if (!is.null(total) && (!is.numeric(total) || length(total) != 1L || !is.finite(total))) {
    abort_arg("`total` must be NULL or a single finite number, not ", describe(total), ".",
          class = "mcplite_error_progress")
  }
  if (!is.null(message) && (!is_scalar_string(message))) {
    abort_arg("`message` must be NULL or a single string, not ", describe(message), ".",
          class = "mcplite_error_progress")
  }
  abort("mcp_progress() refused its arguments without a reason; this is a bug in mcplite.",
    class = "mcplite_error_internal")
}

# The heartbeat interval: the argument, else MCPLITE_PROGRESS_INTERVAL,
# else 5 seconds.
progress_interval <- function(interval) {
  arg <- "`progress_interval`"
  if (is.null(interval)) {
    raw <- Sys.getenv("MCPLITE_PROGRESS_INTERVAL", "")
    if (!nzchar(raw)) {
      return(5)
    }
    arg <- "The environment variable `MCPLITE_PROGRESS_INTERVAL`"
    interval <- suppressWarnings(as.numeric(raw))
    if (is.na(interval)) interval <- raw
  }
  if (!is.numeric(interval) || length(interval) != 1L || is.na(interval) ||
    interval < 0.05 || interval > 3600) {
    abort_arg(arg, " must be a number of seconds from 0.05 to 3600, not ", describe(interval), ".")
  }
  as.double(interval)
}
