//! The boundary between the engine and whatever runs the tools (R, or a fake
//! host in tests). The engine never sees R objects: the host describes its
//! tools once as [`ToolSpec`]s and answers each call with a [`ToolResult`] or
//! a [`ToolFailure`]. All JSON fragments handed over here are already encoded
//! (fixed encoding for schemas, annotations and metadata; payload encoding for
//! structured content).

use std::time::Duration;

use serde_json::{Map, Value};

/// One tool as the host describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The `inputSchema` object, as compact JSON text.
    pub input_schema: String,
    /// Tool annotations with wire names (`readOnlyHint`, ...), each value as
    /// JSON text, in the author's order. Empty means none.
    pub annotations: Vec<(String, String)>,
    /// The `outputSchema`, as compact JSON text, when the author set one.
    pub output_schema: Option<String>,
}

impl ToolSpec {
    /// A tool taking any object (`{"type":"object"}`), with no annotations
    /// and no output schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: r#"{"type":"object"}"#.into(),
            annotations: Vec::new(),
            output_schema: None,
        }
    }
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    /// The values `completion/complete` suggests for it (RULES Q3), in
    /// order; empty when it has none.
    pub values: Vec<String>,
}

/// Who says a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One prompt as the host describes it (RULES section 16; the engine's
/// `prompts` module fills and answers it).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptSpec {
    pub name: String,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
    /// The messages, each a role and one content block whose text fields
    /// may hold `{{argument}}` placeholders.
    pub messages: Vec<(Role, Block)>,
}

/// What a resource holds (RULES U2.1): text, or binary data as base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    Text(String),
    /// Base64 text of the bytes.
    Blob(String),
}

/// One resource as the host describes it (RULES section 17): its content is
/// given when the server is built and the engine answers `resources/*`
/// itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSpec {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: String,
    /// Bytes of the content (before base64).
    pub size: u64,
    pub body: ResourceBody,
}

/// One resource template as the host describes it (RULES U1.3, U2.2): the
/// URIs its template matches are read as its body, with `{{variable}}` in a
/// text body filled with the values taken from the URI.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateSpec {
    pub template: crate::uri_template::UriTemplate,
    /// The template as the author wrote it (`uriTemplate`).
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: String,
    pub body: ResourceBody,
    /// The template's variables with their descriptions and the values
    /// completion offers (`required` is always true).
    pub variables: Vec<PromptArgument>,
}

/// The resources and resource templates of a server, in listing order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resources {
    pub resources: Vec<ResourceSpec>,
    pub templates: Vec<TemplateSpec>,
}

impl Resources {
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }
}

/// A content block of a tool result (RULES R3, P2).
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        data: String,
        mime_type: String,
    },
    Audio {
        data: String,
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        /// JSON number text.
        size: Option<String>,
    },
    Resource {
        uri: String,
        mime_type: Option<String>,
        text: Option<String>,
        blob: Option<String>,
    },
}

impl Content {
    /// The MCP `type` of the block.
    pub fn type_name(&self) -> &'static str {
        match self {
            Content::Text { .. } => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::ResourceLink { .. } => "resource_link",
            Content::Resource { .. } => "resource",
        }
    }
}

/// A block plus its annotations and metadata. Annotation keys use the R
/// spelling (`last_modified`); the projection renames or drops them.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub content: Content,
    pub annotations: Vec<(String, String)>,
    pub meta: Vec<(String, String)>,
}

impl Block {
    pub fn text(text: impl Into<String>) -> Block {
        Block { content: Content::Text { text: text.into() }, annotations: Vec::new(), meta: Vec::new() }
    }
}

/// What a tool produced, before projection to a protocol version.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    pub content: Vec<Block>,
    /// Payload JSON of the structured content (RULES J4), when present.
    pub structured: Option<String>,
    pub is_error: bool,
    /// Author result metadata: key and JSON value text, in order.
    pub meta: Vec<(String, String)>,
    /// What the tool changed in the server's resources (RULES U3.2), in
    /// the order it did: applied when the call returns, before its answer.
    pub changes: Vec<ResourceChange>,
}

/// A change a tool made to the server's resources (RULES U3.2).
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceChange {
    /// Add this resource, or replace the one with its URI.
    Set(ResourceSpec),
    /// Remove the resource with this URI (nothing when there is none).
    Remove(String),
}

impl ToolResult {
    /// A rough size of the serialized result, to reserve buffers once.
    pub fn approx_len(&self) -> usize {
        let blocks: usize = self
            .content
            .iter()
            .map(|b| match &b.content {
                Content::Text { text } => text.len(),
                Content::Image { data, .. } | Content::Audio { data, .. } => data.len(),
                Content::Resource { text, blob, .. } => {
                    text.as_ref().map_or(0, String::len) + blob.as_ref().map_or(0, String::len)
                }
                Content::ResourceLink { .. } => 0,
            } + 64)
            .sum();
        blocks + blocks / 16 + self.structured.as_ref().map_or(0, String::len) + 256
    }

    /// One text block, `isError: false`: the shape of ordinary return values.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult { content: vec![Block::text(text)], ..Default::default() }
    }
}

/// Why a tool call produced no result. Both become contained tool errors
/// (RULES L6.6), never JSON-RPC errors.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolFailure {
    /// The text of the contained error (e.g. the R condition message).
    Error(String),
    /// The call was interrupted (SIGINT).
    Interrupted,
}

/// Trace context of the server span, handed to the host while a tool runs
/// (RULES T9): the span's W3C `traceparent` and `tracestate`, and the W3C
/// baggage the client sent in `params._meta.baggage`. All `None` when
/// tracing is off.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallContext {
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub baggage: Option<String>,
}

/// Where a call ran when the host runs tools in worker processes (RULES
/// T5, N5): recorded on the call's span, and its wait in the queue metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerRun {
    /// The worker's number, 1 to the number of workers.
    pub worker: u32,
    /// The worker's process id.
    pub pid: u32,
    /// From the call's arrival until a worker took it.
    pub queue_wait: Duration,
    /// The worker ended during the call (RULES N5.1): the call's tool error
    /// says how.
    pub crashed: bool,
}

/// How a `tools/call` ended, as the logs name it (RULES H7.1: the access
/// log's `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// A result that is not a tool error.
    Ok,
    /// A tool error: the tool's own, arguments refused by the input schema
    /// (L6.7), or a result that does not match the output schema (J4.6).
    ToolError,
    /// The worker process running it ended during the call (N5.1).
    Crashed,
    /// Interrupted (SIGINT, Ctrl+C, or the end of a stopping server's drain
    /// time, H4.2) and answered as such.
    Interrupted,
    /// Cancelled by its client (C4): not answered.
    Cancelled,
    /// Not run: no room in the queue (N3.1), or refused by the transport.
    Refused,
    /// Answered with a JSON-RPC error (invalid parameters, unknown tool).
    Error,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::ToolError => "tool_error",
            CallOutcome::Crashed => "crashed",
            CallOutcome::Interrupted => "interrupted",
            CallOutcome::Cancelled => "cancelled",
            CallOutcome::Refused => "refused",
            CallOutcome::Error => "error",
        }
    }
}

/// The host side: R in production, a fake in tests.
pub trait Host {
    /// The registry, in listing order. Called once when a server is built.
    fn tools(&mut self) -> Vec<ToolSpec>;

    /// The prompts, in listing order (RULES section 16). Called once when a
    /// server is built; the engine answers `prompts/*` itself from them.
    fn prompts(&mut self) -> Vec<PromptSpec> {
        Vec::new()
    }

    /// The resources and resource templates (RULES section 17). Called
    /// once when a server is built; the engine answers `resources/*` itself
    /// from them.
    fn resources(&mut self) -> Resources {
        Resources::default()
    }

    /// The most items a page of a listing holds (RULES L5.2). Asked once
    /// when a server is built; `None` (the default): every listing is one
    /// page.
    fn page_size(&mut self) -> Option<std::num::NonZeroUsize> {
        None
    }

    /// May the tools change the resources (RULES U3.2)? Asked once when a
    /// server is built; `false` (the default): changes a call brings are
    /// dropped and `listChanged` is `false`.
    fn resource_changes(&mut self) -> bool {
        false
    }

    /// Run tool number `index` (position in [`Host::tools`]) with the parsed
    /// `arguments` object (`None` when absent or `null`).
    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure>;

    /// True when the user asked to interrupt (SIGINT). Polled while idle.
    fn interrupt_pending(&mut self) -> bool {
        false
    }

    /// Asked once per `tools/call` whose params were accepted, before its
    /// tool starts: `Err(detail)` refuses the call, which is answered with a
    /// JSON-RPC error carrying that fixed detail (a server with workers
    /// whose queue is full, RULES N3). The default admits every call.
    fn admit(&mut self) -> Result<(), &'static str> {
        Ok(())
    }

    /// After [`Host::call_tool`]: the worker process that ran the call, when
    /// the host runs tools in workers (telemetry).
    fn worker_run(&self) -> Option<WorkerRun> {
        None
    }
}
