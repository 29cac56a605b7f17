//! The R side of the engine's `Host` trait: runs tool closures and turns
//! their return values into engine results.

use mcplite_engine::{Block, CallContext, Content, Host, ToolFailure, ToolResult, ToolSpec};
use serde_json::{Map, Value};

use crate::payload;
use crate::rffi::*;

/// Everything the host needs from R, kept alive by the caller (the `.Call`
/// arguments, or the external pointer's protected value).
pub struct RHost {
    specs: Vec<ToolSpec>,
    /// One symbol per tool, bound to the tool's function in `tool_env`, so a
    /// call reads `add(x = 1, y = 2)` in warnings and `sys.call()` (the
    /// function itself for the names `...` and `..1`, `..2`, ...).
    syms: Vec<SEXP>,
    /// Child of the global environment holding the tool functions.
    tool_env: SEXP,
    /// R closure `normalize_result(x)`.
    normalize: SEXP,
    /// `base::conditionMessage`.
    condition_message: SEXP,
    /// R closure that fails with a fixed message: resets R's error buffer.
    reset_error: SEXP,
    quote_sym: SEXP,
    state: CallState,
}

/// Where the C error handler (src/entrypoint.c) records the condition of a
/// failed call, and what R's error buffer holds when no error happened since.
struct CallState {
    env: SEXP,
    sym_condition: SEXP,
    clean_buffer: std::cell::RefCell<Vec<u8>>,
}

/// R's error buffer (what `geterrmessage()` returns), as bytes.
unsafe fn error_buffer() -> Vec<u8> {
    std::ffi::CStr::from_ptr(R_curErrorBuf()).to_bytes().to_vec()
}

unsafe fn str_elt(x: SEXP, i: isize) -> String {
    charsxp_utf8(STRING_ELT(x, i)).unwrap_or_default()
}

impl RHost {
    /// Build from the flattened server spec made by R's `server_spec()`.
    pub unsafe fn from_spec(spec: SEXP) -> Result<RHost, String> {
        let get = |n: &str| list_get(spec, n).ok_or_else(|| format!("server spec lacks `{n}`"));
        let names = get("names")?;
        let descriptions = get("descriptions")?;
        let inputs = get("input_schemas")?;
        let annotations = get("annotations")?;
        let outputs = get("output_schemas")?;
        let tool_env = get("tool_env")?;
        let funs = get("funs")?;
        let n = Rf_xlength(names);
        let mut specs = Vec::with_capacity(n as usize);
        let mut syms = Vec::with_capacity(n as usize);
        for i in 0..n {
            let ann = VECTOR_ELT(annotations, i);
            let keys = list_names_chr(ann);
            let annotations = keys.into_iter().enumerate().map(|(j, k)| (k, str_elt(ann, j as isize))).collect();
            let out = VECTOR_ELT(outputs, i);
            specs.push(ToolSpec {
                name: str_elt(names, i),
                description: str_elt(descriptions, i),
                input_schema: str_elt(inputs, i),
                annotations,
                output_schema: if TYPEOF(out) == SEXPTYPE::STRSXP { Some(str_elt(out, 0)) } else { None },
            });
            // `...` and `..1` cannot be looked up as functions: such tools
            // are called through the function itself.
            let name = &specs[i as usize].name;
            let dots = name.starts_with("..") && (name == "..." || name[2..].bytes().all(|b| b.is_ascii_digit()));
            syms.push(if dots { VECTOR_ELT(funs, i) } else { Rf_installChar(STRING_ELT(names, i)) });
        }
        let host = RHost {
            specs,
            syms,
            tool_env,
            normalize: get("normalize")?,
            condition_message: get("condition_message")?,
            reset_error: get("reset_error")?,
            quote_sym: Rf_install(c"quote".as_ptr()),
            state: CallState {
                env: get("state")?,
                sym_condition: Rf_install(c"condition".as_ptr()),
                clean_buffer: std::cell::RefCell::new(Vec::new()),
            },
        };
        Rf_defineVar(host.state.sym_condition, R_NilValue, host.state.env);
        host.reset_error_buffer();
        Ok(host)
    }

    /// Put a known message in R's error buffer, so that a failed call that
    /// left no condition can be told apart: a new message there is an error
    /// R signalled to exiting handlers only (C stack overflow); none is an
    /// interrupt.
    unsafe fn reset_error_buffer(&self) {
        let call = Rf_protect(Rf_lang1(self.reset_error));
        let mut err = 0;
        R_tryEvalSilent(call, R_GlobalEnv, &mut err);
        Rf_unprotect(1);
        *self.state.clean_buffer.borrow_mut() = error_buffer();
    }

    /// `conditionMessage(cond)`, or "" when that fails.
    unsafe fn condition_text(&self, cond: SEXP) -> String {
        let quoted = Rf_protect(Rf_lang2(self.quote_sym, cond));
        let call = Rf_protect(Rf_lang2(self.condition_message, quoted));
        let mut err = 0;
        let v = R_tryEvalSilent(call, R_GlobalEnv, &mut err);
        let msg = if err == 0 { scalar_string(v).and_then(Result::ok).unwrap_or_default() } else { String::new() };
        Rf_unprotect(2);
        msg
    }

    /// Evaluate `call` (a tool call or a normalisation) in `env`, turning R
    /// errors and interrupts into failures. The value is returned
    /// unprotected.
    unsafe fn eval_contained(&self, call: SEXP, env: SEXP) -> Result<SEXP, ToolFailure> {
        let st = &self.state;
        let mut value = R_NilValue;
        if mcplite_eval_guarded(call, env, st.env, st.sym_condition, &mut value) == 1 {
            if Rf_findVarInFrame(st.env, st.sym_condition) != R_NilValue {
                // An error condition was signalled and handled inside the tool.
                Rf_protect(value);
                Rf_defineVar(st.sym_condition, R_NilValue, st.env);
                Rf_unprotect(1);
            }
            return Ok(value);
        }
        let cond = Rf_findVarInFrame(st.env, st.sym_condition);
        let msg = if cond != R_NilValue && cond != R_UnboundValue {
            Rf_protect(cond);
            let m = self.condition_text(cond);
            Rf_defineVar(st.sym_condition, R_NilValue, st.env);
            Rf_unprotect(1);
            m
        } else {
            let buf = error_buffer();
            if buf == *st.clean_buffer.borrow() {
                return Err(ToolFailure::Interrupted);
            }
            strip_error_prefix(&String::from_utf8_lossy(&buf))
        };
        if error_buffer() != *st.clean_buffer.borrow() {
            self.reset_error_buffer();
        }
        Err(ToolFailure::Error(if msg.is_empty() {
            "The tool call failed with an R error that has no message.".into()
        } else {
            msg
        }))
    }
}

/// Names of a character vector.
unsafe fn list_names_chr(x: SEXP) -> Vec<String> {
    let names = Rf_getAttrib(x, R_NamesSymbol);
    if TYPEOF(names) != SEXPTYPE::STRSXP {
        return Vec::new();
    }
    (0..Rf_xlength(names)).map(|i| str_elt(names, i)).collect()
}

/// JSON → R (SPEC J6). The result is unprotected; `Value` strings never
/// contain NUL (checked by the engine).
pub unsafe fn json_to_sexp(v: &Value) -> SEXP {
    match v {
        Value::Null => R_NilValue,
        Value::Bool(b) => Rf_ScalarLogical(*b as i32),
        Value::Number(n) => {
            // The token decides (serde_json keeps it: `arbitrary_precision`):
            // no fraction or exponent and within +-2147483647 -> integer, so
            // `-0` is 0L; anything else -> double, +-Inf beyond its range.
            let token = n.as_str();
            if !token.contains(['.', 'e', 'E']) {
                if let Ok(i) = token.parse::<i32>() {
                    if i != i32::MIN {
                        return Rf_ScalarInteger(i);
                    }
                }
            }
            Rf_ScalarReal(token.parse::<f64>().unwrap_or(f64::NAN))
        }
        Value::String(s) => Rf_ScalarString(mkchar(s)),
        Value::Array(a) => {
            let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, a.len() as isize));
            for (i, e) in a.iter().enumerate() {
                SET_VECTOR_ELT(out, i as isize, json_to_sexp(e));
            }
            Rf_unprotect(1);
            out
        }
        Value::Object(m) => object_to_list(m),
    }
}

unsafe fn object_to_list(m: &Map<String, Value>) -> SEXP {
    let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, m.len() as isize));
    let names = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, m.len() as isize));
    for (i, (k, e)) in m.iter().enumerate() {
        SET_STRING_ELT(names, i as isize, mkchar(k));
        SET_VECTOR_ELT(out, i as isize, json_to_sexp(e));
    }
    Rf_setAttrib(out, R_NamesSymbol, names);
    Rf_unprotect(2);
    out
}

/// Build the call `fun(name = value, ...)`; `fun` is the tool's symbol.
unsafe fn build_call(fun: SEXP, args: Option<&Map<String, Value>>) -> SEXP {
    let mut tail = R_NilValue;
    let mut nprot = 0;
    if let Some(a) = args {
        for (k, v) in a.iter().rev() {
            let val = Rf_protect(json_to_sexp(v));
            tail = Rf_protect(Rf_lcons(val, tail));
            SET_TAG(tail, Rf_installChar(mkchar(k)));
            nprot += 2;
        }
    }
    let call = Rf_lcons(fun, tail);
    Rf_unprotect(nprot);
    call
}

const CONVERT_FAIL: &str = "The tool's return value could not be converted to JSON: ";

impl RHost {
    /// Runs inside `R_ToplevelExec`. Fills `out`.
    unsafe fn call_inner(
        &self,
        index: usize,
        args: Option<&Map<String, Value>>,
        out: &mut Option<Result<ToolResult, ToolFailure>>,
    ) {
        let call = Rf_protect(build_call(self.syms[index], args));
        match self.eval_contained(call, self.tool_env) {
            Err(f) => *out = Some(Err(f)),
            Ok(value) => {
                Rf_protect(value);
                *out = Some(self.adapt(value));
                Rf_unprotect(1);
            }
        }
        Rf_unprotect(1);
    }

    /// Turn the wrapper's value into a result (SPEC J3, R4.4, E9).
    unsafe fn adapt(&self, value: SEXP) -> Result<ToolResult, ToolFailure> {
        match TYPEOF(value) {
            SEXPTYPE::STRSXP => return join_strings(value).map(ToolResult::text).map_err(contained_conv),
            SEXPTYPE::NILSXP => return Ok(ToolResult::text("{}")),
            SEXPTYPE::VECSXP
                if Rf_xlength(value) == 0
                    && Rf_getAttrib(value, R_ClassSymbol) == R_NilValue
                    && Rf_getAttrib(value, R_NamesSymbol) == R_NilValue =>
            {
                return Ok(ToolResult::text("[]"))
            }
            _ => {}
        }
        if needs_normalize(value) {
            // quote() keeps the value from being evaluated as an argument.
            let quoted = Rf_protect(Rf_lang2(self.quote_sym, value));
            let call = Rf_protect(Rf_lang2(self.normalize, quoted));
            let out = match self.eval_contained(call, R_GlobalEnv) {
                Err(f) => Err(f),
                Ok(res) => {
                    Rf_protect(res);
                    let r = read_tool_result(res).map_err(ToolFailure::Error);
                    Rf_unprotect(1);
                    r
                }
            };
            Rf_unprotect(2);
            return out;
        }
        let opts = payload::options().map_err(ToolFailure::Error)?;
        let mut buf = Vec::new();
        match payload::encode_payload_value(value, &opts, &mut buf) {
            Ok(()) => match String::from_utf8(buf) {
                Ok(s) => Ok(ToolResult::text(s)),
                Err(_) => Err(contained_conv("the JSON is not valid UTF-8".into())),
            },
            Err(e) => Err(contained_conv(e)),
        }
    }
}

fn contained_conv(reason: String) -> ToolFailure {
    ToolFailure::Error(format!("{CONVERT_FAIL}{reason}"))
}

/// Does this return value need R-side normalisation (a tool result, or
/// ellmer content)?
unsafe fn needs_normalize(value: SEXP) -> bool {
    if inherits(value, c"mcplite_tool_result") || class_starts_with(value, "ellmer::") {
        return true;
    }
    if TYPEOF(value) == SEXPTYPE::VECSXP && Rf_getAttrib(value, R_ClassSymbol) == R_NilValue {
        return (0..Rf_xlength(value)).any(|i| class_starts_with(VECTOR_ELT(value, i), "ellmer::"));
    }
    false
}

/// Character vector → text, elements joined with "\n"; NA → "NA".
unsafe fn join_strings(x: SEXP) -> Result<String, String> {
    let n = Rf_xlength(x);
    if n == 1 {
        let c = STRING_ELT(x, 0);
        return if c == R_NaString { Ok("NA".into()) } else { charsxp_utf8(c) };
    }
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push('\n');
        }
        let c = STRING_ELT(x, i);
        if c == R_NaString {
            s.push_str("NA");
        } else {
            s.push_str(&charsxp_utf8(c)?);
        }
    }
    Ok(s)
}

unsafe fn opt_string(x: Option<SEXP>) -> Result<Option<String>, String> {
    match x {
        None => Ok(None),
        Some(v) if TYPEOF(v) == SEXPTYPE::NILSXP => Ok(None),
        Some(v) => scalar_string(v).transpose().map(|o| o),
    }
}

unsafe fn req_string(list: SEXP, field: &str) -> Result<String, String> {
    opt_string(list_get(list, field))?.ok_or_else(|| format!("content block field `{field}` is missing"))
}

/// A named list → (key, fixed JSON) pairs.
unsafe fn fixed_members(x: Option<SEXP>) -> Result<Vec<(String, String)>, String> {
    let x = match x {
        Some(v) if TYPEOF(v) == SEXPTYPE::VECSXP && Rf_xlength(v) > 0 => v,
        _ => return Ok(Vec::new()),
    };
    let names = list_names(x);
    let mut out = Vec::with_capacity(names.len());
    for (i, k) in names.into_iter().enumerate() {
        let mut buf = Vec::new();
        payload::encode_fixed_value(VECTOR_ELT(x, i as isize), &mut buf)?;
        out.push((k, String::from_utf8(buf).map_err(|_| "metadata is not valid UTF-8".to_string())?));
    }
    Ok(out)
}

/// Read a validated `mcplite_tool_result` (layout in R/tool-result.R).
unsafe fn read_tool_result(x: SEXP) -> Result<ToolResult, String> {
    let content = list_get(x, "content").ok_or("the tool result has no `content`")?;
    let mut blocks = Vec::new();
    for i in 0..Rf_xlength(content) {
        let b = VECTOR_ELT(content, i);
        let ty = req_string(b, "type")?;
        let c = match ty.as_str() {
            "text" => Content::Text { text: req_string(b, "text")? },
            "image" => Content::Image { data: req_string(b, "data")?, mime_type: req_string(b, "mime_type")? },
            "audio" => Content::Audio { data: req_string(b, "data")?, mime_type: req_string(b, "mime_type")? },
            "resource_link" => Content::ResourceLink {
                uri: req_string(b, "uri")?,
                name: req_string(b, "name")?,
                title: opt_string(list_get(b, "title"))?,
                description: opt_string(list_get(b, "description"))?,
                mime_type: opt_string(list_get(b, "mime_type"))?,
                size: match list_get(b, "size") {
                    Some(s) if TYPEOF(s) != SEXPTYPE::NILSXP => {
                        let mut buf = Vec::new();
                        payload::encode_fixed_value(s, &mut buf)?;
                        Some(String::from_utf8(buf).unwrap_or_default())
                    }
                    _ => None,
                },
            },
            "resource" => Content::Resource {
                uri: req_string(b, "uri")?,
                mime_type: opt_string(list_get(b, "mime_type"))?,
                text: opt_string(list_get(b, "text"))?,
                blob: opt_string(list_get(b, "blob"))?,
            },
            other => return Err(format!("unknown content type `{other}`")),
        };
        blocks.push(Block {
            content: c,
            annotations: fixed_members(list_get(b, "annotations"))?,
            meta: fixed_members(list_get(b, "meta"))?,
        });
    }
    let structured = match list_get(x, "structured_content") {
        Some(s) if TYPEOF(s) != SEXPTYPE::NILSXP => {
            let mut buf = Vec::new();
            if TYPEOF(s) == SEXPTYPE::VECSXP && Rf_xlength(s) == 0 && Rf_getAttrib(s, R_ClassSymbol) == R_NilValue {
                buf.extend_from_slice(b"{}");
            } else {
                let opts = payload::options()?;
                payload::encode_payload_value(s, &opts, &mut buf)
                    .map_err(|e| format!("`structured_content` could not be converted to JSON: {e}"))?;
            }
            Some(String::from_utf8(buf).map_err(|_| "structured content is not valid UTF-8".to_string())?)
        }
        _ => None,
    };
    let is_error = match list_get(x, "is_error") {
        Some(v) if TYPEOF(v) == SEXPTYPE::LGLSXP && Rf_xlength(v) == 1 => *LOGICAL(v) == 1,
        _ => false,
    };
    Ok(ToolResult { content: blocks, structured, is_error, meta: fixed_members(list_get(x, "meta"))? })
}

impl Host for RHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        ctx: &CallContext,
    ) -> Result<ToolResult, ToolFailure> {
        let mut out = None;
        let this = &*self;
        let ok = crate::trace_env::with_trace_env(ctx, || {
            toplevel(|| unsafe { this.call_inner(index, arguments, &mut out) })
        });
        match out {
            Some(r) => r,
            None if !ok && interrupt_pending() => Err(ToolFailure::Interrupted),
            None => Err(ToolFailure::Error("The tool call was aborted by an R error inside mcplite.".into())),
        }
    }

    fn interrupt_pending(&mut self) -> bool {
        interrupt_pending()
    }
}
