//! The trace context of the running tool call (RULES T9): what
//! `mcp_trace_context()` returns, set by the host around each call.
//!
//! The process environment is never changed: while a server runs, the HTTP,
//! reader, ticker and exporter threads run too, and changing the
//! environment while any other thread may read it (the C library reads it
//! inside `getaddrinfo()`, for one) is undefined behaviour. A tool hands the
//! context to a child process in that process's own environment
//! (`mcp_trace_env()` in R, for `processx` and `system2(env =)`).

use std::cell::RefCell;

use mcplite_engine::CallContext;

thread_local! {
    static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
}

/// Run `f` with `ctx` as the context of the call in progress (when it has a
/// `traceparent`, i.e. tracing is on).
pub fn with_trace_context<T>(ctx: &CallContext, f: impl FnOnce() -> T) -> T {
    if ctx.traceparent.is_none() {
        return f();
    }
    /// Clears the context however `f` ends.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            CURRENT.with(|c| *c.borrow_mut() = None);
        }
    }
    CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    let _clear = Clear;
    f()
}

/// The context of the call in progress, if tracing is on.
pub fn current() -> Option<CallContext> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The recorders configured by the process environment (spans, metrics,
/// `MCPLITE_LOG`; RULES T8), read once when a server or session starts;
/// `None` when all are off.
pub fn recorder_from_process_env() -> Option<Box<dyn mcplite_engine::telemetry::SpanRecorder>> {
    mcplite_engine::telemetry::recorder_from_env(&|k| std::env::var(k).ok())
}

/// `mcp_trace_context()`: the running call's W3C context as a named
/// character vector (`traceparent`, then `tracestate` and `baggage` when not
/// empty), or NULL when tracing is off or no tool call is running.
/// @noRd
#[extendr_api::extendr]
fn engine_trace_context() -> extendr_api::Robj {
    use extendr_api::prelude::*;
    match current() {
        Some(CallContext { traceparent: Some(tp), tracestate, baggage }) => {
            let mut names = vec!["traceparent"];
            let mut values = vec![tp];
            if let Some(ts) = tracestate.filter(|s| !s.is_empty()) {
                names.push("tracestate");
                values.push(ts);
            }
            if let Some(b) = baggage.filter(|s| !s.is_empty()) {
                names.push("baggage");
                values.push(b);
            }
            let mut r = Robj::from(values);
            match r.set_names(names) {
                Ok(_) => r,
                Err(_) => Robj::from(()),
            }
        }
        _ => Robj::from(()),
    }
}

extendr_api::extendr_module! {
    mod trace_context;
    fn engine_trace_context;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(i: usize) -> CallContext {
        CallContext {
            traceparent: Some(format!("00-{:032x}-{:016x}-01", i + 1, i + 1)),
            tracestate: Some("a=1".into()),
            baggage: Some("k=v".into()),
        }
    }

    #[test]
    fn the_context_is_set_for_the_call_only() {
        let c = ctx(7);
        assert_eq!(with_trace_context(&c, current), Some(c.clone()));
        assert_eq!(current(), None);
        let off = CallContext { traceparent: None, tracestate: None, baggage: None };
        assert_eq!(with_trace_context(&off, current), None);
        // Cleared when the call unwinds too.
        let r = std::panic::catch_unwind(|| with_trace_context(&c, || panic!("tool")));
        assert!(r.is_err());
        assert_eq!(current(), None);
        // The environment is not the carrier: a child process started in
        // the call inherits nothing from it.
        let inherited = with_trace_context(&c, || std::env::var("TRACEPARENT").ok());
        assert_eq!(inherited, std::env::var("TRACEPARENT").ok());
    }

    /// RULES T9: no code of either crate changes the process environment
    /// (`set_var`, `remove_var`, the C library's setters). Sources are read
    /// from the repository; the names are split so this test does not find
    /// itself.
    #[test]
    fn no_code_changes_the_process_environment() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let banned: Vec<String> =
            [("set", "_var("), ("remove", "_var("), ("put", "env("), ("set", "env("), ("unset", "env(")]
                .iter()
                .map(|(a, b)| format!("{a}{b}"))
                .collect();
        let mut files = Vec::new();
        let mut dirs = vec![root.join("engine"), root.join("mcplite-r")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 50, "found the sources ({})", files.len());
        let mut found = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                if banned.iter().any(|b| line.contains(b.as_str())) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(found.is_empty(), "the process environment is changed at:\n{}", found.join("\n"));
    }
}
