//! What a running call may ask its client (RULES section 18): the
//! capabilities the client declared ([`Asks`]) and, in 2026-07-28, the
//! questions of one round and the answers of the rounds before
//! ([`Rounds`]). Plain data, shared by the dispatcher, the call's progress
//! and the `asks` module.

use std::time::Duration;

use serde_json::{Map, Value};

/// What the client can be asked: its `elicitation` and `sampling`
/// capabilities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asks {
    pub elicitation: bool,
    pub sampling: bool,
}

impl Asks {
    /// The client can be asked nothing.
    pub const NONE: Asks = Asks { elicitation: false, sampling: false };

    /// The capabilities of a client's `initialize` (or of the modern
    /// `_meta` member): each present as an object.
    pub fn from_capabilities(caps: Option<&Value>) -> Asks {
        let has = |k: &str| caps.and_then(|c| c.get(k)).is_some_and(Value::is_object);
        Asks { elicitation: has("elicitation"), sampling: has("sampling") }
    }

    /// Can the client be asked anything?
    pub fn any(self) -> bool {
        self.elicitation || self.sampling
    }

    /// Can the client be asked for `capability` (`"elicitation"`,
    /// `"sampling"`)?
    pub fn allows(self, capability: &str) -> bool {
        match capability {
            "elicitation" => self.elicitation,
            "sampling" => self.sampling,
            _ => false,
        }
    }
}

/// The questions of one 2026-07-28 call (RULES A2): the answers the client
/// gave in earlier rounds (from `requestState` and `inputResponses`), the
/// questions asked so far in this run, in order, and those without an
/// answer, which become the call's `inputRequests`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rounds {
    pub answers: Map<String, Value>,
    asked: usize,
    pub unanswered: Vec<(String, Value)>,
}

impl Rounds {
    pub fn new(answers: Map<String, Value>) -> Rounds {
        Rounds { answers, asked: 0, unanswered: Vec::new() }
    }

    /// The key of the next question of this run (`q1`, `q2`, ...): the
    /// same question gets the same key when the call is run again.
    pub fn next_key(&mut self) -> String {
        self.asked += 1;
        format!("q{}", self.asked)
    }

    /// The answer an earlier round gave to the next question, which then
    /// counts as asked; `None` (nothing counted) when there is none.
    pub fn answered_next(&mut self) -> Option<Value> {
        let a = self.answers.get(&format!("q{}", self.asked + 1))?.clone();
        self.asked += 1;
        Some(a)
    }
}

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskKind {
    /// The user, with a form (`elicitation/create`).
    Elicit,
    /// The client's model (`sampling/createMessage`).
    Sample,
}

impl AskKind {
    pub fn parse(s: &str) -> Option<AskKind> {
        match s {
            "elicit" => Some(AskKind::Elicit),
            "sample" => Some(AskKind::Sample),
            _ => None,
        }
    }

    /// The request's method.
    pub fn method(self) -> &'static str {
        match self {
            AskKind::Elicit => "elicitation/create",
            AskKind::Sample => "sampling/createMessage",
        }
    }

    /// The client capability it needs.
    pub fn capability(self) -> &'static str {
        match self {
            AskKind::Elicit => "elicitation",
            AskKind::Sample => "sampling",
        }
    }
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum AskError {
    /// No call is running on this thread's server (or one that cannot
    /// carry a question, such as an in-process handler).
    NoCall,
    /// The client did not declare the capability.
    Unsupported(AskKind),
    /// The call was cancelled, or the tool was interrupted, while it waited.
    Cancelled,
    /// No answer within the time given.
    TimedOut(Duration),
    /// The client answered with a JSON-RPC error (its message).
    Refused(String),
    /// The parameters were not a JSON object.
    BadParams,
    /// The engine could not get an answer for a worker's question: its
    /// words.
    Remote(String),
    /// 2026-07-28: the question goes to the client with the call's
    /// `input_required` answer; the tool runs again with the answer (RULES
    /// A2.1).
    InputRequired,
}

impl AskError {
    /// The sentence the tool's error carries.
    pub fn message(&self) -> String {
        match self {
            AskError::NoCall => "no tool call of a server is running here, so there is no client to ask".into(),
            AskError::Unsupported(k) => format!(
                "the client cannot be asked: it did not declare the `{}` capability (a tool that needs an answer \
                 should say what it needs in its result instead)",
                k.capability()
            ),
            AskError::Cancelled => {
                "the call was cancelled, or the client went away, while it waited for the client's answer".into()
            }
            AskError::TimedOut(d) => format!("the client did not answer within {} s", d.as_secs()),
            AskError::Refused(m) => format!("the client refused the request: {m}"),
            AskError::BadParams => "the request's parameters must be a JSON object".into(),
            AskError::Remote(why) => why.clone(),
            AskError::InputRequired => "the client is asked first (protocol 2026-07-28): this call ends without a \
                                        result, and the client runs it again with the answer"
                .into(),
        }
    }
}

/// How a worker process asks: the question goes to the engine, which asks
/// the client (RULES A1.4). Given the kind, the request's parameters, the
/// time to wait and what says to stop waiting.
pub type Asker =
    std::sync::Arc<dyn Fn(AskKind, &Value, Duration, &dyn Fn() -> bool) -> Result<Value, AskError> + Send + Sync>;
