//! `--graph report.html`: a self-contained page (no external scripts or styles) with every run
//! appended so far: a summary table and two inline SVG charts, throughput and p99 latency over
//! time, one line per run.
//!
//! The runs are kept in the page itself as JSON inside
//! `<script type="application/json" id="sibyl-stress-runs">`, versioned by a `format` field;
//! appending parses that block back, adds the new run and writes the whole page again
//! (through a temporary file and a rename, so an interrupted write leaves the old page).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::stats::{Interval, Summary};

/// Version of the embedded JSON; bump it when `ReportData` changes incompatibly.
pub const REPORT_FORMAT: u32 = 1;
const DATA_OPEN: &str = r#"<script type="application/json" id="sibyl-stress-runs">"#;
const DATA_CLOSE: &str = "</script>";

const COLORS: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// One run as stored in the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Seconds since the Unix epoch when the run ended.
    pub finished_at: u64,
    pub summary: Summary,
    pub intervals: Vec<Interval>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ReportData {
    format: u32,
    runs: Vec<RunRecord>,
}

/// Why the report could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path} exists but is not a sibyl-stress report (no run data block); refusing to overwrite it")]
    NotAReport { path: String },
    #[error("{path}: run data block is damaged: {detail}")]
    Damaged { path: String, detail: String },
    #[error("{path}: run data has format {found}, this sibyl-stress writes format {REPORT_FORMAT}")]
    Format { path: String, found: u32 },
}

/// The runs stored in a report page.
pub fn parse_runs(html: &str, path: &str) -> Result<Vec<RunRecord>, ReportError> {
    let start = html.find(DATA_OPEN).ok_or_else(|| ReportError::NotAReport { path: path.into() })? + DATA_OPEN.len();
    let len = html
        .get(start..)
        .and_then(|rest| rest.find(DATA_CLOSE))
        .ok_or_else(|| ReportError::Damaged { path: path.into(), detail: "unterminated script block".into() })?;
    let json = html.get(start..start + len).unwrap_or_default();
    let data: serde_json::Value =
        serde_json::from_str(json).map_err(|e| ReportError::Damaged { path: path.into(), detail: e.to_string() })?;
    let found = data.get("format").and_then(serde_json::Value::as_u64).unwrap_or(0) as u32;
    if found != REPORT_FORMAT {
        return Err(ReportError::Format { path: path.into(), found });
    }
    let data: ReportData =
        serde_json::from_value(data).map_err(|e| ReportError::Damaged { path: path.into(), detail: e.to_string() })?;
    Ok(data.runs)
}

/// Adds `run` to the page at `path` (creating it) and returns how many runs the page now shows.
pub fn append_run(path: &Path, run: RunRecord) -> Result<usize, ReportError> {
    let name = path.display().to_string();
    let io = |source| ReportError::Io { path: name.clone(), source };
    let mut runs = match std::fs::read_to_string(path) {
        Ok(html) => parse_runs(&html, &name)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io(e)),
    };
    runs.push(run);
    let html = render(&runs);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, html).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(runs.len())
}

/// Text made safe for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that cannot end the `<script>` block early: `<`, `>` and `&` only occur inside JSON
/// strings, where their `\u` escapes mean the same.
fn script_safe_json(runs: &[RunRecord]) -> String {
    let data = ReportData { format: REPORT_FORMAT, runs: runs.to_vec() };
    let json = serde_json::to_string(&data).unwrap_or_else(|e| format!("{{\"format\":0,\"error\":\"{e}\"}}"));
    json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// A round number ≥ `v` for the top of an axis (1, 2, 2.5 or 5 × 10^n).
fn nice_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || v.is_infinite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|c| *c >= v * 0.999_999).unwrap_or(10.0 * mag)
}

fn fmt_tick(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One line chart as inline SVG: `series` is (run index, points (x seconds, y)); `names` are
/// the run titles for the legend.
fn svg_chart(title: &str, y_unit: &str, series: &[(usize, Vec<(f64, f64)>)], names: &[&str]) -> String {
    let (w, h) = (900.0, 320.0);
    let (left, right, top, bottom) = (70.0, 20.0, 30.0, 40.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let max_x = nice_ceiling(series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).fold(0.0, f64::max));
    let max_y = nice_ceiling(series.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)).fold(0.0, f64::max) * 1.05);
    let x = |v: f64| left + v / max_x * pw;
    let y = |v: f64| top + ph - v / max_y * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}">"#,
        t = escape_html(title)
    );
    let _ = write!(s, r#"<text x="{left}" y="18" class="title">{}</text>"#, escape_html(title));
    for i in 0..=5 {
        let v = max_y * f64::from(i) / 5.0;
        let _ = write!(
            s,
            r#"<line x1="{left}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" class="grid"/><text x="{tx}" y="{ty:.1}" class="ylab">{}</text>"#,
            fmt_tick(v),
            x2 = left + pw,
            yy = y(v),
            tx = left - 6.0,
            ty = y(v) + 4.0
        );
    }
    for i in 0..=10 {
        let v = max_x * f64::from(i) / 10.0;
        let _ = write!(
            s,
            r#"<text x="{xx:.1}" y="{ty}" class="xlab">{}</text>"#,
            fmt_tick(v),
            xx = x(v),
            ty = top + ph + 16.0
        );
    }
    let _ = write!(
        s,
        r#"<text x="{cx}" y="{by}" class="xlab">seconds</text><text x="14" y="{cy}" class="ylab" transform="rotate(-90 14 {cy})">{}</text>"#,
        escape_html(y_unit),
        cx = left + pw / 2.0,
        by = h - 4.0,
        cy = top + ph / 2.0
    );
    let _ = write!(s, r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>"#);
    for (run, points) in series {
        let color = COLORS[run % COLORS.len()];
        let pts: Vec<String> = points.iter().map(|(px, py)| format!("{:.1},{:.1}", x(*px), y(*py))).collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"><title>run {}</title></polyline>"#,
            pts.join(" "),
            run + 1
        );
        if let [(px, py)] = points.as_slice() {
            let _ = write!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#, x(*px), y(*py));
        }
    }
    // Legend, top right inside the plot, one line per run.
    for (i, name) in names.iter().enumerate() {
        let ly = top + 14.0 + 15.0 * i as f64;
        let lx = left + pw - 230.0;
        let _ = write!(
            s,
            r#"<line x1="{lx}" x2="{x2}" y1="{yy}" y2="{yy}" stroke="{c}" stroke-width="3"/><text x="{tx}" y="{ty}">{n}. {t}</text>"#,
            x2 = lx + 18.0,
            yy = ly - 4.0,
            c = COLORS[i % COLORS.len()],
            tx = lx + 24.0,
            ty = ly,
            n = i + 1,
            t = escape_html(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// The whole page for `runs`.
pub fn render(runs: &[RunRecord]) -> String {
    let throughput: Vec<(usize, Vec<(f64, f64)>)> =
        runs.iter().enumerate().map(|(i, r)| (i, r.intervals.iter().map(|v| (v.t_s, v.op_rate)).collect())).collect();
    let latency: Vec<(usize, Vec<(f64, f64)>)> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.intervals.iter().filter(|v| v.ops > 0).map(|v| (v.t_s, v.p99_ms)).collect()))
        .collect();
    let mut rows = String::new();
    for (i, r) in runs.iter().enumerate() {
        let s = &r.summary;
        let l = &s.latency;
        let _ = writeln!(
            rows,
            "<tr><td><span class=\"sw\" style=\"background:{c}\"></span>{n}</td><td>{title}</td><td>{op}</td>\
             <td>{ops}</td><td>{rate:.0}</td><td>{mean:.3}</td><td>{p50:.3}</td><td>{p95:.3}</td><td>{p99:.3}</td>\
             <td>{p999:.3}</td><td>{max:.3}</td><td>{errors}</td><td>{el:.1}</td><td class=\"d\">{desc}{ab}</td></tr>",
            c = COLORS[i % COLORS.len()],
            n = i + 1,
            title = escape_html(&s.title),
            op = escape_html(&s.operation),
            ops = s.ops,
            rate = s.op_rate,
            mean = l.mean_ms,
            p50 = l.p50_ms,
            p95 = l.p95_ms,
            p99 = l.p99_ms,
            p999 = l.p999_ms,
            max = l.max_ms,
            errors = s.errors,
            el = s.elapsed_s,
            desc = escape_html(&s.description),
            ab = s
                .aborted
                .as_deref()
                .map(|a| format!("<br><b>stopped early:</b> {}", escape_html(a)))
                .unwrap_or_default(),
        );
    }
    let mut page = String::new();
    page.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sibyl-stress report</title>\n<style>\n\
         body{font-family:sans-serif;margin:1.5em;color:#222}\n\
         table{border-collapse:collapse;font-size:13px;margin-bottom:1.5em}\n\
         th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}\n\
         td:nth-child(2),td:nth-child(3),td.d{text-align:left}\n\
         td.d{font-size:11px;color:#555;max-width:30em}\n\
         .sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}\n\
         svg{display:block;margin-bottom:1em;font-size:11px}\n\
         svg .title{font-size:14px;font-weight:bold}\n\
         svg .grid{stroke:#e4e4e4}\n svg .frame{fill:none;stroke:#999}\n\
         svg .ylab{text-anchor:end}\n svg .xlab{text-anchor:middle}\n\
         </style>\n</head>\n<body>\n<h1>sibyl-stress report</h1>\n",
    );
    let _ = writeln!(page, "<p>{} run(s). Latencies in milliseconds; rates in operations per second.</p>", runs.len());
    page.push_str(
        "<table>\n<tr><th>#</th><th>title</th><th>operation</th><th>ops</th><th>op/s</th><th>mean</th><th>p50</th>\
         <th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th><th>seconds</th><th>settings</th></tr>\n",
    );
    page.push_str(&rows);
    page.push_str("</table>\n");
    let names: Vec<&str> = runs.iter().map(|r| r.summary.title.as_str()).collect();
    page.push_str(&svg_chart("Throughput", "op/s", &throughput, &names));
    page.push_str(&svg_chart("p99 latency", "ms", &latency, &names));
    page.push('\n');
    page.push_str(DATA_OPEN);
    page.push_str(&script_safe_json(runs));
    page.push_str(DATA_CLOSE);
    page.push_str("\n</body>\n</html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Summary, WorkerStats};

    fn run(title: &str, rate: f64) -> RunRecord {
        let mut w = WorkerStats::default();
        for i in 1..=100 {
            w.success("insert", i * 10);
        }
        let summary = Summary::new(title.into(), "insert".into(), "desc".into(), &w, 1.0, None);
        let intervals = (1..=3)
            .map(|i| Interval {
                t_s: f64::from(i),
                ops: 100,
                op_rate: rate * f64::from(i),
                mean_ms: 0.5,
                p99_ms: 1.0,
                errors: 0,
                total_ops: 100 * i as u64,
                total_errors: 0,
            })
            .collect();
        RunRecord { finished_at: 1_700_000_000, summary, intervals }
    }

    #[test]
    fn append_keeps_earlier_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        assert_eq!(append_run(&path, run("first", 1000.0)).unwrap(), 1);
        assert_eq!(append_run(&path, run("second </script><b>&", 2000.0)).unwrap(), 2);
        assert_eq!(append_run(&path, run("third", 3000.0)).unwrap(), 3);

        let html = std::fs::read_to_string(&path).unwrap();
        let runs = parse_runs(&html, "report.html").unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[0], run("first", 1000.0));
        assert_eq!(runs[1].summary.title, "second </script><b>&");
        assert_eq!(runs[2].intervals[2].op_rate, 9000.0);
        // The hostile title is escaped in the table and did not end the data block early.
        assert!(html.contains("second &lt;/script&gt;&lt;b&gt;&amp;"));
        assert_eq!(html.matches("</script>").count(), 1);
        // Both charts, one line per run each, and no external resources.
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(html.matches("<polyline").count(), 6);
        assert_eq!(html.matches("3. third</text>").count(), 2, "legend of both charts");
        assert!(!html.contains("src=") && !html.contains("href="));
        assert!(!path.with_extension("html.tmp").exists());
    }

    #[test]
    fn foreign_or_damaged_files_are_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.html");
        std::fs::write(&path, "<html>my notes</html>").unwrap();
        assert!(matches!(append_run(&path, run("x", 1.0)), Err(ReportError::NotAReport { .. })));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<html>my notes</html>");

        let damaged = format!("{DATA_OPEN}{{\"format\":1,\"runs\":[{{oops{DATA_CLOSE}");
        assert!(matches!(parse_runs(&damaged, "p"), Err(ReportError::Damaged { .. })));
        let future = format!("{DATA_OPEN}{{\"format\":99,\"runs\":[]}}{DATA_CLOSE}");
        assert!(matches!(parse_runs(&future, "p"), Err(ReportError::Format { found: 99, .. })));
    }

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(12_000.0), 20_000.0);
        assert_eq!(nice_ceiling(2.2), 2.5);
        assert_eq!(nice_ceiling(5.0), 5.0);
    }
}
