//! results.json, results.csv and results.md, including the goal checks of issue 7.

use crate::stats::{summarize, Summary};
use crate::{Results, ServerDef};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

#[derive(Clone, Copy, PartialEq)]
pub enum Stat {
    Median,
    P99,
}

pub struct Row {
    pub metric: &'static str,
    pub stat: Stat,
    pub label: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
}

const fn row(metric: &'static str, stat: Stat, label: &'static str, unit: &'static str, hib: bool) -> Row {
    Row { metric, stat, label, unit, higher_is_better: hib }
}

pub const ROWS: &[Row] = &[
    row("W1.cold_1_ms", Stat::Median, "W1 cold start → initialize, 1 tool", "ms", false),
    row("W1.cold_54_ms", Stat::Median, "W1 cold start → initialize, 54 tools", "ms", false),
    row("W1.cpu_1_ms", Stat::Median, "W1 CPU time to initialize, 1 tool", "ms", false),
    row("W1.cpu_54_ms", Stat::Median, "W1 CPU time to initialize, 54 tools", "ms", false),
    row("W2.call_us", Stat::Median, "W2 `add`, 2,000 sequential: p50", "µs", false),
    row("W2.call_us", Stat::P99, "W2 `add`, 2,000 sequential: p99", "µs", false),
    row("W2.server_cpu_us", Stat::Median, "W2 server CPU time per call", "µs", false),
    row("W3.calls_per_s", Stat::Median, "W3 `add`, 5,000 pipelined", "calls/s", true),
    row("W3.server_cpu_us", Stat::Median, "W3 server CPU time per call", "µs", false),
    row("W4.list_us", Stat::Median, "W4 `tools/list`, 54 tools: p50", "µs", false),
    row("W5.text_ms", Stat::Median, "W5 10 MB text result", "ms", false),
    row("W5.text_cpu_ms", Stat::Median, "W5 10 MB text result: server CPU per call", "ms", false),
    row("W5.text_rss_mb", Stat::Median, "W5 10 MB text result: peak RSS", "MB", false),
    row("W5.frame_ms", Stat::Median, "W5 100,000 × 5 data frame (structured)", "ms", false),
    row("W5.frame_cpu_ms", Stat::Median, "W5 data frame: server CPU per call", "ms", false),
    row("W5.frame_rss_mb", Stat::Median, "W5 data frame: peak RSS", "MB", false),
    row("W6.arg_ms", Stat::Median, "W6 10 MB string argument", "ms", false),
    row("W6.arg_cpu_ms", Stat::Median, "W6 10 MB string argument: server CPU per call", "ms", false),
    row("W6.arg_rss_mb", Stat::Median, "W6 10 MB string argument: peak RSS", "MB", false),
    row("W7.call_us", Stat::Median, "W7 modern `add`, sequential: p50", "µs", false),
    row("W7.call_us", Stat::P99, "W7 modern `add`, sequential: p99", "µs", false),
    row("W7.server_cpu_us", Stat::Median, "W7 server CPU time per call", "µs", false),
    row("W7.calls_per_s", Stat::Median, "W7 modern `add`, 5,000 pipelined", "calls/s", true),
    row("idle_rss_mb", Stat::Median, "Peak RSS after initialize (54 tools)", "MB", false),
];

fn unit_of(metric: &str) -> &'static str {
    if metric.ends_with("_ms") {
        "ms"
    } else if metric.ends_with("_us") || metric.ends_with("_us_per_call") || metric.ends_with("_cpu_us") {
        "µs"
    } else if metric.ends_with("_mb") {
        "MB"
    } else if metric.ends_with("per_s") {
        "calls/s"
    } else {
        ""
    }
}

pub struct View<'a> {
    pub servers: &'a [ServerDef],
    pub res: &'a Results,
}

impl View<'_> {
    pub fn summary(&self, server: &str, metric: &str) -> Option<Summary> {
        summarize(self.res.samples.get(server)?.get(metric)?)
    }
    pub fn get(&self, server: &str, metric: &str, stat: Stat) -> Option<f64> {
        let s = self.summary(server, metric)?;
        if self.res.na.get(server).is_some_and(|m| m.contains_key(metric)) {
            return None; // partially failed: do not report a biased figure
        }
        Some(match stat {
            Stat::Median => s.median,
            Stat::P99 => s.p99,
        })
    }
    fn role(&self, role: &str) -> Vec<&ServerDef> {
        self.servers.iter().filter(|s| s.role == role).collect()
    }
    fn mcplite(&self) -> Option<&ServerDef> {
        self.servers.iter().find(|s| s.role == "mcplite")
    }
    fn na_reason(&self, server: &str, metric: &str) -> Option<&str> {
        self.res.na.get(server)?.get(metric).map(String::as_str)
    }
}

pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    let s = if a >= 1000.0 {
        let v = x.round() as i64;
        let digits = v.abs().to_string();
        let mut out = String::new();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        if v < 0 {
            format!("-{out}")
        } else {
            out
        }
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    s
}

fn fmt_ratio(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        "–".into()
    } else if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 10.0 {
        format!("{x:.1}×")
    } else if x >= 0.01 {
        format!("{x:.2}×")
    } else {
        format!("{x:.1e}×")
    }
}

// ---------------------------------------------------------------- goals

pub struct Goal {
    pub id: &'static str,
    pub text: String,
    pub measured: String,
    pub status: &'static str, // "met", "missed", "n/a"
}

fn status(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "met",
        Some(false) => "missed",
        None => "n/a",
    }
}

/// Peers that have a value for `metric`, with the value.
fn peer_values(v: &View, metric: &str, stat: Stat) -> Vec<(String, f64)> {
    v.role("peer").iter().filter_map(|p| v.get(&p.id, metric, stat).map(|x| (p.id.clone(), x))).collect()
}

fn best_peer(v: &View, metric: &str, stat: Stat, higher: bool) -> Option<(String, f64)> {
    peer_values(v, metric, stat).into_iter().reduce(|a, b| if (b.1 > a.1) == higher { b } else { a })
}

pub fn goals(v: &View) -> Vec<Goal> {
    let mut g = vec![];
    let Some(m) = v.mcplite() else { return g };
    let m = m.id.as_str();
    let mv = |metric: &str, stat: Stat| v.get(m, metric, stat);
    let floor = v.role("floor").first().map(|f| f.id.clone());
    let fv = |metric: &str| floor.as_deref().and_then(|f| v.get(f, metric, Stat::Median));

    // W1
    let rscript = v
        .servers
        .iter()
        .find(|s| s.role == "runtime" && s.id == "rscript")
        .and_then(|s| v.get(&s.id, "W1.cold_ms", Stat::Median));
    {
        let mut parts = vec![];
        let mut ok = Some(true);
        for (k, metric) in [("1 tool", "W1.cold_1_ms"), ("54 tools", "W1.cold_54_ms")] {
            match (mv(metric, Stat::Median), rscript) {
                (Some(a), Some(r)) => {
                    parts.push(format!(
                        "{k}: {} ms = {} of `Rscript -e 0` ({} ms)",
                        fmt_num(a),
                        fmt_ratio(a / r),
                        fmt_num(r)
                    ));
                    ok = ok.map(|o| o && a <= 1.2 * r);
                }
                _ => ok = None,
            }
        }
        let rcpu = v
            .servers
            .iter()
            .find(|s| s.role == "runtime" && s.id == "rscript")
            .and_then(|s| v.get(&s.id, "W1.cpu_ms", Stat::Median));
        for (k, metric) in [("1 tool", "W1.cpu_1_ms"), ("54 tools", "W1.cpu_54_ms")] {
            if let (Some(a), Some(r)) = (mv(metric, Stat::Median), rcpu) {
                parts.push(format!("CPU time {k}: {} of Rscript's", fmt_ratio(a / r)));
            }
        }
        g.push(Goal {
            id: "W1a",
            text: "cold start ≤ 1.2× bare `Rscript --vanilla -e 0` (1 and 54 tools)".into(),
            measured: parts.join("; "),
            status: status(ok),
        });
        let mut parts = vec![];
        let mut ok = Some(true);
        for (k, metric) in [("1 tool", "W1.cold_1_ms"), ("54 tools", "W1.cold_54_ms")] {
            match (mv(metric, Stat::Median), best_peer(v, metric, Stat::Median, false)) {
                (Some(a), Some((p, b))) => {
                    parts.push(format!("{k}: {} ms vs fastest peer {p} {} ms", fmt_num(a), fmt_num(b)));
                    ok = ok.map(|o| o && a < b);
                }
                _ => ok = None,
            }
        }
        g.push(Goal {
            id: "W1b",
            text: "cold start faster than every peer".into(),
            measured: parts.join("; "),
            status: status(ok),
        });
    }
    // W2 / W3 / W4, and W7 with the W2/W3 thresholds
    let lat = |id: &'static str, metric: &str, text: &str, factor: f64, g: &mut Vec<Goal>| {
        let r = match (mv(metric, Stat::Median), best_peer(v, metric, Stat::Median, false)) {
            (Some(a), Some((p, b))) => (
                format!("{} µs vs fastest peer {p} {} µs: {} of it", fmt_num(a), fmt_num(b), fmt_ratio(a / b)),
                Some(a <= factor * b),
            ),
            (None, _) => (format!("mcplite: {}", v.na_reason(m, metric).unwrap_or("no data")), None),
            _ => ("no peer data".into(), None),
        };
        g.push(Goal { id, text: text.into(), measured: r.0, status: status(r.1) });
    };
    let tput = |id: &'static str, metric: &str, text: &str, g: &mut Vec<Goal>| {
        let r = match (mv(metric, Stat::Median), best_peer(v, metric, Stat::Median, true)) {
            (Some(a), Some((p, b))) => (
                format!("{}/s vs fastest peer {p} {}/s: {}", fmt_num(a), fmt_num(b), fmt_ratio(a / b)),
                Some(a >= 3.0 * b),
            ),
            (None, _) => (format!("mcplite: {}", v.na_reason(m, metric).unwrap_or("no data")), None),
            _ => ("no peer data".into(), None),
        };
        g.push(Goal { id, text: text.into(), measured: r.0, status: status(r.1) });
    };
    lat("W2", "W2.call_us", "sequential `add` p50 ≤ 0.5× the fastest peer's", 0.5, &mut g);
    tput("W3", "W3.calls_per_s", "pipelined throughput ≥ 3× the fastest peer's", &mut g);
    lat("W4", "W4.list_us", "`tools/list` (54 tools) p50 ≤ 0.1× the fastest peer's", 0.1, &mut g);

    // W5 / W6 against the floor and the peers
    let vs_floor = |id: &'static str, metric: &str, text: &str, factor: f64, also_peers: bool, g: &mut Vec<Goal>| {
        let a = mv(metric, Stat::Median);
        let f = fv(metric);
        let bp = best_peer(v, metric, Stat::Median, false);
        let mut parts = vec![];
        let mut ok = Some(true);
        match (a, f) {
            (Some(a), Some(f)) => {
                parts.push(format!("{} ms = {} of the floor ({} ms)", fmt_num(a), fmt_ratio(a / f), fmt_num(f)));
                ok = ok.map(|o| o && a <= factor * f);
            }
            _ => ok = None,
        }
        if also_peers {
            match (a, &bp) {
                (Some(a), Some((p, b))) => {
                    parts.push(format!("fastest peer {p} {} ms", fmt_num(*b)));
                    ok = ok.map(|o| o && a < *b);
                }
                _ => ok = None,
            }
        }
        if a.is_none() {
            parts.push(format!("mcplite: {}", v.na_reason(m, metric).unwrap_or("no data")));
        }
        g.push(Goal { id, text: text.into(), measured: parts.join("; "), status: status(ok) });
    };
    vs_floor("W5a", "W5.text_ms", "10 MB text result within 2× of the Rust floor", 2.0, false, &mut g);
    vs_floor(
        "W5b",
        "W5.frame_ms",
        "data frame within 3× of the Rust floor and faster than every peer",
        3.0,
        true,
        &mut g,
    );
    {
        let mut parts = vec![];
        let mut ok = Some(true);
        for (k, metric) in [("text", "W5.text_rss_mb"), ("frame", "W5.frame_rss_mb")] {
            match (mv(metric, Stat::Median), best_peer(v, metric, Stat::Median, false)) {
                (Some(a), Some((p, b))) => {
                    parts.push(format!("{k}: {} MB vs lowest peer {p} {} MB", fmt_num(a), fmt_num(b)));
                    ok = ok.map(|o| o && a < b);
                }
                _ => ok = None,
            }
        }
        g.push(Goal {
            id: "W5c",
            text: "W5 peak RSS below every peer's".into(),
            measured: parts.join("; "),
            status: status(ok),
        });
    }
    vs_floor(
        "W6",
        "W6.arg_ms",
        "10 MB string argument within 2.5× of the Rust floor and faster than every peer",
        2.5,
        true,
        &mut g,
    );
    lat("W7a", "W7.call_us", "(informational) modern sequential p50 ≤ 0.5× the fastest modern peer's", 0.5, &mut g);
    tput("W7b", "W7.calls_per_s", "(informational) modern pipelined throughput ≥ 3× the fastest modern peer's", &mut g);
    g
}

// ---------------------------------------------------------------- writers

pub fn write_all(dir: &Path, servers: &[ServerDef], res: &Results, meta: &Value, run: &Value) {
    let v = View { servers, res };
    let goals = goals(&v);

    // JSON
    let mut metrics = Map::new();
    for (sid, ms) in &res.samples {
        let mut o = Map::new();
        for (metric, xs) in ms {
            if let Some(s) = summarize(xs) {
                let mut e = json!({"unit": unit_of(metric), "n": s.n, "median": s.median, "p25": s.p25, "p75": s.p75,
                                   "p99": s.p99, "min": s.min, "max": s.max});
                if xs.len() <= 60 {
                    e["samples"] = json!(xs);
                }
                o.insert(metric.clone(), e);
            }
        }
        metrics.insert(sid.clone(), Value::Object(o));
    }
    let doc = json!({
        "meta": meta,
        "run": run,
        "servers": servers.iter().map(|s| json!({"id": s.id, "label": s.label, "role": s.role, "cmd": s.cmd, "modern": s.modern})).collect::<Vec<_>>(),
        "metrics": metrics,
        "not_available": res.na,
        "goals": goals.iter().map(|g| json!({"id": g.id, "goal": g.text, "measured": g.measured, "status": g.status})).collect::<Vec<_>>(),
    });
    fs::write(dir.join("results.json"), serde_json::to_string_pretty(&doc).unwrap() + "\n")
        .expect("write results.json");

    // CSV
    let mut csv = String::from("server,role,metric,unit,n,median,p25,p75,p99,min,max\n");
    for s in servers {
        if let Some(ms) = res.samples.get(&s.id) {
            for (metric, xs) in ms {
                if let Some(x) = summarize(xs) {
                    let _ = writeln!(
                        csv,
                        "{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
                        s.id,
                        s.role,
                        metric,
                        unit_of(metric),
                        x.n,
                        x.median,
                        x.p25,
                        x.p75,
                        x.p99,
                        x.min,
                        x.max
                    );
                }
            }
        }
    }
    fs::write(dir.join("results.csv"), csv).expect("write results.csv");

    fs::write(dir.join("results.md"), markdown(&v, &goals, meta, run)).expect("write results.md");
}

fn cell(v: &View, sid: &str, r: &Row) -> String {
    match (v.get(sid, r.metric, r.stat), v.summary(sid, r.metric)) {
        (Some(x), Some(s)) if r.stat == Stat::Median && s.n > 1 => {
            format!("{} ({}–{})", fmt_num(x), fmt_num(s.p25), fmt_num(s.p75))
        }
        (Some(x), _) => fmt_num(x),
        _ if v.na_reason(sid, r.metric).is_some() => "n/a".into(),
        _ => "–".into(),
    }
}

pub fn markdown(v: &View, goals: &[Goal], meta: &Value, run: &Value) -> String {
    let mut md = String::new();
    let date = meta["date"].as_str().unwrap_or("(unknown date)");
    let _ = writeln!(md, "# mcplite benchmark results\n");
    let _ = writeln!(
        md,
        "Run: {date}{}; {} round(s), servers interleaved; load average {} → {}; {:.0} s.\n",
        if run["quick"].as_bool() == Some(true) { " (**--quick smoke run, not for quoting**)" } else { "" },
        run["rounds"],
        run["loadavg_start"].as_str().unwrap_or("?"),
        run["loadavg_end"].as_str().unwrap_or("?"),
        run["elapsed_s"].as_f64().unwrap_or(0.0)
    );
    if let Some(m) = meta["machine"].as_str() {
        let _ = writeln!(md, "Machine: {m}\n");
    }
    if let Some(vs) = meta["versions"].as_object() {
        let _ = writeln!(
            md,
            "Versions: {}\n",
            vs.iter().map(|(k, x)| format!("{k} {}", x.as_str().unwrap_or("?"))).collect::<Vec<_>>().join(", ")
        );
    }
    let shown: Vec<&ServerDef> =
        v.servers.iter().filter(|s| matches!(s.role.as_str(), "mcplite" | "peer" | "floor")).collect();
    let mcp = v.mcplite().map(|s| s.id.clone());

    let _ = writeln!(md, "## Ratios (mcplite's advantage; > 1 means mcplite is better)\n");
    let _ = writeln!(md, "peer ÷ mcplite for times and memory, mcplite ÷ peer for throughput.\n");
    let others: Vec<&&ServerDef> = shown.iter().filter(|s| s.role != "mcplite").collect();
    let _ = writeln!(md, "| Workload | {} |", others.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(md, "|---|{}", "---|".repeat(others.len()));
    if let Some(m) = &mcp {
        for r in ROWS {
            let a = v.get(m, r.metric, r.stat);
            let cells: Vec<String> = others
                .iter()
                .map(|s| match (a, v.get(&s.id, r.metric, r.stat)) {
                    (Some(a), Some(b)) => fmt_ratio(if r.higher_is_better { a / b } else { b / a }),
                    _ => "n/a".into(),
                })
                .collect();
            let _ = writeln!(md, "| {} | {} |", r.label, cells.join(" | "));
        }
    }

    let _ = writeln!(md, "\n## Goals of issue 7 (mcplite vs the fastest peer, unless stated)\n");
    let _ = writeln!(md, "| Goal | Target | Measured | Status |\n|---|---|---|---|");
    for g in goals {
        let _ = writeln!(md, "| {} | {} | {} | **{}** |", g.id, g.text, g.measured, g.status);
    }

    let _ = writeln!(md, "\n## Absolute figures: median (p25–p75)\n");
    let _ = writeln!(
        md,
        "| Workload | unit | {} |",
        shown.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|---|---|{}", "---|".repeat(shown.len()));
    for r in ROWS {
        let cells: Vec<String> = shown.iter().map(|s| cell(v, &s.id, r)).collect();
        let _ = writeln!(md, "| {} | {} | {} |", r.label, r.unit, cells.join(" | "));
    }

    let runtimes: Vec<&ServerDef> = v.servers.iter().filter(|s| s.role == "runtime").collect();
    if !runtimes.is_empty() {
        let _ = writeln!(md, "\n## Runtime floors (spawn → exit, no MCP)\n\n| Command | wall ms, median (p25–p75) | CPU ms |\n|---|---|---|");
        for s in runtimes {
            let r = Row { metric: "W1.cold_ms", stat: Stat::Median, label: "", unit: "ms", higher_is_better: false };
            let c = Row { metric: "W1.cpu_ms", stat: Stat::Median, label: "", unit: "ms", higher_is_better: false };
            let _ = writeln!(md, "| `{}` | {} | {} |", s.cmd.join(" "), cell(v, &s.id, &r), cell(v, &s.id, &c));
        }
    }

    if let Some(e) = v.servers.iter().find(|s| s.role == "echo") {
        let p50 = v.summary(&e.id, "W2.call_us");
        let tp = v.get(&e.id, "W3.calls_per_s", Stat::Median);
        let cpu = v.get(&e.id, "driver_cpu_us_per_call", Stat::Median);
        let _ = writeln!(md, "\n## Driver overhead (against `{}`, a trivial echo server)\n", e.cmd.join(" "));
        let _ = writeln!(
            md,
            "Round trip p50 {} µs (p99 {} µs); pipelined {} lines/s; driver CPU {} µs per request. \
                             These bound what the driver and the pipes add to every figure above.",
            p50.map(|s| fmt_num(s.median)).unwrap_or("–".into()),
            p50.map(|s| fmt_num(s.p99)).unwrap_or("–".into()),
            tp.map(fmt_num).unwrap_or("–".into()),
            cpu.map(fmt_num).unwrap_or("–".into())
        );
    }

    let mut nas = vec![];
    for (sid, ms) in &v.res.na {
        for (metric, why) in ms {
            nas.push(format!("- {sid} `{metric}`: {why}"));
        }
    }
    if !nas.is_empty() {
        let _ = writeln!(md, "\n## Not available\n\n{}", nas.join("\n"));
    }
    let _ = writeln!(
        md,
        "\nServers: {}",
        v.servers.iter().map(|s| format!("{} = `{}`", s.label, s.cmd.join(" "))).collect::<Vec<_>>().join("; ")
    );
    md
}
