# Benchmark peer: a pure-R MCP server loop on jsonlite, what an R user would write by hand
# (readLines(stdin) loop, fromJSON/toJSON, legacy protocol only, no validation).
# Run as `Rscript --vanilla bench/peers/r/jsonlite.R`. Same tools as every benchmarked server.
all_tools <- !identical(Sys.getenv("BENCH_TOOLS"), "1")
cache <- new.env()

schema <- function(props) {
  s <- list(type = "object", properties = if (length(props)) props else structure(list(), names = character()))
  if (length(props)) s$required <- I(names(props))
  s$additionalProperties <- FALSE
  s
}
tools <- list(list(
  name = "add", description = "Add two numbers.",
  inputSchema = schema(list(x = list(type = "number", description = "First number."),
                            y = list(type = "number", description = "Second number.")))
))
handlers <- list(add = function(a) format(a$x + a$y, digits = 15))

if (all_tools) {
  tools <- c(tools, list(
    list(name = "text_length", description = "Return the number of characters in a text.",
         inputSchema = schema(list(text = list(type = "string", description = "Any text.")))),
    list(name = "big_text", description = "Return a 10 MB text.", inputSchema = schema(list())),
    list(name = "frame", description = "Return a 100,000 x 5 data frame as structured content.",
         inputSchema = schema(list()))
  ))
  handlers$text_length <- function(a) as.character(nchar(a$text))
  handlers$big_text <- function(a) {
    if (is.null(cache$text)) cache$text <- strrep("abcdefghij", 1e6)
    cache$text
  }
  handlers$frame <- function(a) {
    if (is.null(cache$frame)) {
      i <- seq_len(1e5)
      cache$frame <- data.frame(
        id = i, value = i + 0.5, label = paste0("r", i), flag = i %% 2 == 0,
        group = rep_len(c("a", "b", "c", "d", "e"), length(i))
      )
    }
    structured <- list(rows = cache$frame)
    list(content = list(list(type = "text", text = as.character(jsonlite::toJSON(structured, auto_unbox = TRUE)))),
         isError = FALSE, structuredContent = structured)
  }
  extra_schema <- schema(list(
    a = list(type = "string", description = "A string."),
    b = list(type = "integer", description = "An integer."),
    c = list(type = "number", description = "A number."),
    d = list(type = "boolean", description = "A flag."),
    e = list(type = "string", enum = c("red", "green", "blue"), description = "A colour.")
  ))
  for (i in 1:50) {
    nm <- sprintf("tool_%02d", i)
    tools[[length(tools) + 1]] <- list(name = nm, description = sprintf("Extra tool %02d with five typed arguments.", i),
                                       inputSchema = extra_schema)
    handlers[[nm]] <- function(a) "ok"
  }
}

reply <- function(id, result = NULL, error = NULL) {
  msg <- if (is.null(error)) list(jsonrpc = "2.0", id = id, result = result) else list(jsonrpc = "2.0", id = id, error = error)
  cat(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null"), "\n", sep = "")
  flush(stdout())
}

con <- file("stdin", open = "r")
while (length(line <- readLines(con, n = 1L, warn = FALSE)) > 0L) {
  if (!nzchar(trimws(line))) next
  msg <- tryCatch(jsonlite::fromJSON(line, simplifyVector = FALSE), error = function(e) NULL)
  if (is.null(msg)) {
    reply(NULL, error = list(code = -32700L, message = "Parse error"))
    next
  }
  if (is.null(msg$id)) next
  id <- msg$id
  switch(msg$method,
    initialize = reply(id, list(
      protocolVersion = msg$params$protocolVersion,
      capabilities = list(tools = list(listChanged = FALSE)),
      serverInfo = list(name = "bench-r-jsonlite", version = "0.0.0")
    )),
    ping = reply(id, structure(list(), names = character())),
    "tools/list" = reply(id, list(tools = tools)),
    "tools/call" = {
      h <- handlers[[msg$params$name]]
      if (is.null(h)) {
        reply(id, error = list(code = -32602L, message = "Unknown tool"))
      } else {
        out <- tryCatch(h(msg$params$arguments), error = function(e) list(error = conditionMessage(e)))
        result <- if (is.character(out)) {
          list(content = list(list(type = "text", text = out)), isError = FALSE)
        } else if (!is.null(out$error)) {
          list(content = list(list(type = "text", text = out$error)), isError = TRUE)
        } else out
        reply(id, result)
      }
    },
    reply(id, error = list(code = -32601L, message = "Method not found"))
  )
}
