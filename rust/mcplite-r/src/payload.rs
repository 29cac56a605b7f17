//! Encoding of R values returned by tools. Delegates to the package's
//! encoder; the functions here are the only entry points the host uses.

use std::cell::Cell;

use crate::rffi::*;

thread_local! {
    static R_PAYLOAD: Cell<SEXP> = const { Cell::new(std::ptr::null_mut()) };
    static R_FIXED: Cell<SEXP> = const { Cell::new(std::ptr::null_mut()) };
}

/// Register the R encoders (`payload_json`, `fixed_json`) for this thread.
pub unsafe fn set_r_encoders(payload: SEXP, fixed: SEXP) {
    R_PAYLOAD.with(|c| c.set(payload));
    R_FIXED.with(|c| c.set(fixed));
}

unsafe fn call_r(f: SEXP, x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    if f.is_null() {
        return Err("no encoder registered".into());
    }
    let call = Rf_protect(Rf_lang2(f, Rf_lang2(Rf_install(c"quote".as_ptr()), x)));
    let mut err = 0;
    let v = Rf_protect(R_tryEvalSilent(call, R_GlobalEnv, &mut err));
    let res = if err != 0 {
        Err(last_error_message())
    } else {
        match scalar_string(v) {
            Some(Ok(s)) => {
                out.extend_from_slice(s.as_bytes());
                Ok(())
            }
            Some(Err(e)) => Err(e),
            None => Err("the encoder returned no string".into()),
        }
    };
    Rf_unprotect(2);
    res
}

unsafe fn last_error_message() -> String {
    let call = Rf_protect(Rf_lang1(Rf_install(c"geterrmessage".as_ptr())));
    let mut err = 0;
    let v = Rf_protect(R_tryEvalSilent(call, R_BaseEnv, &mut err));
    let msg = scalar_string(v).and_then(Result::ok).unwrap_or_default();
    Rf_unprotect(2);
    msg.trim_end().trim_start_matches("Error : ").to_string()
}

/// Payload encoding with the current options (SPEC J1.1).
pub unsafe fn encode_payload_value(x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    call_r(R_PAYLOAD.with(Cell::get), x, out)
}

/// Fixed encoding (SPEC J1.2).
pub unsafe fn encode_fixed_value(x: SEXP, out: &mut Vec<u8>) -> Result<(), String> {
    call_r(R_FIXED.with(Cell::get), x, out)
}
