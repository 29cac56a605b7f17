//! While a tool runs, `TRACEPARENT`/`TRACESTATE` carry the server span's
//! context to child processes (SPEC T9); previous values are restored.

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
    set_var("TRACEPARENT", Some(tp));
    set_var("TRACESTATE", ctx.tracestate.as_deref().filter(|s| !s.is_empty()));
    CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = None);
    set_var("TRACEPARENT", old_tp.as_deref());
    set_var("TRACESTATE", old_ts.as_deref());
    out
}

/// The context of the call in progress, if tracing is on.
#[allow(dead_code)]
pub fn current() -> Option<CallContext> {
    CURRENT.with(|c| c.borrow().clone())
}
