//! The R side of the engine's `Host` trait: the tool registry read from the
//! server spec, and the evaluation of tool calls with R errors and
//! interrupts contained (RULES L6.6). Turning the returned value into a
//! result is `crate::result`; the arguments are converted by
//! `crate::decode`.

use std::cell::RefCell;
use std::num::NonZeroUsize;

use mcplite_engine::prompts::{PromptArgument, PromptSpec, Role};
use mcplite_engine::resources::{ResourceBody, ResourceSpec, Resources, TemplateSpec};
use mcplite_engine::uri_template::UriTemplate;
use mcplite_engine::{CallContext, Host, ToolFailure, ToolResult, ToolSpec};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::rapi::eval::{error_buffer, strip_error_prefix, take_interrupt, toplevel, try_eval};
use crate::rapi::*;
use crate::{decode, result};

/// Everything the host needs from R, kept alive by the caller (the `.Call`
/// arguments, or the spec stored beside the session's external pointer):
/// the `SEXP`s below are never protected by the host itself.
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
    /// R closure `log_tool_conditions(expr)`: evaluates a tool call with
    /// handlers that send its `message()`s and `warning()`s to the client
    /// (RULES G2.1), used only for a call whose client listens; `NULL` when
    /// the spec has none.
    log_wrap: SEXP,
    quote_sym: SEXP,
    state: CallState,
    /// The prompts of `mcp_server(prompts = )` (RULES section 16).
    prompts: Vec<PromptSpec>,
    /// The resources of `mcp_server(resources = )` (RULES section 17).
    resources: Resources,
    /// `mcp_server(page_size = )` (RULES L5.2): a whole number of at least
    /// 1, or absent.
    page_size: Option<NonZeroUsize>,
    /// A tool may change the server's resources (RULES U3.2): the spec's
    /// `resource_changes` (R checked that the server has resources).
    changes: bool,
}

/// Where the C error handler (src/entrypoint.c) records the condition of a
/// failed call, and what R's error buffer holds when no error happened
/// since the last reset.
struct CallState {
    env: SEXP,
    sym_condition: SEXP,
    clean_buffer: RefCell<Vec<u8>>,
}

/// The message of a tool call that failed in the bridge's own R calls (an
/// allocation failure while building the call or the result).
const ABORTED: &str = "The tool call was aborted by an R error inside mcplite.";

/// The message of an R error without a message.
const NO_MESSAGE: &str = "The tool call failed with an R error that has no message.";

impl RHost {
    /// Build from the flattened server spec made by R's `server_spec()`.
    ///
    /// # Safety
    /// The SEXP contract holds for `spec`, which stays protected for the
    /// whole life of the host (the host keeps `SEXP`s pointing into it).
    pub unsafe fn from_spec(spec: SEXP) -> Result<RHost> {
        let get = |n: &str| {
            // SAFETY: caller's contract.
            unsafe { list_get(spec, n) }.ok_or_else(|| Error::internal(format!("the server spec lacks `{n}`")))
        };
        let names = get("names")?;
        let descriptions = get("descriptions")?;
        let inputs = get("input_schemas")?;
        let annotations = get("annotations")?;
        let outputs = get("output_schemas")?;
        let funs = get("funs")?;
        // SAFETY: caller's contract: the members are the vectors and lists
        // server_spec() builds, one element per tool.
        unsafe {
            let n = xlen(names);
            let mut specs = Vec::with_capacity(n);
            let mut syms = Vec::with_capacity(n);
            for i in 0..n as R_xlen_t {
                let ann = VECTOR_ELT(annotations, i);
                let annotations =
                    names_of(ann).into_iter().enumerate().map(|(j, k)| (k, str_elt(ann, j as R_xlen_t))).collect();
                let out = VECTOR_ELT(outputs, i);
                specs.push(ToolSpec {
                    name: str_elt(names, i),
                    description: str_elt(descriptions, i),
                    input_schema: str_elt(inputs, i),
                    annotations,
                    output_schema: if ty(out) == SEXPTYPE::STRSXP { Some(str_elt(out, 0)) } else { None },
                });
                // `...` and `..1` cannot be looked up as functions: such
                // tools are called through the function itself.
                let name = &specs[i as usize].name;
                let dots = name.starts_with("..") && (name == "..." || name[2..].bytes().all(|b| b.is_ascii_digit()));
                syms.push(if dots { VECTOR_ELT(funs, i) } else { Rf_installChar(STRING_ELT(names, i)) });
            }
            let host = RHost {
                specs,
                syms,
                tool_env: get("tool_env")?,
                normalize: get("normalize")?,
                condition_message: get("condition_message")?,
                reset_error: get("reset_error")?,
                // SAFETY: caller's contract.
                log_wrap: list_get(spec, "log_wrap").unwrap_or(R_NilValue),
                quote_sym: sym("quote"),
                state: CallState {
                    env: get("state")?,
                    sym_condition: sym("condition"),
                    clean_buffer: RefCell::new(Vec::new()),
                },
                prompts: Vec::new(),
                resources: Resources::default(),
                // R checked it (http_limit()): a double of at least 1.
                page_size: list_get(spec, "page_size")
                    .filter(|&p| ty(p) == SEXPTYPE::REALSXP && xlen(p) == 1)
                    .and_then(|p| NonZeroUsize::new(*REAL(p) as usize)),
                changes: list_get(spec, "resource_changes")
                    .is_some_and(|c| ty(c) == SEXPTYPE::LGLSXP && xlen(c) == 1 && *LOGICAL(c) == 1),
            };
            Rf_defineVar(host.state.sym_condition, R_NilValue, host.state.env);
            host.reset_error_buffer();
            let mut host = host;
            if let Some(p) = list_get(spec, "prompts") {
                host.prompts = host.read_prompts(p)?;
            }
            if let Some(r) = list_get(spec, "resources") {
                host.resources = read_resources(r)?;
            }
            Ok(host)
        }
    }

    /// The prompts R's `prompt_specs()` made: a list with, per prompt, its
    /// name, description, argument names, descriptions and required flags,
    /// the roles of its messages and their blocks as a tool result.
    ///
    /// # Safety
    /// Main thread; `prompts` is that list, protected with the spec.
    unsafe fn read_prompts(&self, prompts: SEXP) -> Result<Vec<PromptSpec>> {
        let mut out = Vec::new();
        // SAFETY: caller's contract: the members are what prompt_specs() builds.
        unsafe {
            for i in 0..xlen(prompts) as R_xlen_t {
                let p = VECTOR_ELT(prompts, i);
                let get = |n: &str| list_get(p, n).ok_or_else(|| Error::internal(format!("a prompt lacks `{n}`")));
                let (arg_names, arg_desc, arg_req) =
                    (get("arg_names")?, get("arg_descriptions")?, get("arg_required")?);
                let arg_values = get("arg_values")?;
                let arguments = (0..xlen(arg_names) as R_xlen_t)
                    .map(|j| {
                        let d = str_elt(arg_desc, j);
                        PromptArgument {
                            name: str_elt(arg_names, j),
                            description: (!d.is_empty()).then_some(d),
                            required: *LOGICAL(arg_req).offset(j) == 1,
                            values: {
                                let vals = VECTOR_ELT(arg_values, j);
                                (0..xlen(vals) as R_xlen_t).map(|k| str_elt(vals, k)).collect()
                            },
                        }
                    })
                    .collect();
                let roles = get("roles")?;
                let content = result::from_value(get("content")?, &|v| self.normalize_value(v))
                    .map_err(|e| Error::internal(format!("a prompt's messages could not be read: {e:?}")))?;
                let messages = content
                    .content
                    .into_iter()
                    .enumerate()
                    .map(|(j, b)| {
                        let role =
                            if str_elt(roles, j as R_xlen_t) == "assistant" { Role::Assistant } else { Role::User };
                        (role, b)
                    })
                    .collect();
                out.push(PromptSpec {
                    name: str_elt(get("name")?, 0),
                    description: str_elt(get("description")?, 0),
                    arguments,
                    messages,
                });
            }
        }
        Ok(out)
    }

    /// Put a known message in R's error buffer, so that a failed call that
    /// left no condition can be told apart: a new message there is an error
    /// R signalled to exiting handlers only (C stack overflow); none is an
    /// interrupt.
    ///
    /// # Safety
    /// Main thread; the spec is alive (type documentation).
    unsafe fn reset_error_buffer(&self) {
        // SAFETY: caller's contract; the failure is the point.
        unsafe {
            let mut prot = Protect::new();
            let call = prot.add(Rf_lang1(self.reset_error));
            let _ = try_eval(call, R_GlobalEnv);
            *self.state.clean_buffer.borrow_mut() = error_buffer();
        }
    }

    /// `conditionMessage(cond)`, or "" when that fails.
    ///
    /// # Safety
    /// The SEXP contract holds for `cond`.
    unsafe fn condition_text(&self, cond: SEXP) -> String {
        // SAFETY: caller's contract; quote() keeps the condition from being
        // evaluated as an argument.
        unsafe {
            let mut prot = Protect::new();
            let quoted = prot.add(Rf_lang2(self.quote_sym, cond));
            let call = prot.add(Rf_lang2(self.condition_message, quoted));
            match try_eval(call, R_GlobalEnv) {
                // protected: the translation to UTF-8 may allocate
                Ok(v) if ty(v) == SEXPTYPE::STRSXP && xlen(v) >= 1 && STRING_ELT(v, 0) != R_NaString => {
                    strings::text(STRING_ELT(prot.add(v), 0)).unwrap_or_default()
                }
                _ => String::new(),
            }
        }
    }

    /// Evaluate `call` (a tool call or a normalisation) in `env`, turning R
    /// errors and interrupts into failures. The value is unprotected.
    ///
    /// # Safety
    /// The SEXP contract holds for `call` and `env`.
    unsafe fn eval_contained(&self, call: SEXP, env: SEXP) -> std::result::Result<SEXP, ToolFailure> {
        let st = &self.state;
        // SAFETY: caller's contract; the C function contains R's longjmps.
        unsafe {
            let mut value = R_NilValue;
            if mcplite_eval_guarded(call, env, st.env, st.sym_condition, &mut value) == 1 {
                if Rf_findVarInFrame(st.env, st.sym_condition) != R_NilValue {
                    // An error condition was signalled and handled inside the tool.
                    let mut prot = Protect::new();
                    prot.add(value);
                    Rf_defineVar(st.sym_condition, R_NilValue, st.env);
                }
                return Ok(value);
            }
            let cond = Rf_findVarInFrame(st.env, st.sym_condition);
            let msg = if cond != R_NilValue && cond != R_UnboundValue {
                let mut prot = Protect::new();
                prot.add(cond);
                let m = self.condition_text(cond);
                Rf_defineVar(st.sym_condition, R_NilValue, st.env);
                m
            } else {
                let buf = error_buffer();
                if buf == *st.clean_buffer.borrow() {
                    crate::running_call::interrupt_consumed();
                    return Err(ToolFailure::Interrupted);
                }
                strip_error_prefix(&strings::escape_invalid(&buf))
            };
            if error_buffer() != *st.clean_buffer.borrow() {
                self.reset_error_buffer();
            }
            Err(ToolFailure::Error(if msg.is_empty() { NO_MESSAGE.into() } else { msg }))
        }
    }

    /// `normalize_result(quote(value))`, contained as a tool call is (the
    /// [`result::Normalize`] of a tool's return value). The value is
    /// unprotected.
    ///
    /// # Safety
    /// The SEXP contract holds for `value`; under `toplevel()`.
    unsafe fn normalize_value(&self, value: SEXP) -> std::result::Result<SEXP, ToolFailure> {
        // SAFETY: caller's contract; the call is protected while it runs.
        unsafe {
            // quote() keeps the value from being evaluated as an argument.
            let mut prot = Protect::new();
            let quoted = prot.add(Rf_lang2(self.quote_sym, value));
            let call = prot.add(Rf_lang2(self.normalize, quoted));
            self.eval_contained(call, R_GlobalEnv)
        }
    }

    /// Runs inside `toplevel()`: builds the call, evaluates it, converts the
    /// value.
    ///
    /// # Safety
    /// Main thread, under `toplevel()`; the spec is alive.
    unsafe fn call_inner(
        &self,
        index: usize,
        args: Option<&Map<String, Value>>,
    ) -> std::result::Result<ToolResult, ToolFailure> {
        // SAFETY: caller's contract; the call and the value are protected
        // while they are used.
        unsafe {
            let mut prot = Protect::new();
            let mut call = prot.add(decode::call(self.syms[index], args).map_err(Error::into_tool_failure)?);
            // RULES G2.1: only a call whose client listens to log messages
            // pays for the handlers.
            if !is_nil(self.log_wrap) && crate::logging::running_level().is_some() {
                call = prot.add(Rf_lang2(self.log_wrap, call));
            }
            let name = &self.specs[index].name;
            // RULES U3.2: what the tool changed in the resources comes with
            // its result; an R error drops it.
            let (value, changes) = crate::changes::collecting(self.changes, || {
                crate::logging::with_tool(name, || self.eval_contained(call, self.tool_env))
            });
            let value = prot.add(value?);
            let mut r = result::from_value(value, &|v| self.normalize_value(v))?;
            r.changes = changes;
            Ok(r)
        }
    }
}

/// Element `i` of character vector `x` as text ("" for `NA`).
///
/// # Safety
/// The SEXP contract holds for `x`, a character vector longer than `i`.
unsafe fn str_elt(x: SEXP, i: R_xlen_t) -> String {
    // SAFETY: caller's contract.
    unsafe {
        let c = STRING_ELT(x, i);
        if c == R_NaString {
            String::new()
        } else {
            strings::text(c).unwrap_or_default()
        }
    }
}

/// The resources R's `resource_specs()` made (RULES section 17): a list
/// with `resources` and `templates`, each a list of items with `name`,
/// `title` and `description` (`""` when not given), `mime_type`, `kind`
/// (`"text"` or `"blob"`) and `body`; a resource also has `uri` and
/// `size`, a template `uri_template` and its variables' `var_names`,
/// `var_descriptions` and `var_values`.
///
/// # Safety
/// Main thread; `spec` is that list, protected with the server spec.
pub(crate) unsafe fn read_resources(spec: SEXP) -> Result<Resources> {
    // SAFETY: caller's contract: the members are what resource_specs() builds.
    unsafe {
        let items = |key: &str| -> Result<Vec<SEXP>> {
            let l = list_get(spec, key).ok_or_else(|| Error::internal(format!("the resources lack `{key}`")))?;
            Ok((0..xlen(l) as R_xlen_t).map(|i| VECTOR_ELT(l, i)).collect())
        };
        let text = |item: SEXP, key: &str| -> Result<String> {
            list_get(item, key)
                .map(|v| str_elt(v, 0))
                .ok_or_else(|| Error::internal(format!("a resource lacks `{key}`")))
        };
        let optional =
            |item: SEXP, key: &str| -> Result<Option<String>> { text(item, key).map(|t| (!t.is_empty()).then_some(t)) };
        let body = |item: SEXP| -> Result<ResourceBody> {
            let b = text(item, "body")?;
            Ok(if text(item, "kind")? == "blob" { ResourceBody::Blob(b) } else { ResourceBody::Text(b) })
        };
        let mut out = Resources::default();
        for r in items("resources")? {
            let size = list_get(r, "size").ok_or_else(|| Error::internal("a resource lacks `size`"))?;
            out.resources.push(ResourceSpec {
                uri: text(r, "uri")?,
                name: text(r, "name")?,
                title: optional(r, "title")?,
                description: optional(r, "description")?,
                mime_type: text(r, "mime_type")?,
                size: *REAL(size) as u64,
                body: body(r)?,
            });
        }
        for t in items("templates")? {
            let uri_template = text(t, "uri_template")?;
            let template = UriTemplate::parse(&uri_template).map_err(|e| Error::internal(e.0))?;
            let get = |n: &str| list_get(t, n).ok_or_else(|| Error::internal(format!("a template lacks `{n}`")));
            let (names, descs, values) = (get("var_names")?, get("var_descriptions")?, get("var_values")?);
            let variables = (0..xlen(names) as R_xlen_t)
                .map(|j| {
                    let d = str_elt(descs, j);
                    let vals = VECTOR_ELT(values, j);
                    PromptArgument {
                        name: str_elt(names, j),
                        description: (!d.is_empty()).then_some(d),
                        required: true,
                        values: (0..xlen(vals) as R_xlen_t).map(|k| str_elt(vals, k)).collect(),
                    }
                })
                .collect();
            out.templates.push(TemplateSpec {
                template,
                uri_template,
                name: text(t, "name")?,
                title: optional(t, "title")?,
                description: optional(t, "description")?,
                mime_type: text(t, "mime_type")?,
                body: body(t)?,
                variables,
            });
        }
        Ok(out)
    }
}

impl Host for RHost {
    fn tools(&mut self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn prompts(&mut self) -> Vec<PromptSpec> {
        self.prompts.clone()
    }

    fn resources(&mut self) -> Resources {
        self.resources.clone()
    }

    fn page_size(&mut self) -> Option<NonZeroUsize> {
        self.page_size
    }

    fn resource_changes(&mut self) -> bool {
        self.changes
    }

    fn call_tool(
        &mut self,
        index: usize,
        arguments: Option<&Map<String, Value>>,
        ctx: &CallContext,
    ) -> std::result::Result<ToolResult, ToolFailure> {
        crate::running_call::swallow_stale_interrupt();
        let mut out = None;
        let this = &*self;
        let ok = crate::trace_context::with_trace_context(ctx, || {
            // SAFETY: the engine calls the host on R's main thread; the spec
            // outlives the host (RHost documentation); toplevel() contains
            // R errors raised by the bridge's own allocations.
            toplevel(|| out = Some(unsafe { this.call_inner(index, arguments) }))
        });
        match out {
            // An interrupt the tool's own code handled is not the server's
            // (RULES S7).
            Some(r) => {
                mcplite_engine::signals::forget_sigint();
                r
            }
            None if !ok && take_interrupt() => {
                crate::running_call::interrupt_consumed();
                Err(ToolFailure::Interrupted)
            }
            None => Err(ToolFailure::Error(ABORTED.into())),
        }
    }

    fn interrupt_pending(&mut self) -> bool {
        // A cancellation's interrupt that arrived after its call ended is
        // not the user's Ctrl-C.
        crate::running_call::swallow_stale_interrupt();
        take_interrupt()
    }
}
