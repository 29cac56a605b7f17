#' How tool return values become MCP results
#'
#' @description
#' A tool function can return an ordinary R value, which mcplite converts to
#' one text block, or a [tool_result()], which spells out the MCP content and
#' may carry structured data. This topic describes both conversions and the
#' R options that tune the JSON they produce. See [tool_result()] for building
#' results and its text fallback, and the "Protocol compatibility" section of
#' [mcp_server()] for what each protocol version receives.
#'
#' @section Ordinary return values:
#' Anything that is not a [tool_result()] becomes a single text block:
#'
#' * A character vector (including a `jsonlite` `json` object) is sent as
#'   literal text, its elements joined with newlines. It is never parsed, even
#'   when it looks like JSON.
#' * `NULL` becomes the text `{}` and an unnamed empty `list()` the text `[]`.
#' * Any other value is converted to JSON with the payload encoding below, and
#'   the JSON is the text.
#'
#' Bare lists are ordinary values: a list such as
#' `list(type = "text", text = "hi")` is sent as its JSON, not interpreted as
#' an MCP content block. If one tool needs a different conversion, build the
#' JSON yourself and return it as a string, for example
#' `as.character(jsonlite::toJSON(value, na = "null"))`.
#'
#' @section Structured content:
#' The `structured_content` of a [tool_result()] is converted exactly like
#' [jsonlite::toJSON()] with the payload options below, plus one rule for the
#' top level: an empty `list()` there stands for the empty object `{}`.
#' Deeper down, an unnamed empty list stays `[]` as in `jsonlite`. A
#' `structured_content` of `NULL` means there is no structured content; it is
#' never sent as JSON `null`. Strings that contain JSON, and `json` objects,
#' remain JSON strings.
#'
#' Classes, dimensions, [I()] and [jsonlite::unbox()] keep their `jsonlite`
#' meaning; the conversion does not look at the tool's `output_schema`. The
#' result is validated against that schema before it is sent, and a mismatch
#' becomes a tool error (see [tool()]).
#'
#' With the default options, for example:
#'
#' | R value | JSON |
#' |---|---|
#' | `list(a = 1, b = "x")` | `{"a":1,"b":"x"}` |
#' | `list()` (top level) | `{}` |
#' | `list(items = list())` | `{"items":[]}` |
#' | `list(a = NULL)` | `{"a":null}` |
#' | `c(1.5, 2)` | `[1.5,2]` |
#' | `list(values = c(a = 1, b = 2))` | `{"values":[1,2]}` |
#' | `character(0)` | `[]` |
#' | `pi` | `3.1416` (4 decimal places) |
#' | `c(1.08e-05, 9.9e-06, 5.1e-05)` | `[0,9.9e-06,0.0001]` (4 decimal places; see `mcplite.json.digits`) |
#' | `123456.789` | `123456.789` |
#' | `NA` (logical) | `null` |
#' | `c(TRUE, NA)` | `[true,null]` |
#' | `NA_integer_` | `"NA"` |
#' | `c(NA_real_, NaN, Inf, -Inf)` | `["NA","NaN","Inf","-Inf"]` |
#' | `factor("lo")` | `"lo"` |
#' | `as.Date("2024-01-02")` | `"2024-01-02"` |
#' | `matrix(1:4, 2)` | `[[1,3],[2,4]]` (row by row; row and column names are dropped, see [matrix_to_list()]) |
#' | `data.frame(x = 1:2, y = c("a", NA))` | `[{"x":1,"y":"a"},{"x":2}]` (missing cells left out) |
#' | `I(1)` | `[1]` |
#' | `jsonlite::unbox(1)` | `1` |
#' | `"{\"a\":1}"` | `"{\"a\":1}"` (a string) |
#'
#' @section Payload JSON options:
#' Four package-wide R options control the payload encoding. Set them before
#' building results and starting the server, and leave them alone while it
#' runs: the text fallback of a [tool_result()] is produced when the result is
#' built.
#'
#' * `mcplite.json.null`: `"null"` (default) or `"list"`. A `NULL` field in a
#'   named list is kept, as JSON `null` or as `{}` respectively.
#' * `mcplite.json.na`: unset by default, which leaves `jsonlite`'s `na`
#'   argument out and so keeps its class-specific handling of missing values
#'   shown above. `"null"` turns every missing value, `NaN` and infinity into
#'   `null` and keeps missing data-frame cells as `null`; `"string"` writes
#'   them as strings such as `"NA"`.
#' * `mcplite.json.auto_unbox`: `TRUE` (default) writes length-one vectors as
#'   plain values; `FALSE` keeps them as one-element arrays. [I()] and
#'   [jsonlite::unbox()] still decide for the values they wrap.
#' * `mcplite.json.digits`: unset by default (`jsonlite`'s 4 decimal places);
#'   a whole number `n` for `n` decimal places, `NA` for full precision, or
#'   `I(n)` for `n` significant digits.
#'
#' Setting an option to `NULL`, as in `options(mcplite.json.na = NULL)`,
#' restores its default; for `mcplite.json.na` that means the argument is left
#' out, not passed as `na = NULL`. Invalid values are reported by
#' [tool_result()] and [mcp_server()].
#'
#' The options apply to the JSON of ordinary non-character return values, to
#' structured content and its text fallback, and to the checks made when
#' adapting results to a protocol version. Protocol fields, schemas,
#' annotations and all metadata always use a fixed encoding that ignores them
#' and never rounds numbers.
#'
#' @seealso [mcplite], [tool_result()], [content_text()]
#' @examples
#' # Fallback text under custom options...
#' local({
#'   old <- options(mcplite.json.na = "null", mcplite.json.auto_unbox = FALSE)
#'   on.exit(options(old))
#'   result <- tool_result(structured_content = list(
#'     count = 1L,
#'     values = c(NA_real_, NaN, Inf, -Inf),
#'     rows = data.frame(id = 1L, missing = NA_real_)
#'   ))
#'   result$content[[1]]$text
#' })
#'
#' # ... and under the defaults.
#' result <- tool_result(structured_content = list(
#'   count = 1L,
#'   values = c(NA_real_, NaN, Inf, -Inf),
#'   rows = data.frame(id = 1L, missing = NA_real_)
#' ))
#' result$content[[1]]$text
#' @name mcplite-results
#' @aliases mcplite-results
NULL
