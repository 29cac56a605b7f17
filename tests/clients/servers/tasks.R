# A server whose tools run as tasks (RULES section 19): `fit` may (its
# progress messages are the task's status message), `must` must, `plain`
# never does, `boom` may and fails. MCPLITE_TEST_WORKERS sets the number of
# worker processes; MCPLITE_TASK_DIR keeps the tasks in a directory;
# MCPLITE_TASK_AFTER (seconds) makes 2026-07-28 calls of optional tools tasks
# only when they run that long (RULES V2.5); MCPLITE_TASK_MAX_MB bounds the
# results kept (V4.2).
library(mcplite)

fit <- tool(
  function(steps = 3L, ms = 50, pad = 0L) {
    for (i in seq_len(steps)) {
      Sys.sleep(ms / 1000)
      mcp_progress(i, steps, message = paste("step", i, "of", steps))
    }
    paste0("fitted in ", steps, " steps", strrep(" ", pad))
  },
  name = "fit", description = "Fit a model in steps.",
  arguments = list(steps = type_integer("How many steps.", required = FALSE),
                   ms = type_number("Milliseconds per step.", required = FALSE),
                   pad = type_integer("Spaces added to the result.", required = FALSE)),
  task = "optional"
)
must <- tool(function(x) x * 2, name = "must", description = "Double a number, as a task.",
             arguments = list(x = type_number("The number.")), task = "required")
plain <- tool(function(x) x + 1, name = "plain", description = "Add one.",
              arguments = list(x = type_number("The number.")))
boom <- tool(function() stop("the model did not converge"), name = "boom", description = "Fail.",
             task = "optional")
# Asks the user during the task (2026-07-28: the task is input_required
# until tasks/update answers), after `wait` seconds; with `file`, only when
# that file exists (it is made by the first run: a call answered
# input_required at once waits when the client calls again).
greet <- tool(
  function(wait = 0, file = NULL) {
    if (is.null(file) || file.exists(file)) Sys.sleep(wait)
    if (!is.null(file)) file.create(file)
    a <- mcp_elicit("Your name?", type_object(name = type_string("Your name.")))
    if (a$action != "accept") paste("no name:", a$action) else paste0("Hello, ", a$content$name, "!")
  },
  name = "greet", description = "Greet the user by name, asking it first.", task = "optional",
  arguments = list(wait = type_number("Seconds to wait before asking.", required = FALSE),
                   file = type_string("Wait only once this file exists.", required = FALSE))
)

dir <- Sys.getenv("MCPLITE_TASK_DIR")
after <- Sys.getenv("MCPLITE_TASK_AFTER")
max_mb <- as.numeric(Sys.getenv("MCPLITE_TASK_MAX_MB", "256"))
workers <- as.integer(Sys.getenv("MCPLITE_TEST_WORKERS", "1"))
mcp_server(list(fit, must, plain, boom, greet), workers = workers,
           tasks = task_options(poll_interval = 0.05, dir = if (nzchar(dir)) dir, max_mb = max_mb,
                                after = if (nzchar(after)) as.numeric(after)))
