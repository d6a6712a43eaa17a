//! A self-contained HTML page: summary tables (sortable by any column), the environment,
//! diagnostics and inline SVG charts. It makes no network request: no CDN, no web font, no
//! external script or image, so it renders the same from a `file://` URL with the network off.
//! Reading it needs no JavaScript; a few lines of inline script only add column sorting.

use crate::env;
use crate::figures::{self, Figure};
use crate::Exporter;
use serverbench_analysis::summary::{ServerSummary, Summary, Table, Warning};
use serverbench_charts::format_number;
use serverbench_results::env::Env;
use serverbench_results::record::LapRecord;
use std::fmt::Write;

/// Renders the page; it needs the laps too (latency curves and per-second timelines).
pub struct HtmlExporter<'a> {
    pub records: &'a [LapRecord],
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1160px;\
color:#1f2328;padding:8px 20px 40px;line-height:1.45}\
h1{font-size:26px;margin:16px 0 4px}h2{font-size:20px;margin-top:40px;border-bottom:2px solid #d0d7de;\
padding-bottom:4px}h3{font-size:16px;margin:18px 0 6px}.sub{color:#57606a;margin:0 0 12px}\
table{border-collapse:collapse;font-size:12.5px;margin:10px 0;font-variant-numeric:tabular-nums}\
th,td{padding:5px 6px;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap}\
thead th{background:#f6f8fa;border-bottom:2px solid #d0d7de;cursor:pointer;user-select:none;position:relative}\
thead th:hover{background:#eaeef2}th[data-sort=asc]::after{content:' \\25B2';font-size:9px}\
th[data-sort=desc]::after{content:' \\25BC';font-size:9px}td.l,th.l{text-align:left}\
tbody tr:hover{background:#f6f8fa}.scroll{overflow-x:auto}\
table.env th{background:none;cursor:default;text-align:left;color:#57606a;font-weight:600}\
table.env td{text-align:left;white-space:normal}\
.diag{padding-left:20px}.diag li{margin:6px 0}.diag a{font-size:12px;margin-left:6px}\
.kind{display:inline-block;font-size:11px;font-weight:600;padding:0 6px;border-radius:8px;\
background:#fff8c5;color:#7d4e00;margin-right:6px}\
.figs{display:flex;flex-wrap:wrap;gap:14px;margin:12px 0}\
figure{margin:0;max-width:100%}figure svg{max-width:100%;height:auto;border:1px solid #eaeef2;\
border-radius:6px;display:block}figure:target svg{outline:3px solid #f2cc60}\
details{margin:6px 0}summary{cursor:pointer;color:#0969da}.muted{color:#6e7781}\
.noisy{color:#9a6700;font-size:11px}footer{margin-top:40px;color:#6e7781;font-size:12px}";

/// Sorts a table by the clicked column, using each cell's `data-v` when present (numbers sort
/// numerically, empty values last).
const SORT_SCRIPT: &str = "document.querySelectorAll('table.sortable').forEach(function(t){\
t.querySelectorAll('thead th').forEach(function(th,i){th.title='Sort by this column';\
th.addEventListener('click',function(){var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);\
var asc=th.dataset.sort!=='asc';t.querySelectorAll('thead th').forEach(function(h){delete h.dataset.sort;});\
th.dataset.sort=asc?'asc':'desc';function key(r){var c=r.cells[i],v=c.dataset.v!==undefined?c.dataset.v:c.textContent;\
if(v==='')return null;var n=parseFloat(v);return isNaN(n)?v.toLowerCase():n;}\
rows.sort(function(a,b){var x=key(a),y=key(b);if(x===y)return 0;if(x===null)return 1;if(y===null)return -1;\
return (x<y?-1:1)*(asc?1:-1);});rows.forEach(function(r){tb.appendChild(r);});});});});";

impl Exporter for HtmlExporter<'_> {
    fn render(&self, summary: &Summary, env_json: Option<&Env>) -> String {
        let suite = summary.suite.as_deref().unwrap_or("results");
        let title = format!("serverbench — {suite}");
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
            t = esc(&title)
        );
        let _ = writeln!(
            out,
            "<p class=\"sub\">{} table(s), {} lap(s). Click a column header to sort; charts are \
             inline SVG and the page works offline.</p>",
            summary.tables.len(),
            self.records.len()
        );
        let sections: Vec<(&Table, Vec<Figure>)> = summary
            .tables
            .iter()
            .map(|t| (t, figures::for_table(t, self.records)))
            .collect();
        let ids: Vec<&str> = sections
            .iter()
            .flat_map(|(_, f)| f.iter().map(|f| f.id.as_str()))
            .collect();
        diagnostics(&mut out, summary, &ids);
        for (table, figs) in &sections {
            section(&mut out, table, figs, self.records, env_json);
        }
        if let Some(fig) = figures::echo_mbps(summary) {
            out.push_str("<h2 id=\"echo\">TCP echo throughput</h2>\n<div class=\"figs\">");
            embed(&mut out, &fig);
            out.push_str("</div>\n");
        }
        environment(&mut out, env_json);
        let _ = write!(
            out,
            "<footer>Generated by serverbench report. Requests/s: median of the laps with its \
             95% bootstrap interval; latency: median over laps of each percentile.</footer>\n\
             <script>{SORT_SCRIPT}</script>\n</body></html>\n"
        );
        out
    }
}

fn environment(out: &mut String, env_json: Option<&Env>) {
    let lines = env::config_lines(env_json);
    out.push_str("<h2 id=\"environment\">Environment</h2>\n");
    if lines.is_empty() {
        out.push_str("<p class=\"muted\">No env.json in this results folder.</p>\n");
        return;
    }
    out.push_str("<table class=\"env\"><tbody>");
    for (k, v) in lines {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    out.push_str("</tbody></table>\n");
}

/// The figure a warning is about, when the page has it, else its table's section.
fn anchor(w: &Warning, ids: &[&str]) -> String {
    let fig = figures::slug(&[&w.scenario, &w.profile, w.kind.figure()]);
    if ids.contains(&fig.as_str()) {
        fig
    } else {
        figures::slug(&[&w.scenario, &w.profile])
    }
}

fn diagnostics(out: &mut String, summary: &Summary, ids: &[&str]) {
    out.push_str("<h2 id=\"diagnostics\">Diagnostics</h2>\n");
    if summary.warnings.is_empty() {
        out.push_str(
            "<p>Nothing stood out: no saturated client, no errors, no noisy result, no idle \
             CPU, no long tail, no growing memory.</p>\n",
        );
        return;
    }
    out.push_str("<ul class=\"diag\">");
    for w in &summary.warnings {
        let kind = serde_json::to_value(w.kind)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<li><span class=\"kind\">{}</span>{}<a href=\"#{}\">see chart</a></li>",
            esc(&kind),
            esc(&w.message),
            anchor(w, ids)
        );
    }
    out.push_str("</ul>\n");
}

/// `mode, N connections, T threads, 10 s, /hello` from the table's first lap.
fn load_line(table: &Table, records: &[LapRecord]) -> String {
    let mut parts = vec![
        table.mode.to_string(),
        format!("{} connections", table.connections),
    ];
    let first = records
        .iter()
        .find(|r| r.scenario == table.scenario && r.profile == table.profile);
    if let Some(p) = first.map(|r| &r.params) {
        if p.threads > 0 {
            parts.push(format!("{} client thread(s)", p.threads));
        }
        if let Some(d) = p.duration_s {
            parts.push(format!("{d} s per lap"));
        }
        if let Some(n) = p.requests {
            parts.push(format!("{n} requests per lap"));
        }
        if p.pipeline > 1 {
            parts.push(format!("pipeline {}", p.pipeline));
        }
        if !p.paths.is_empty() {
            parts.push(p.paths.join(" "));
        }
    }
    if let Some(b) = &table.baseline {
        parts.push(format!("speed factor vs {b}"));
    }
    parts.join(" · ")
}

fn section(
    out: &mut String,
    table: &Table,
    figs: &[Figure],
    records: &[LapRecord],
    env_json: Option<&Env>,
) {
    let _ = writeln!(
        out,
        "<h2 id=\"{}\">{} · {}</h2>\n<p class=\"sub\">{}</p>",
        figures::slug(&[&table.scenario, &table.profile]),
        esc(&table.scenario),
        esc(&table.profile),
        esc(&load_line(table, records))
    );
    summary_table(out, table, env_json);
    out.push_str("<div class=\"figs\">");
    for fig in figs {
        embed(out, fig);
    }
    out.push_str("</div>\n");
    for s in &table.servers {
        let figs = figures::timelines(table, records, &s.server);
        if !figs.is_empty() {
            let _ = write!(
                out,
                "<details><summary>Per-second timeline of the median lap: {}</summary>\
                 <div class=\"figs\">",
                esc(&s.server)
            );
            figs.iter().for_each(|f| embed(out, f));
            out.push_str("</div></details>\n");
        }
    }
}

fn summary_table(out: &mut String, table: &Table, env_json: Option<&Env>) {
    let tcp = table.mode.is_tcp();
    let stream = table.mode.is_stream();
    let throughput = if tcp { "Mbps down" } else { "MB/s" };
    let heads = [
        "#",
        "Server",
        "Version",
        "Speed factor",
        if stream {
            "Messages/s (median)"
        } else {
            "Req/s (median)"
        },
        "95% interval",
        if stream { "Mbps/conn ⇅" } else { "p50 µs" },
        if stream { "Mbps up" } else { "p99 µs" },
        throughput,
        "Peak RSS MB",
        "CPU cores",
        "CPU µs/req",
        "Ctx sw/req",
        "Errors",
        "Laps",
    ];
    out.push_str("<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
    for (i, h) in heads.iter().enumerate() {
        let class = if (1..=2).contains(&i) {
            " class=\"l\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for s in &table.servers {
        row(out, table, s, env_json);
    }
    out.push_str("</tbody></table></div>\n");
}

fn row(out: &mut String, table: &Table, s: &ServerSummary, env_json: Option<&Env>) {
    let tcp = table.mode.is_tcp();
    let median = s.rps.map(|r| r.median);
    let interval = s
        .rps_ci
        .map(|c| format!("{} – {}", format_number(c.low), format_number(c.high)));
    let flow = if tcp { s.mbps_down } else { s.throughput_mb_s };
    let ok = s.laps - s.failed_laps;
    let laps = match s.failed_laps {
        0 => ok.to_string(),
        f => format!("{ok} (+{f} failed)"),
    };
    let per_lap: Vec<String> = s
        .lap_rps
        .iter()
        .map(|l| format!("lap {}: {:.0}", l.lap, l.rps))
        .collect();
    let noisy = if s.noisy {
        " <span class=\"noisy\">noisy</span>"
    } else {
        ""
    };
    let rank = s.rank.map(|r| r.to_string()).unwrap_or_default();
    let _ = write!(out, "<tr><td data-v=\"{rank}\">{}</td>", esc(&rank));
    let _ = write!(out, "<td class=\"l\">{}</td>", esc(&s.server));
    let version = env::server_version(env_json, &s.server);
    let _ = write!(out, "<td class=\"l\">{}</td>", esc(&version));
    out.push_str(&num_cell(s.speed_factor.map(|f| f.ratio), |v| {
        format!("{v:.2}x")
    }));
    let _ = write!(
        out,
        "<td data-v=\"{}\" title=\"{}\">{}{noisy}</td>",
        median.map_or(String::new(), |m| format!("{m:.1}")),
        esc(&per_lap.join(", ")),
        median.map_or("-".into(), |m| format!("{m:.0}"))
    );
    let _ = write!(
        out,
        "<td data-v=\"{}\">{}</td>",
        s.rps_ci.map_or(String::new(), |c| format!("{:.1}", c.low)),
        esc(&interval.unwrap_or_else(|| "-".into()))
    );
    if table.mode.is_stream() {
        let per_conn = crate::text::mbps_per_connection(table, s);
        out.push_str(&num_cell(per_conn, |v| format!("{v:.1}")));
        out.push_str(&num_cell(s.mbps_up, |v| format!("{v:.1}")));
    } else {
        out.push_str(&num_cell(s.latency_p50_us, |v| format!("{v:.0}")));
        out.push_str(&num_cell(s.latency_p99_us, |v| format!("{v:.0}")));
    }
    out.push_str(&num_cell(flow, |v| format!("{v:.1}")));
    out.push_str(&num_cell(s.rss_peak_mb, |v| format!("{v:.1}")));
    out.push_str(&num_cell(s.cores_used, |v| format!("{v:.2}")));
    out.push_str(&num_cell(s.cpu_us_per_request, |v| format!("{v:.1}")));
    out.push_str(&num_cell(s.ctx_switches_per_request, |v| format!("{v:.2}")));
    let errors = (s.errors + s.non_2xx) as f64;
    out.push_str(&num_cell(Some(errors), |v| format!("{v:.0}")));
    let _ = writeln!(out, "<td data-v=\"{ok}\">{}</td></tr>", esc(&laps));
}

fn num_cell(v: Option<f64>, show: impl Fn(f64) -> String) -> String {
    match v {
        Some(v) if v.is_finite() => format!("<td data-v=\"{v}\">{}</td>", esc(&show(v))),
        _ => "<td data-v=\"\">-</td>".to_owned(),
    }
}

fn embed(out: &mut String, fig: &Figure) {
    let _ = write!(out, "<figure id=\"{}\">{}</figure>", esc(&fig.id), fig.svg);
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_analysis::summary::WarningKind;

    #[test]
    fn text_is_escaped_for_html() {
        assert_eq!(
            esc("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_diagnostic_links_to_its_figure_or_else_to_its_table() {
        let w = Warning {
            kind: WarningKind::LongTail,
            scenario: "hello".into(),
            profile: "c50".into(),
            server: None,
            message: String::new(),
        };
        assert_eq!(anchor(&w, &["hello-c50-latency"]), "hello-c50-latency");
        assert_eq!(anchor(&w, &["hello-c50-rps"]), "hello-c50");
    }

    #[test]
    fn missing_numbers_sort_last_and_show_a_dash() {
        assert_eq!(num_cell(None, |v| v.to_string()), "<td data-v=\"\">-</td>");
        assert_eq!(
            num_cell(Some(2.5), |v| format!("{v:.1}")),
            "<td data-v=\"2.5\">2.5</td>"
        );
    }
}
