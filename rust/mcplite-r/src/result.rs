//! A tool's return value -> the engine's `ToolResult` (RULES J3, R4.4, E9):
//! character vectors become text, `NULL` and `list()` fixed texts, tool
//! results and ellmer content go through R's `normalize_result()` and are
//! then read field by field, anything else is payload JSON.
//!
//! Everything sent is valid UTF-8: bytes R holds that are not (strings
//! marked UTF-8 that are not, or native strings R accepts but the standard
//! does not) are written as `<xx>`, R's notation (`rapi::strings`).

use mcplite_engine::{Block, Content, ToolFailure, ToolResult};

use crate::encode::{self, EncodeOptions};
use crate::error::{Error, Result};
use crate::rapi::strings::{into_valid_utf8, text};
use crate::rapi::*;

/// The start of the tool error for a return value the encoder rejects.
const CONVERT_FAIL: &str = "The tool's return value could not be converted to JSON: ";

/// Evaluates R's `normalize_result()` on a value, containing its errors and
/// interrupts (the host's job: `RHost::normalize_value`); the value it returns is
/// unprotected.
pub type Normalize<'a> = &'a dyn Fn(SEXP) -> std::result::Result<SEXP, ToolFailure>;

/// The result of a tool that returned `value`; tool results and ellmer
/// content are first given to `normalize`.
///
/// # Safety
/// The SEXP contract holds for `value`; under `toplevel()` (the normalising
/// call and the encoder allocate).
pub unsafe fn from_value(value: SEXP, normalize: Normalize<'_>) -> std::result::Result<ToolResult, ToolFailure> {
    // SAFETY: caller's contract.
    unsafe {
        match ty(value) {
            SEXPTYPE::STRSXP => return join_strings(value).map(ToolResult::text).map_err(convert_failure),
            SEXPTYPE::NILSXP => return Ok(ToolResult::text("{}")),
            SEXPTYPE::VECSXP
                if xlen(value) == 0 && is_nil(attr(value, R_ClassSymbol)) && is_nil(attr(value, R_NamesSymbol)) =>
            {
                return Ok(ToolResult::text("[]"))
            }
            _ => {}
        }
        if needs_normalize(value) {
            let mut prot = Protect::new();
            let res = prot.add(normalize(value)?);
            return read_tool_result(res).map_err(Error::into_tool_failure);
        }
        let opts = encode::payload_options_from_r().map_err(Error::into_tool_failure)?;
        payload(value, &opts).map(ToolResult::text).map_err(convert_failure)
    }
}

fn convert_failure(e: Error) -> ToolFailure {
    e.context(CONVERT_FAIL).into_tool_failure()
}

/// Payload JSON of `x` as wire text.
///
/// # Safety
/// As [`from_value`], for `x`.
unsafe fn payload(x: SEXP, opts: &EncodeOptions) -> Result<String> {
    let mut buf = Vec::new();
    // SAFETY: caller's contract.
    unsafe { encode::encode_payload(x, opts, &mut buf)? };
    Ok(into_valid_utf8(buf))
}

/// Fixed JSON of `x` as wire text.
///
/// # Safety
/// As [`from_value`], for `x`.
unsafe fn fixed(x: SEXP) -> Result<String> {
    let mut buf = Vec::new();
    // SAFETY: caller's contract.
    unsafe { encode::encode_fixed(x, &mut buf)? };
    Ok(into_valid_utf8(buf))
}

/// Does this return value need R-side normalisation (a tool result, or
/// ellmer content)?
///
/// # Safety
/// The SEXP contract holds for `value`.
unsafe fn needs_normalize(value: SEXP) -> bool {
    // SAFETY: caller's contract.
    unsafe {
        if inherits(value, c"mcplite_tool_result") || class_starts_with(value, b"ellmer::") {
            return true;
        }
        ty(value) == SEXPTYPE::VECSXP
            && is_nil(attr(value, R_ClassSymbol))
            && (0..xlen(value)).any(|i| class_starts_with(VECTOR_ELT(value, i as R_xlen_t), b"ellmer::"))
    }
}

/// Character vector -> text, elements joined with "\n"; NA -> "NA".
///
/// # Safety
/// The SEXP contract holds for `x`, a character vector.
unsafe fn join_strings(x: SEXP) -> Result<String> {
    // SAFETY: caller's contract.
    unsafe {
        let n = xlen(x);
        let elt = |i: usize| {
            let c = STRING_ELT(x, i as R_xlen_t);
            if c == R_NaString {
                Ok("NA".to_string())
            } else {
                text(c)
            }
        };
        if n == 1 {
            return elt(0);
        }
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(&elt(i)?);
        }
        Ok(s)
    }
}

/// An optional string field: absent or `NULL` -> `None`.
///
/// # Safety
/// The SEXP contract holds for `x`.
unsafe fn opt_string(x: Option<SEXP>) -> Result<Option<String>> {
    // SAFETY: caller's contract.
    unsafe {
        match x {
            None => Ok(None),
            Some(v) if is_nil(v) => Ok(None),
            Some(v) if ty(v) == SEXPTYPE::STRSXP && xlen(v) >= 1 && STRING_ELT(v, 0) != R_NaString => {
                text(STRING_ELT(v, 0)).map(Some)
            }
            Some(_) => Ok(None),
        }
    }
}

/// A required string field of a content block.
///
/// # Safety
/// The SEXP contract holds for `block`.
unsafe fn req_string(block: SEXP, field: &str) -> Result<String> {
    // SAFETY: caller's contract.
    unsafe { opt_string(list_get(block, field))? }
        .ok_or_else(|| Error::internal(format!("content block field `{field}` is missing")))
}

/// A named list -> (key, fixed JSON) pairs.
///
/// # Safety
/// The SEXP contract holds for `x`.
unsafe fn fixed_members(x: Option<SEXP>) -> Result<Vec<(String, String)>> {
    // SAFETY: caller's contract.
    unsafe {
        let x = match x {
            Some(v) if ty(v) == SEXPTYPE::VECSXP && xlen(v) > 0 => v,
            _ => return Ok(Vec::new()),
        };
        names_of(x).into_iter().enumerate().map(|(i, k)| Ok((k, fixed(VECTOR_ELT(x, i as R_xlen_t))?))).collect()
    }
}

/// Read a validated `mcplite_tool_result` (layout in R/tool-result.R).
///
/// # Safety
/// The SEXP contract holds for `x`; under `toplevel()`.
unsafe fn read_tool_result(x: SEXP) -> Result<ToolResult> {
    // SAFETY: caller's contract; the fields read are members of `x`.
    unsafe {
        let content = list_get(x, "content").ok_or_else(|| Error::internal("the tool result has no `content`"))?;
        let mut blocks = Vec::new();
        for i in 0..xlen(content) {
            let b = VECTOR_ELT(content, i as R_xlen_t);
            let ty_name = req_string(b, "type")?;
            let c = match ty_name.as_str() {
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
                        Some(s) if !is_nil(s) => Some(fixed(s)?),
                        _ => None,
                    },
                },
                "resource" => Content::Resource {
                    uri: req_string(b, "uri")?,
                    mime_type: opt_string(list_get(b, "mime_type"))?,
                    text: opt_string(list_get(b, "text"))?,
                    blob: opt_string(list_get(b, "blob"))?,
                },
                other => return Err(Error::internal(format!("unknown content type `{other}`"))),
            };
            blocks.push(Block {
                content: c,
                annotations: fixed_members(list_get(b, "annotations"))?,
                meta: fixed_members(list_get(b, "meta"))?,
            });
        }
        let structured = match list_get(x, "structured_content") {
            Some(s) if !is_nil(s) => {
                if ty(s) == SEXPTYPE::VECSXP && xlen(s) == 0 && is_nil(attr(s, R_ClassSymbol)) {
                    Some("{}".to_string())
                } else {
                    let opts = encode::payload_options_from_r()?;
                    Some(
                        payload(s, &opts)
                            .map_err(|e| e.context("`structured_content` could not be converted to JSON: "))?,
                    )
                }
            }
            _ => None,
        };
        let is_error = match list_get(x, "is_error") {
            Some(v) if ty(v) == SEXPTYPE::LGLSXP && xlen(v) == 1 => *LOGICAL(v) == 1,
            _ => false,
        };
        Ok(ToolResult {
            content: blocks,
            structured,
            is_error,
            meta: fixed_members(list_get(x, "meta"))?,
            changes: Vec::new(),
        })
    }
}
