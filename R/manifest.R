# mcp_manifest(): the catalogue a server would advertise, as a deterministic
# JSON document for version control.

#' Write the tool catalogue of a server as a manifest
#'
#' @description
#' `mcp_manifest()` describes what [mcp_server()] would advertise for the
#' same tools and instructions: the server's name and version, the protocol
#' versions it supports, the instructions, and every tool with its input
#' schema, annotations and output schema. Commit the file, regenerate it in
#' CI and fail the build when it changes: the catalogue then changes only on
#' purpose, for example when an upgraded package served with
#' [package_tools()] changes its documentation or arguments.
#'
#' @section Format:
#' The manifest is a JSON object with the members `manifestVersion` (1),
#' `server` (`name` and `version`), `protocolVersions` (in the server's order
#' of preference), `instructions` (`null` when there are none), `packages`
#' (the packages and versions that tools made by [package_tools()] come
#' from, sorted by name) and `tools`. Each element of `tools` is the tool
#' exactly as the server lists it for protocol version 2026-07-28, byte for
#' byte (older protocol versions may see fewer members; see "Protocol
#' compatibility" in [mcp_server()]), in the server's order, one tool per
#' line so that a diff shows which tools changed.
#'
#' The text is the same for the same tools on every run and in every process:
#' it holds no timestamps, paths or session data, uses `\n` line ends and
#' ends with a newline.
#'
#' @inheritParams mcp_server
#' @param path `NULL`, or a file to write the manifest to (UTF-8).
#' @return The manifest as a single string of JSON (class `"json"`),
#'   invisibly when `path` is given.
#' @seealso [package_tools()], [mcp_server()], [mcp_handler()]
#' @export
#' @examples
#' tools <- package_tools("stats", include = c("median", "sd"), cache = FALSE)
#' manifest <- mcp_manifest(tools, instructions = "Descriptive statistics.")
#' cat(manifest)
#'
#' # Write it next to the server script and check it in.
#' path <- tempfile(fileext = ".json")
#' mcp_manifest(tools, path = path)
#' identical(readLines(path), strsplit(manifest, "\n")[[1]])
mcp_manifest <- function(tools, instructions = NULL, path = NULL) {
  check_required(tools, "supply a tool made by `tool()` or a list of tools.")
  check_string(path, allow_null = TRUE, what = "a single string (a file path)")
  handler <- mcp_handler(tools, instructions)
  modern <- list(
    `io.modelcontextprotocol/protocolVersion` = protocol_constants()$modern,
    `io.modelcontextprotocol/clientCapabilities` = structure(list(), names = character())
  )
  discover <- mcp_handle(handler, list(
    jsonrpc = "2.0", id = 1L, method = "server/discover", params = list(`_meta` = modern)
  ))
  info <- json_decode(discover)$result
  server <- info[["_meta"]][["io.modelcontextprotocol/serverInfo"]]
  entries <- manifest_tool_entries(handler$spec)
  check_manifest_listing(handler, modern, entries)

  tools_list <- if (is.list(tools) && !is.object(tools)) tools else list(tools)
  packages <- manifest_packages(tools_list)
  lines <- c(
    "{",
    "  \"manifestVersion\": 1,",
    paste0("  \"server\": {\"name\":", fixed_json(server$name), ",\"version\":",
           fixed_json(server$version), "},"),
    paste0("  \"protocolVersions\": [",
           paste(vapply(info$supportedVersions, fixed_json, character(1)), collapse = ","), "],"),
    paste0("  \"instructions\": ", if (is.null(instructions)) "null" else fixed_json(instructions), ","),
    paste0("  \"packages\": [", paste(packages, collapse = ","), "],"),
    if (length(entries) == 0L) {
      "  \"tools\": []"
    } else {
      c("  \"tools\": [", paste0("    ", entries, c(rep(",", length(entries) - 1L), "")), "  ]")
    },
    "}"
  )
  text <- paste0(paste(lines, collapse = "\n"), "\n")
  out <- structure(text, class = "json")
  if (is.null(path)) {
    return(out)
  }
  con <- tryCatch(file(path, open = "wb"), error = function(e) {
    abort_arg("`path` could not be opened for writing: ", conditionMessage(e))
  }, warning = function(w) {
    abort_arg("`path` could not be opened for writing: ", conditionMessage(w))
  })
  on.exit(close(con), add = TRUE)
  writeBin(charToRaw(enc2utf8(text)), con)
  invisible(out)
}

# One JSON object per tool, written like the engine's tools/list entries for
# the 2026-07-28 protocol (name, description, inputSchema, annotations when
# there are any, outputSchema when there is one).
manifest_tool_entries <- function(spec) {
  n <- length(spec$names)
  out <- character(n)
  for (i in seq_len(n)) {
    ann <- spec$annotations[[i]]
    out[[i]] <- paste0(
      "{\"name\":", fixed_json(spec$names[[i]]),
      ",\"description\":", fixed_json(spec$descriptions[[i]]),
      ",\"inputSchema\":", spec$input_schemas[[i]],
      if (length(ann) > 0L) {
        paste0(",\"annotations\":{",
               paste0(vapply(names(ann), fixed_json, character(1)), ":", ann, collapse = ","), "}")
      },
      if (!is.null(spec$output_schemas[[i]])) paste0(",\"outputSchema\":", spec$output_schemas[[i]]),
      "}"
    )
  }
  out
}

# The entries must be, byte for byte, what the server lists: compare them
# with a real tools/list answer.
check_manifest_listing <- function(handler, modern, entries) {
  line <- mcp_handle(handler, list(
    jsonrpc = "2.0", id = 1L, method = "tools/list", params = list(`_meta` = modern)
  ))
  prefix <- "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"tools\":"
  listing <- paste0("[", paste(entries, collapse = ","), "]")
  expected <- paste0(prefix, listing, ",")
  if (!startsWith(line, expected)) {
    abort("The manifest's tool list differs from the server's tools/list answer; ",
          "please report this as a bug in mcplite.", class = error_class("internal"))
  }
  invisible(TRUE)
}

manifest_packages <- function(tools) {
  pkgs <- list()
  for (x in tools) {
    p <- package_tool_info(x)
    if (is.list(p) && is_scalar_string(p$package) && is_scalar_string(p$version)) {
      pkgs[[p$package]] <- p$version
    }
  }
  if (length(pkgs) == 0L) {
    return(character())
  }
  nms <- sort(names(pkgs), method = "radix")
  vapply(nms, function(p) {
    paste0("{\"package\":", fixed_json(p), ",\"version\":", fixed_json(pkgs[[p]]), "}")
  }, character(1), USE.NAMES = FALSE)
}

# The package a tool made by package_tools() comes from, or NULL.
package_tool_info <- function(x) {
  env <- if (is.function(x) && !is.primitive(x)) environment(x)
  if (!is.environment(env) || !exists("package_info", envir = env, inherits = FALSE) ||
      !identical(parent.env(env), environment(package_tool_wrapper))) {
    return(NULL)
  }
  get("package_info", envir = env, inherits = FALSE)
}
