//! A server's tasks from R (RULES section 19): `spec$tasks`, made by R's
//! `task_options()` and `server_spec()` (`R/tasks.R`), read into the
//! engine's [`Tasks`].

use crate::error::{self, Error};
use extendr_api::prelude::*;
use mcplite_engine::tasks::{Support, TaskOptions, Tasks};
use std::time::Duration;

/// The tasks of the server `spec` describes, or `None` when it has none.
/// `list`: requestors are told apart (stdio, or HTTP with tokens), so
/// `tasks/list` is offered (RULES V4.1). `replica`: the HTTP server's
/// replica name, put in front of its task ids so that a proxy routes a
/// task's requests to it, and telling its files from other replicas' in a
/// shared task directory (RULES V4.4).
pub fn from_spec(spec: &Robj, list: bool, replica: Option<&str>) -> error::Result<Option<Tasks>> {
    let Ok(l) = List::try_from(spec) else { return Ok(None) };
    let Some(t) = l.iter().find(|(k, _)| *k == "tasks").map(|(_, v)| v).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let t = List::try_from(&t).map_err(|_| Error::internal("the task options are not a list"))?;
    let m: std::collections::HashMap<&str, Robj> = t.iter().collect();
    let bad = |k: &str| Error::internal(format!("task option `{k}` is missing or malformed"));
    let secs = |k: &str| {
        m.get(k)
            .and_then(|r| r.as_real())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| bad(k))
    };
    let support = match m.get("support").and_then(|r| r.as_str_vector()) {
        Some(v) => v.into_iter().map(|s| Support::parse(s).ok_or_else(|| bad("support"))).collect::<Result<_, _>>()?,
        None => return Err(bad("support")),
    };
    let opts = TaskOptions {
        ttl: secs("ttl")?,
        max_ttl: secs("max_ttl")?,
        poll_interval: secs("poll_interval")?,
        max_tasks: m.get("max_tasks").and_then(|r| r.as_real()).filter(|n| *n >= 1.0).ok_or_else(|| bad("max_tasks"))?
            as usize,
        max_bytes: m
            .get("max_mb")
            .and_then(|r| r.as_real())
            .filter(|n| n.is_finite() && *n >= 16.0)
            .map(|n| (n * 1_048_576.0) as usize)
            .ok_or_else(|| bad("max_mb"))?,
        dir: m.get("dir").and_then(|r| r.as_str()).map(std::path::PathBuf::from),
        list,
        prefix: replica.map(str::to_owned),
        after: match m.get("after") {
            None => None,
            Some(r) if r.is_null() => None,
            Some(_) => Some(secs("after")?),
        },
        ..TaskOptions::default()
    };
    let dir = opts.dir.clone();
    Tasks::new(opts, support).map(Some).map_err(|e| {
        // A replica name the engine refuses (R checked it already).
        if e.kind() == std::io::ErrorKind::InvalidInput {
            return Error::new(error::Kind::Argument, e.to_string());
        }
        let at = dir.map(|d| d.display().to_string()).unwrap_or_default();
        Error::new(error::Kind::Argument, format!("the task directory {at} cannot be used: {e}"))
    })
}
