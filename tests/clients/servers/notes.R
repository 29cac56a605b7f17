# A server whose tool changes its resources (RULES U3.2): each note is a
# resource of its own and `notes://all` holds them all. MCPLITE_TEST_WORKERS
# runs the tool in that many worker processes.
library(mcplite)

notes <- character()
add_note <- tool(
  function(text) {
    notes <<- c(notes, text)
    mcp_resource_set(resource("notes://all", paste(notes, collapse = "\n"), description = "Every note."))
    mcp_resource_set(resource(paste0("notes://", length(notes)), text))
    length(notes)
  },
  name = "add_note", description = "Add a note.",
  arguments = list(text = type_string("The note."))
)
# Each worker has notes of its own: touch() sets notes://all to the text it
# is given (the text a client read: then only the content is new).
touch <- tool(
  function(text) {
    mcp_resource_set(resource("notes://all", text, description = "Every note."))
    "touched"
  },
  name = "touch", description = "Set notes://all to this text.",
  arguments = list(text = type_string("The text."))
)

workers <- as.integer(Sys.getenv("MCPLITE_TEST_WORKERS", "1"))
mcp_server(list(add_note, touch), resources = resource("notes://all", "", description = "Every note."),
           workers = workers, resource_changes = TRUE)
