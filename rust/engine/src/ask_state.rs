//! What a running call may ask its client (RULES section 18): the
//! capabilities the client declared ([`Asks`]) and, in 2026-07-28, the
//! questions of one round and the answers of the rounds before
//! ([`Rounds`]). Plain data, shared by the dispatcher, the call's progress
//! and the `asks` module.

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
}
