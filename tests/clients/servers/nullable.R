# Structured content with missing values, and an output schema that declares
# which fields may be null. With options(mcplite.json.na = "null") the
# missing values are sent as null, which the nullable schema allows. Setting
# MCPLITE_TEST_NA_UNSET=1 keeps jsonlite's default ("NA" strings) so tests can
# show what a validating client does without the option.
library(mcplite)
if (!identical(Sys.getenv("MCPLITE_TEST_NA_UNSET"), "1")) {
  options(mcplite.json.na = "null")
}

fit_summary <- tool(
  function(missing = TRUE) {
    tool_result(structured_content = list(
      term = "wt",
      estimate = -5.3445,
      p_value = if (isTRUE(missing)) NA_real_ else 1.29e-10,
      interval = c(-6.4863, if (isTRUE(missing)) NA_real_ else -4.2026),
      status = if (isTRUE(missing)) NA_character_ else "ok"
    ))
  },
  name = "fit_summary",
  description = "A slope estimate whose p-value and upper bound may be missing.",
  arguments = list(missing = type_boolean("Leave the p-value out?", required = FALSE)),
  output_schema = type_object(
    term = type_string(),
    estimate = type_number(),
    p_value = type_number("Null when it cannot be computed.", nullable = TRUE),
    interval = type_array(type_number(nullable = TRUE)),
    status = type_enum(c("ok", "warning"), nullable = TRUE)
  )
)

maybe_point <- tool(
  function() tool_result(structured_content = list(x = 1, y = 2)),
  name = "maybe_point",
  description = "A point, or null (the root of its output schema is nullable).",
  output_schema = type_object(x = type_number(), y = type_number(), .nullable = TRUE)
)

mcp_server(list(fit_summary, maybe_point))
