//! A self-contained HTML page: summary tables (sortable by any column), the environment,
//! diagnostics and inline SVG charts. It makes no network request: no CDN, no web font, no
//! external script or image, so it renders the same from a `file://` URL with the network off.
//! Reading it needs no JavaScript; a few lines of inline script only add column sorting.

use crate::env;
use crate::figures::{self, Figure};
use crate::table::{self, Align, Grid, View};
use crate::term_warnings::{groups, Group};
use crate::text::count;
use crate::{Comparison, Exporter, Format, NoComparisonForm};
use serverbench_analysis::summary::{Summary, Table, Warning, WarningKind};
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
.diag li.g{list-style:none}.diag details{margin:0}.diag details ul{padding-left:18px;margin:4px 0}.diag details li{margin:3px 0}\
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
        let diagnosed = match summary.warnings.len() {
            0 => String::new(),
            n => format!(
                " <a href=\"#diagnostics\">{}</a> follow the charts.",
                count(n as u64, "diagnostic")
            ),
        };
        let _ = writeln!(
            out,
            "<p class=\"sub\">{}, {}. Click a column header to sort; charts are inline SVG and \
             the page works offline.{diagnosed}</p>",
            count(summary.tables.len() as u64, "table"),
            count(self.records.len() as u64, "lap")
        );
        let sections: Vec<(&Table, Vec<Figure>)> = summary
            .tables
            .iter()
            .map(|t| (t, figures::for_table(t, self.records)))
            .collect();
        let scaling_figs = figures::scaling(summary);
        let ids: Vec<&str> = sections
            .iter()
            .flat_map(|(_, f)| f.iter().map(|f| f.id.as_str()))
            .chain(scaling_figs.iter().map(|f| f.id.as_str()))
            .collect();
        for (table, figs) in &sections {
            section(&mut out, summary, table, figs, self.records);
        }
        if let Some(fig) = figures::echo_mbps(summary) {
            out.push_str("<h2 id=\"echo\">TCP echo throughput</h2>\n<div class=\"figs\">");
            embed(&mut out, &fig);
            out.push_str("</div>\n");
        }
        for (heading, g) in table::protocol_tables(summary) {
            let _ = writeln!(out, "<h2>{}</h2>", esc(&heading));
            grid(&mut out, &g);
        }
        for (heading, g) in table::database_tables(summary)
            .into_iter()
            .chain(table::mix_tables(summary))
        {
            let _ = writeln!(out, "<h2>{}</h2>", esc(&heading));
            grid(&mut out, &g);
        }
        for (heading, g) in table::cost_tables(summary) {
            let _ = writeln!(out, "<h2>{}</h2>", esc(&heading));
            grid(&mut out, &g);
        }
        for line in table::cost_legend(summary) {
            let _ = writeln!(out, "<p>{}</p>", esc(&line));
        }
        for (heading, g) in table::capacity_tables(summary) {
            let _ = writeln!(out, "<h2>{}</h2>", esc(&heading));
            grid(&mut out, &g);
        }
        for line in table::capacity_legend(summary) {
            let _ = writeln!(out, "<p>{}</p>", esc(&line));
        }
        for fig in crate::capacity_chart::capacity_charts(summary) {
            out.push_str("<div class=\"figs\">");
            embed(&mut out, &fig);
            out.push_str("</div>\n");
        }
        for (heading, g) in table::capacity_curve_tables(summary) {
            let _ = writeln!(out, "<details><summary>{}</summary>", esc(&heading));
            grid(&mut out, &g);
            out.push_str("</details>\n");
        }
        for fig in figures::queries(summary) {
            out.push_str("<div class=\"figs\">");
            embed(&mut out, &fig);
            out.push_str("</div>\n");
        }
        scaling(&mut out, summary, &scaling_figs);
        let noisy = table::noisy_lines(summary);
        if !noisy.is_empty() {
            out.push_str("<h2 id=\"disturbed\">Disturbed laps and --until-ci</h2>\n<ul>");
            for line in noisy {
                let _ = write!(out, "<li>{}</li>", esc(&line));
            }
            out.push_str("</ul>\n");
        }
        diagnostics(&mut out, summary, &ids);
        environment(&mut out, env_json, summary);
        out.push_str("<footer>Generated by serverbench report. ");
        for line in table::legend(summary) {
            let _ = write!(out, "{} ", esc(&line));
        }
        let _ = write!(
            out,
            "</footer>\n<script>{SORT_SCRIPT}</script>\n</body></html>\n"
        );
        out
    }

    fn render_comparison(
        &self,
        _c: &Comparison,
        _old: &str,
        _new: &str,
    ) -> Result<String, NoComparisonForm> {
        Err(NoComparisonForm(Format::Html))
    }
}

/// The environment, then the version of each server (not in the tables, where a whole
/// `--version` line would push the figures out of view).
fn environment(out: &mut String, env_json: Option<&Env>, summary: &Summary) {
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
    let versions = env::versions(env_json, summary);
    if !versions.is_empty() {
        out.push_str("<h3 id=\"versions\">Server versions</h3>\n<table class=\"env\"><tbody>");
        for (server, version) in versions {
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(&server),
                esc(&version)
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

/// A core sweep: per scenario x base profile, req/s against cores and the efficiency table.
fn scaling(out: &mut String, summary: &Summary, figs: &[Figure]) {
    let tables = table::scaling_tables(summary);
    if tables.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"scaling\">Scaling with server cores</h2>\n");
    for (t, fig) in tables.iter().zip(figs) {
        let _ = writeln!(
            out,
            "<h3>{} · {}: req/s by server cores (WORKERS = cores)</h3>",
            esc(t.scenario),
            esc(t.profile)
        );
        out.push_str("<div class=\"figs\">");
        embed(out, fig);
        out.push_str("</div>\n");
        grid(out, &table::scaling_grid(t, View::Page));
    }
}

/// The figure a warning is about, when the page has it, else its table's section. Where a
/// server stops scaling is shown by the scaling chart of the base profile.
fn anchor(w: &Warning, ids: &[&str]) -> String {
    if w.kind == WarningKind::StopsScaling {
        let base = w
            .profile
            .rsplit_once('/')
            .map_or(w.profile.as_str(), |b| b.0);
        let fig = figures::slug(&[&w.scenario, base, "scaling"]);
        if ids.contains(&fig.as_str()) {
            return fig;
        }
    }
    let fig = figures::slug(&[&w.scenario, &w.profile, w.kind.figure()]);
    if ids.contains(&fig.as_str()) {
        fig
    } else {
        figures::slug(&[&w.scenario, &w.profile])
    }
}

/// The diagnostics after the tables and charts, grouped by kind as the terminal groups them
/// ([`groups`]): a kind that repeats per server is one line, each server's sentence one click
/// away (`<details>`); every sentence links to its chart.
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
    for g in groups(&summary.warnings) {
        match g {
            Group::Kind {
                kind,
                line,
                warnings,
            } => {
                let _ = write!(
                    out,
                    "<li class=\"g\"><details><summary><span class=\"kind\">{}</span>{}</summary><ul>",
                    esc(&kind_label(kind)),
                    esc(&line)
                );
                for w in warnings {
                    out.push_str("<li>");
                    sentence(out, w, ids);
                    out.push_str("</li>");
                }
                out.push_str("</ul></details></li>\n");
            }
            Group::One(w) => {
                let _ = write!(
                    out,
                    "<li><span class=\"kind\">{}</span>",
                    esc(&kind_label(w.kind))
                );
                sentence(out, w, ids);
                out.push_str("</li>\n");
            }
        }
    }
    out.push_str("</ul>\n");
}

/// A warning kind as its label reads: `long tail`.
fn kind_label(kind: WarningKind) -> String {
    let value = serde_json::to_value(kind).ok();
    let name = value.as_ref().and_then(|v| v.as_str()).unwrap_or_default();
    name.replace('_', " ")
}

/// A warning's sentence and the link to its chart.
fn sentence(out: &mut String, w: &Warning, ids: &[&str]) {
    let _ = write!(
        out,
        "{}<a href=\"#{}\">see chart</a>",
        esc(&w.message),
        anchor(w, ids)
    );
}

/// `mode, N connections, T threads, 10 s, /hello` from the table's first lap.
fn load_line(table: &Table, records: &[LapRecord]) -> String {
    let mut parts = vec![
        table.mode.to_string(),
        count(table.connections, "connection"),
    ];
    let first = records
        .iter()
        .find(|r| r.scenario == table.scenario && r.profile == table.profile);
    if let Some(p) = first.map(|r| &r.params) {
        if p.threads > 0 {
            parts.push(count(p.threads, "client thread"));
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
        if !p.work.paths.is_empty() {
            parts.push(p.work.paths.join(" "));
        }
        if !table.body.is_empty() {
            parts.push(table.body.clone());
        }
    }
    if let Some(b) = &table.baseline {
        parts.push(format!("speed factor vs {b}"));
    }
    parts.join(" · ")
}

fn section(
    out: &mut String,
    summary: &Summary,
    table: &Table,
    figs: &[Figure],
    records: &[LapRecord],
) {
    let _ = writeln!(
        out,
        "<h2 id=\"{}\">{} · {}</h2>\n<p class=\"sub\">{}</p>",
        figures::slug(&[&table.scenario, &table.profile]),
        esc(&table.scenario),
        esc(&table.profile),
        esc(&load_line(table, records))
    );
    grid(out, &table::summary_grid(summary, table, None, View::Page));
    if let (Some(h), Some(l)) = (
        table::hosts_grid(summary, table, View::Page),
        table::host_laps_grid(summary, table),
    ) {
        out.push_str("<h3>Per client host</h3>\n");
        grid(out, &h);
        out.push_str("<h3>Per lap</h3>\n");
        grid(out, &l);
    }
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

/// A sortable table: numbers carry their raw value in `data-v` (the sort key), hints become
/// tooltips, and the headline cell of a noisy row says so.
fn grid(out: &mut String, g: &Grid) {
    let left = |a: Align| if a == Align::Left { " class=\"l\"" } else { "" };
    out.push_str("<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
    for c in &g.columns {
        let _ = write!(out, "<th{}>{}</th>", left(c.align), esc(&c.label));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &g.rows {
        out.push_str("<tr>");
        for (i, (cell, col)) in row.cells.iter().zip(&g.columns).enumerate() {
            let sort = match col.align {
                Align::Left => String::new(),
                Align::Right => format!(" data-v=\"{}\"", esc(&cell.raw)),
            };
            let title = cell
                .hint
                .as_ref()
                .map_or(String::new(), |h| format!(" title=\"{}\"", esc(h)));
            let noisy = if row.noisy && g.headline == Some(i) {
                " <span class=\"noisy\">noisy</span>"
            } else {
                ""
            };
            let _ = write!(
                out,
                "<td{}{sort}{title}>{}{noisy}</td>",
                left(col.align),
                esc(&cell.text)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
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

    fn warning(kind: WarningKind, server: &str, message: &str) -> Warning {
        Warning {
            kind,
            scenario: "hello".into(),
            profile: "c50".into(),
            server: Some(server.into()),
            message: format!("{server} (hello, c50): {message}"),
        }
    }

    #[test]
    fn diagnostics_are_grouped_by_kind_as_the_terminal_groups_them_each_sentence_one_click_away() {
        let mut warnings: Vec<Warning> = (0..30)
            .map(|i| warning(WarningKind::Noisy, &format!("lang/s{i}"), "noisy"))
            .collect();
        warnings.push(warning(
            WarningKind::Errors,
            "c/nginx",
            "0.2% of requests failed",
        ));
        let summary = Summary {
            suite: Some("quick".into()),
            baseline: None,
            tables: Vec::new(),
            warnings,
            scaling: Vec::new(),
            hosts: Vec::new(),
            protocols: Vec::new(),
            database: Vec::new(),
            cost: Vec::new(),
            capacity: Vec::new(),
            mix: Vec::new(),
            disturbed: Vec::new(),
            until_ci: None,
        };
        let html = HtmlExporter { records: &[] }.render(&summary, None);
        let diag = &html[html.find("id=\"diagnostics\"").unwrap()..];
        let diag = &diag[..diag.find("</ul>\n").unwrap()];
        assert_eq!(diag.matches("<details>").count(), 1, "{diag}");
        assert!(
            diag.contains("<summary><span class=\"kind\">noisy</span>30 servers noisy"),
            "{diag}"
        );
        assert_eq!(
            diag.matches("see chart").count(),
            31,
            "every sentence is kept"
        );
        let errors = diag.find("0.2% of requests failed").unwrap();
        assert!(errors > diag.find("</details>").unwrap(), "{diag}");
        assert!(
            html.contains("<a href=\"#diagnostics\">31 diagnostics</a>"),
            "{html}"
        );
    }

    #[test]
    fn missing_numbers_sort_last_and_show_a_dash() {
        use crate::table::{Cell, Column, Row};
        let g = Grid {
            columns: vec![Column {
                key: "rss_peak_mb",
                label: "RSS MB".into(),
                align: Align::Right,
            }],
            rows: vec![Row {
                cells: vec![Cell::number(None, |v| v.to_string())],
                ..Row::default()
            }],
            headline: None,
        };
        let mut out = String::new();
        grid(&mut out, &g);
        assert!(out.contains("<td data-v=\"\">-</td>"), "{out}");
    }
}
