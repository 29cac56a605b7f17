//! Encoding of R values returned by tools: the thin layer between the host
//! and the Rust encoder (`crate::encode`).

use crate::encode::{self, EncodeOptions};
use crate::rffi::SEXP;

/// The payload options in force (SPEC R6). `Err` is the message naming the
/// invalid option, used as the text of a contained tool error (R6.4).
pub unsafe fn options() -> Result<EncodeOptions, String> {
    encode::payload_options_from_r()
}

/// Payload encoding (SPEC J1.1) with the given options.
pub unsafe fn encode_payload_value(x: SEXP, opts: &EncodeOptions, out: &mut Vec<u8>) -> Result<(), String> {
    encode::encode_payload(x, opts, out)
}

/// Fixed encoding (SPEC J1.2).
pub unsafe fn encode_fixed_value(x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    encode::encode_fixed(x, out)
}
