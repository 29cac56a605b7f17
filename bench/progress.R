# The cost of mcp_progress() in a tight loop (issue 17), see bench/README.md:
#   Rscript bench/progress.R [n] [rounds] [out.md]
# Times a loop of n iterations (default 1e6) doing `s <- s + sqrt(i)`:
#   * in this R session: without mcp_progress(), and with it (nobody listens);
#   * inside a tool served over stdio by bench/servers/progress.R: without
#     mcp_progress(), with it but no progress token (nobody listens), and with
#     a progress token (a listening client: reports are coalesced and sent).
# Each case runs `rounds` times (default 5); the median is reported, with the
# number of progress notifications the client received.
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[[1]]) else 1000000L
rounds <- if (length(args) >= 2) as.integer(args[[2]]) else 5L
out <- if (length(args) >= 3) args[[3]] else ""

suppressMessages(library(mcplite))
here <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  dirname(normalizePath(f))
})

source(file.path(here, "servers", "progress-loop.R"))
time_local <- function(report) timed_loop(n, report)

p <- processx::process$new(
  file.path(R.home("bin"), "Rscript"), c("--vanilla", file.path(here, "servers", "progress.R")),
  stdin = "|", stdout = "|", stderr = "",
  env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
)
on.exit(p$kill())
p$write_input(paste0(
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",',
  '"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n'
))
next_id <- 0L
read_response <- function(id) {
  notes <- 0L
  repeat {
    p$poll_io(1000)
    for (line in p$read_output_lines()) {
      m <- jsonlite::fromJSON(line, simplifyVector = FALSE)
      if (identical(m$method, "notifications/progress")) notes <- notes + 1L
      if (identical(m$id, id)) return(list(msg = m, notes = notes))
    }
    if (!p$is_alive()) stop("server exited")
  }
}
invisible(read_response(0L))

time_served <- function(report, token) {
  next_id <<- next_id + 1L
  meta <- if (token) sprintf(',"_meta":{"progressToken":%d}', next_id) else ""
  p$write_input(sprintf(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"loop","arguments":{"n":%d,"report":%s}%s}}\n',
    next_id, n, if (report) "true" else "false", meta
  ))
  r <- read_response(next_id)
  c(seconds = as.numeric(r$msg$result$content[[1]]$text), notes = r$notes)
}

cases <- list(
  "in R, plain loop" = function() c(seconds = time_local(FALSE), notes = 0),
  "in R, with mcp_progress() (nobody listens)" = function() c(seconds = time_local(TRUE), notes = 0),
  "served tool, plain loop" = function() time_served(FALSE, FALSE),
  "served tool, mcp_progress(), no progress token" = function() time_served(TRUE, FALSE),
  "served tool, mcp_progress(), client listening" = function() time_served(TRUE, TRUE)
)
res <- lapply(cases, function(f) {
  f() # warm-up
  t(vapply(seq_len(rounds), function(r) f(), c(seconds = 0, notes = 0)))
})
close(p$get_input_connection())
p$wait(10000)

plain_local <- median(res[[1]][, "seconds"])
plain_served <- median(res[[3]][, "seconds"])
lines <- c(
  sprintf("n = %s iterations of `s <- s + sqrt(i)`, median of %d rounds (after one warm-up).",
    format(n, big.mark = ","), rounds),
  sprintf("mcplite %s, %s, %s", utils::packageVersion("mcplite"), R.version.string, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
  "",
  "| Case | Loop time (s) | Added per call | Notifications sent |",
  "|---|---|---|---|"
)
for (i in seq_along(res)) {
  sec <- median(res[[i]][, "seconds"])
  base <- if (i <= 2) plain_local else plain_served
  added <- if (i %in% c(1, 3)) "–" else sprintf("%.0f ns", (sec - base) / n * 1e9)
  lines <- c(lines, sprintf("| %s | %.3f | %s | %s |", names(res)[i], sec, added,
    if (i == 5) paste(range(res[[i]][, "notes"]), collapse = "–") else "0"))
}
cat(lines, sep = "\n")
if (nzchar(out)) writeLines(lines, out)
