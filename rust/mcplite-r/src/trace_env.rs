//! While a tool runs, `TRACEPARENT`/`TRACESTATE` carry the server span's
//! context, and `BAGGAGE` the client's W3C baggage, to child processes (RULES
//! T9); previous values are restored.

use std::cell::RefCell;

use mcplite_engine::CallContext;

thread_local! {
    static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
}

fn set_var(name: &str, value: Option<&str>) {
    match value {
        Some(v) => std::env::set_var(name, v),
        None => std::env::remove_var(name),
    }
}

/// Run `f` with the trace environment of `ctx` in place.
pub fn with_trace_env<T>(ctx: &CallContext, f: impl FnOnce() -> T) -> T {
    let tp = match &ctx.traceparent {
        None => return f(),
        Some(tp) => tp,
    };
    let old_tp = std::env::var("TRACEPARENT").ok();
    let old_ts = std::env::var("TRACESTATE").ok();
    let old_bg = std::env::var("BAGGAGE").ok();
    set_var("TRACEPARENT", Some(tp));
    set_var("TRACESTATE", ctx.tracestate.as_deref().filter(|s| !s.is_empty()));
    set_var("BAGGAGE", ctx.baggage.as_deref().filter(|s| !s.is_empty()));
    CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = None);
    set_var("TRACEPARENT", old_tp.as_deref());
    set_var("TRACESTATE", old_ts.as_deref());
    set_var("BAGGAGE", old_bg.as_deref());
    out
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
    mod trace_env;
    fn engine_trace_context;
}
