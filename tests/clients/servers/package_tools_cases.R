# Sample calls of the tools served by package_tools.R, each with the direct R
# call of the same function. Prints, as JSON, every case with the text the
# server sends for the value of the direct call (through a hand-written tool,
# so the same conversion applies), for tests/clients/python/test_package_tools.py.
cases <- list(
  list(tool = "median", arguments = list(x = list(1, 5, 2, 10)),
       direct = quote(stats::median(c(1, 5, 2, 10)))),
  list(tool = "qnorm", arguments = list(p = 0.975, mean = 1, sd = 2),
       direct = quote(stats::qnorm(0.975, mean = 1, sd = 2))),
  list(tool = "p.adjust", arguments = list(p = list(0.01, 0.02, 0.04, 0.2), method = "BH"),
       direct = quote(stats::p.adjust(c(0.01, 0.02, 0.04, 0.2), method = "BH"))),
  list(tool = "quantile", arguments = list(x = as.list(1:9), probs = list(0.1, 0.5, 0.9), type = 6L),
       direct = quote(stats::quantile(1:9, probs = c(0.1, 0.5, 0.9), type = 6L))),
  list(tool = "sd", arguments = list(x = list(2, 4, 4, 4, 5, 5, 7, 9)),
       direct = quote(stats::sd(c(2, 4, 4, 4, 5, 5, 7, 9)))),
  list(tool = "cor", arguments = list(x = list(1, 2, 3, 4, 5), y = list(2, 4, 5, 4, 9), method = "kendall"),
       direct = quote(stats::cor(c(1, 2, 3, 4, 5), c(2, 4, 5, 4, 9), method = "kendall"))),
  list(tool = "weighted.mean", arguments = list(x = list(1, 2, 3), w = list(3, 1, 1)),
       direct = quote(stats::weighted.mean(c(1, 2, 3), w = c(3, 1, 1)))),
  list(tool = "t.test", arguments = list(x = list(1, 2, 3, 5), mu = 1),
       direct = quote(stats::t.test(c(1, 2, 3, 5), mu = 1))),
  list(tool = "head", arguments = list(x = list("a", "b", "c"), n = 2L),
       direct = quote(utils::head(c("a", "b", "c"), n = 2L)))
)

text_of <- function(value) {
  # Values JSON cannot carry are sent as printed (see ?package_tools).
  if (!is.character(value) && inherits(try(mcplite:::payload_json(value), silent = TRUE), "try-error")) {
    value <- paste(utils::capture.output(print(value)), collapse = "\n")
  }
  direct <- mcplite::tool(function() value, "Direct call.", name = "direct")
  line <- mcplite::mcp_handle(direct, list(
    jsonrpc = "2.0", id = 1L, method = "tools/call", params = list(name = "direct", `_meta` = list(
      `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
      `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
    ))
  ))
  jsonlite::parse_json(line)$result$content[[1]]$text
}

out <- lapply(cases, function(case) {
  list(tool = case$tool, arguments = case$arguments, expected = text_of(eval(case$direct, globalenv())))
})
csv <- paste(c("id,name,score", sprintf("%d,n%d,%s", 1:12, 1:12, 1:12 / 8)), collapse = "\n")
full <- utils::read.csv(text = csv)
shaping <- list(
  text = csv, total = nrow(full),
  slice = list(offset = 4L, limit = 3L, rows = full[5:7, c("name", "score")])
)
cat(mcplite:::fixed_json(list(cases = out, shaping = shaping)), "\n", sep = "")
