//! Changes a tool makes to the server's resources, on R's side (RULES
//! U3.2): `mcp_resource_set()` and `mcp_resource_remove()` record them for
//! the running call; [`collecting`] hands them to the engine with the
//! call's result, which applies them when the call returns. Nothing is
//! recorded outside a call of a server that has resources: the entry
//! points say so and R raises the error.

use std::cell::RefCell;

use extendr_api::prelude::*;
use mcplite_engine::host::ResourceChange;

thread_local! {
    /// The running call's changes: `None` when no call of a server with
    /// resources runs on this thread.
    static CHANGES: RefCell<Option<Vec<ResourceChange>>> = const { RefCell::new(None) };
}

/// Run `f` (a tool call) recording its changes when `on` (the server has
/// resources); the changes come back with its value. The recording of an
/// outer call (an in-memory server called from a tool) is put back
/// however `f` ends.
pub fn collecting<T>(on: bool, f: impl FnOnce() -> T) -> (T, Vec<ResourceChange>) {
    /// Puts the outer call's recording back.
    struct Restore(Option<Option<Vec<ResourceChange>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                CHANGES.with(|c| *c.borrow_mut() = outer);
            }
        }
    }
    let outer = CHANGES.with(|c| c.replace(on.then(Vec::new)));
    let mut restore = Restore(Some(outer));
    let value = f();
    let mine = CHANGES.with(|c| c.replace(restore.0.take().flatten()));
    (value, mine.unwrap_or_default())
}

fn record(change: ResourceChange) -> bool {
    CHANGES.with(|c| c.borrow_mut().as_mut().map(|v| v.push(change)).is_some())
}

/// Record: add or replace this resource (`spec` as R's `resource_specs()`
/// makes it for one resource). `FALSE` when no call records changes.
#[extendr]
fn resource_change_set(spec: Robj) -> Robj {
    // SAFETY: main thread (R called us); `spec` is protected by R while
    // this runs and is what resource_specs() makes.
    let res = unsafe { crate::host::read_resources(spec.get()) };
    crate::error::to_r(res.map(|res| match res.resources.into_iter().next() {
        Some(r) => record(ResourceChange::Set(r)),
        None => false,
    }))
}

/// Record: remove the resource with this URI. `FALSE` when no call
/// records changes.
#[extendr]
fn resource_change_remove(uri: &str) -> bool {
    record(ResourceChange::Remove(uri.to_owned()))
}

extendr_module! {
    mod changes;
    fn resource_change_set;
    fn resource_change_remove;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_belong_to_the_call_that_made_them() {
        assert!(!record(ResourceChange::Remove("a://0".into())), "no call records");
        let ((), outer) = collecting(true, || {
            assert!(record(ResourceChange::Remove("a://1".into())));
            let ((), inner) = collecting(false, || assert!(!record(ResourceChange::Remove("a://2".into()))));
            assert!(inner.is_empty());
            assert!(record(ResourceChange::Remove("a://3".into())));
        });
        assert_eq!(outer, [ResourceChange::Remove("a://1".into()), ResourceChange::Remove("a://3".into())]);
        let caught = std::panic::catch_unwind(|| collecting(true, || panic!("a tool that never returns")));
        assert!(caught.is_err());
        assert!(!record(ResourceChange::Remove("a://4".into())), "nothing records after a call that failed");
    }
}
