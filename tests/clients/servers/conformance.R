# The tools the official conformance suite (@modelcontextprotocol/conformance,
# `conformance server --url ...`) calls on a server under test, served over
# Streamable HTTP by tests/suites/21-conformance.sh:
#   MCPLITE_TRANSPORT=http MCPLITE_PORT=0 Rscript --vanilla conformance.R
# Every server scenario of the suite passes.
library(mcplite)

png_1px <- "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
wav_stub <- "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA="

test_simple_text <- tool(
  function() "This is a simple text response for testing.",
  name = "test_simple_text",
  description = "Returns simple text."
)
test_image_content <- tool(
  function() tool_result(content_image(png_1px, "image/png")),
  name = "test_image_content",
  description = "Returns a 1x1 red PNG image."
)
test_audio_content <- tool(
  function() tool_result(content_audio(wav_stub, "audio/wav")),
  name = "test_audio_content",
  description = "Returns a tiny WAV audio clip."
)
test_embedded_resource <- tool(
  function() {
    tool_result(content_resource("test://embedded-resource",
      text = "This is an embedded resource content.", mime_type = "text/plain"
    ))
  },
  name = "test_embedded_resource",
  description = "Returns an embedded text resource."
)
test_multiple_content_types <- tool(
  function() {
    tool_result(list(
      content_text("Multiple content types test:"),
      content_image(png_1px, "image/png"),
      content_resource("test://mixed-content-resource",
        text = "{\"test\":\"data\",\"value\":123}", mime_type = "application/json"
      )
    ))
  },
  name = "test_multiple_content_types",
  description = "Returns text, an image and an embedded resource."
)
test_error_handling <- tool(
  function() stop("This tool intentionally returns an error for testing"),
  name = "test_error_handling",
  description = "Always fails."
)
json_schema_2020_12_tool <- tool(
  function(name = NULL, address = NULL) "ok",
  name = "json_schema_2020_12_tool",
  description = "Tool with JSON Schema 2020-12 features",
  arguments = type_from_schema('{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
      "address": {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
      }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": false
  }')
)
# Progress 0, 50 and 100 of 100, 50 ms apart, returning right after the
# last report, as the suite's own reference server does: a short burst is
# sent whole (RULES C2.2) and the last report comes before the result
# (RULES C2.4; the answer is an SSE stream, C6.1).
test_tool_with_progress <- tool(
  function() {
    mcp_progress(0, total = 100)
    Sys.sleep(0.05)
    mcp_progress(50, total = 100)
    Sys.sleep(0.05)
    mcp_progress(100, total = 100)
    "Progress tool executed."
  },
  name = "test_tool_with_progress",
  description = "Reports progress 0, 50 and 100 of 100."
)

# Three log messages at info, 50 ms apart, as the suite's reference server
# sends them (RULES G2): two with mcp_log(), one with message(), which a
# client that set a level receives as well.
test_tool_with_logging <- tool(
  function() {
    mcp_log("Tool execution started")
    Sys.sleep(0.05)
    message("Tool processing data")
    Sys.sleep(0.05)
    mcp_log("Tool execution completed")
    "Logging tool executed."
  },
  name = "test_tool_with_logging",
  description = "Sends three log messages while it runs."
)

# Questions to the client (RULES section 18): the user with a form, the
# client's model with a prompt.
test_elicitation <- tool(
  function(message) {
    answer <- mcp_elicit(message, type_object(
      username = type_string("User's response"),
      email = type_string("User's email address")
    ))
    paste0("User response: action=", answer$action, ", content=",
           jsonlite::toJSON(answer$content, auto_unbox = TRUE))
  },
  name = "test_elicitation",
  description = "Asks the user for their name and email.",
  arguments = list(message = type_string("The message to show the user"))
)
test_elicitation_sep1034_defaults <- tool(
  function() {
    answer <- mcp_elicit("Please review and update the form fields with defaults", type_from_schema('{
      "type": "object",
      "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
      },
      "required": []
    }'))
    paste0("Elicitation completed: action=", answer$action, ", content=",
           jsonlite::toJSON(answer$content, auto_unbox = TRUE))
  },
  name = "test_elicitation_sep1034_defaults",
  description = "Asks the user with a form whose fields have defaults."
)
test_elicitation_sep1330_enums <- tool(
  function() {
    answer <- mcp_elicit("Please select options from the enum fields", type_from_schema('{
      "type": "object",
      "properties": {
        "untitledSingle": {"type": "string", "description": "Choose one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Choose one titled option", "oneOf": [
          {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
          {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Choose one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Choose multiple options", "minItems": 1,
                          "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Choose multiple titled options", "minItems": 1,
                        "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                          {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}
      },
      "required": []
    }'))
    paste0("Elicitation completed: action=", answer$action, ", content=",
           jsonlite::toJSON(answer$content, auto_unbox = TRUE))
  },
  name = "test_elicitation_sep1330_enums",
  description = "Asks the user with every kind of choice."
)
test_sampling <- tool(
  function(prompt) {
    reply <- mcp_sample(prompt, max_tokens = 100)
    paste0("LLM response: ", reply$text)
  },
  name = "test_sampling",
  description = "Asks the client's model.",
  arguments = list(prompt = type_string("The prompt to send to the LLM"))
)

# The suite's prompts (RULES section 16): templates the engine fills.
prompts <- list(
  prompt_template("test_simple_prompt", "A simple prompt without arguments.",
    "This is a simple prompt for testing."),
  prompt_template("test_prompt_with_arguments", "A prompt with two arguments.",
    "Prompt with arguments: arg1='{{arg1}}', arg2='{{arg2}}'",
    arguments = list(
      # Values offered as the user types (completion/complete, RULES Q3).
      arg1 = type_enum(c("paris", "park", "party", "test value"), "First test argument"),
      arg2 = type_string("Second test argument")
    )
  ),
  prompt_template("test_prompt_with_embedded_resource", "A prompt with an embedded resource.",
    list(
      content_resource("{{resourceUri}}", text = "Embedded resource content for testing.", mime_type = "text/plain"),
      "Please process the embedded resource above."
    ),
    arguments = list(resourceUri = type_string("URI of the resource to embed"))
  ),
  prompt_template("test_prompt_with_image", "A prompt with an image.",
    list(content_image(png_1px, "image/png"), "Please analyze the image above.")
  )
)

# SEP-1699 (server-sse-polling, RULES H8): answered after the server closed
# the call's first connection (it holds one at most `stream_hold` = 1 second,
# below): the suite reconnects with Last-Event-ID and reads the answer.
test_reconnection <- tool(
  function() {
    Sys.sleep(1.5)
    "Reconnection test completed"
  },
  name = "test_reconnection",
  description = "Answers after the server closed the call's first connection."
)

# The suite's resources (RULES section 17): content the engine holds, a
# template it fills, and a resource a client subscribes to.
resources <- list(
  resource("test://static-text", "This is the content of the static text resource.",
    name = "static-text", description = "A static text resource for testing."),
  resource("test://static-binary", jsonlite::base64_dec(png_1px), name = "static-binary",
    description = "A static binary resource (image) for testing.", mime_type = "image/png"),
  resource_template("test://template/{id}/data",
    '{"id":"{{id}}","templateTest":true,"data":"Data for ID: {{id}}"}',
    name = "template", description = "A resource template with a parameter.", mime_type = "application/json",
    arguments = list(id = type_enum(c("123", "124", "200"), "The record's id."))),
  resource("test://watched-resource", "Watched resource content.", name = "watched-resource",
    description = "A resource for subscription testing.")
)

mcp_server(list(
  test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
  test_multiple_content_types, test_error_handling, json_schema_2020_12_tool, test_tool_with_progress,
  test_tool_with_logging, test_elicitation, test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,
  test_sampling, test_reconnection
), prompts = prompts, resources = resources, stream_hold = 1)
