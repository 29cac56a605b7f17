# Tools that take time, for the HTTP progress and cancellation tests of the
# real clients (tests/clients/node/test/http-progress.test.mjs,
# tests/clients/python/test_python_http_progress.py): `slow` sleeps, then
# leaves a marker file `<tag>.done` in MCPLITE_TEST_MARKERS (a cancelled call
# never leaves it; its on.exit() leaves `<tag>.exit`); `folds` reports its
# own progress with mcp_progress().
library(mcplite)

markers <- Sys.getenv("MCPLITE_TEST_MARKERS", tempdir())

slow <- tool(
  function(seconds, tag = "slow") {
    on.exit(writeLines("exit", file.path(markers, paste0(tag, ".exit"))))
    Sys.sleep(seconds)
    writeLines("done", file.path(markers, paste0(tag, ".done")))
    paste("slept", seconds)
  },
  name = "slow",
  description = "Sleeps, then leaves a marker file.",
  arguments = list(seconds = type_number("Seconds to sleep."), tag = type_string("Marker name.", required = FALSE))
)

folds <- tool(
  function(k = 4L) {
    for (i in seq_len(k)) {
      Sys.sleep(0.4)
      mcp_progress(i, total = k, message = paste("fold", i, "of", k))
    }
    Sys.sleep(0.4)
    "folded"
  },
  name = "folds",
  description = "Fits k folds, reporting each.",
  arguments = list(k = type_integer("Number of folds.", required = FALSE))
)

mcp_server(list(slow, folds))
