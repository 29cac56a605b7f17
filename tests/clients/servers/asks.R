# Tools that ask the client (RULES section 18), for the client tests
# (tests/clients/python/test_asks.py, tests/clients/node/test/asks.test.mjs):
#   Rscript --vanilla asks.R            (stdio; MCPLITE_TRANSPORT=http for HTTP)
library(mcplite)

confirm <- tool(
  function(n) {
    answer <- mcp_elicit(paste0("Delete ", n, " files?"), type_object(
      keep = type_integer("How many to keep.", required = FALSE),
      why = type_enum(c("old", "large"), "Why delete them.")
    ))
    if (answer$action != "accept") {
      return(paste("Nothing deleted:", answer$action))
    }
    keep <- if (is.null(answer$content$keep)) 0L else answer$content$keep
    paste0("Deleting ", n - keep, " files (", answer$content$why, ")")
  },
  name = "confirm", description = "Deletes files after asking.",
  arguments = list(n = type_integer("How many files."))
)
summarise <- tool(
  function(text) {
    reply <- mcp_sample(list(prompt_message(paste("Summarise:", text))), max_tokens = 50,
                        system_prompt = "Be brief.")
    paste0("Summary (", reply$model, ", ", reply$stop_reason, "): ", reply$text)
  },
  name = "summarise", description = "Asks the client's model for a summary.",
  arguments = list(text = type_string("The text."))
)
twice <- tool(
  function() {
    mcp_log("before the questions")
    a <- mcp_elicit("First?")
    b <- mcp_elicit("Second?")
    paste(a$action, b$action)
  },
  name = "twice", description = "Asks two questions in a row."
)
impatient <- tool(
  function() mcp_elicit("Quick!", timeout = 1)$action,
  name = "impatient", description = "Waits one second for an answer."
)
quick <- tool(function() "quick", name = "quick", description = "Asks nothing.")

mcp_server(list(confirm, summarise, twice, impatient, quick))
