use extendr_api::prelude::*;

/// @noRd
#[extendr]
fn engine_ping() -> i32 { 1 }

extendr_module! {
    mod mcplite;
    fn engine_ping;
}
