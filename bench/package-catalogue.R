# What a model reads in package_tools() catalogues (issue 34): per package,
# the served tools, the share of their arguments that have a type (an enum,
# or alternatives of types), the share whose type is a guess, and the size
# of the manifest mcp_manifest() writes.
#
#   R_LIBS=<library with mcplite> Rscript --vanilla bench/package-catalogue.R [packages...]
#
# Prints a Markdown table. Run it with two builds to compare them.
args <- commandArgs(TRUE)
packages <- if (length(args)) args else
  c("base", "stats", "utils", "graphics", "grDevices", "jsonlite", "data.table")
library(mcplite)
options(mcplite.cache_dir = tempfile("catalogue-cache-"))
cat("| Package | tools | arguments | typed | guessed | required | manifest (kB) |\n")
cat("|---|---:|---:|---:|---:|---:|---:|\n")
for (p in packages) {
  if (!requireNamespace(p, quietly = TRUE)) next
  tools <- package_tools(p, quiet = TRUE)
  manifest <- mcp_manifest(tools)
  schemas <- lapply(jsonlite::parse_json(manifest)$tools, `[[`, "inputSchema")
  props <- unlist(lapply(schemas, `[[`, "properties"), recursive = FALSE)
  typed <- vapply(props, function(x) !is.null(x$type) || !is.null(x$enum) || !is.null(x$anyOf), NA)
  guessed <- vapply(props, function(x) is.character(x$description) && grepl("(Type guessed.)", x$description, fixed = TRUE), NA)
  required <- sum(lengths(lapply(schemas, `[[`, "required")))
  bytes <- nchar(manifest, "bytes")
  cat(sprintf("| %s | %d | %d | %.0f%% | %.0f%% | %d | %.0f |\n", p, length(tools), length(props),
              100 * mean(typed), 100 * mean(guessed), required, bytes / 1000))
}
