//! `serverbench list`: every catalog server, what it implements and whether it can run here.

use crate::exit::Exit;
use serverbench_catalog::availability;
use std::path::PathBuf;

/// Arguments of `serverbench list`.
#[derive(clap::Args)]
pub struct Args {
    /// `-f json` (or `--json`): one array of objects instead of a table.
    #[command(flatten)]
    pub format: crate::flags::Format,
    /// The serverbench checkout whose catalog to use (default: SERVERBENCH_ROOT, else found
    /// above the current folder).
    #[arg(long, value_name = "DIR", long_help = crate::cmd::ROOT_HELP)]
    pub root: Option<PathBuf>,
}

/// One row of the listing.
struct Row {
    id: String,
    implements: String,
    /// Declared `[deviations]` keys, `-` when none.
    deviations: String,
    status: String,
    json: serde_json::Value,
}

/// Runs `serverbench list`; exits 0 even when some manifests are broken (they are listed).
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let (paths, catalog) = super::catalog(args.root.as_deref(), "serverbench list")?;
    let mut rows: Vec<Row> = catalog
        .servers
        .iter()
        .map(|s| {
            let m = &s.manifest;
            let avail = availability(s, &paths);
            let features: Vec<&str> = m.implements.iter().map(|f| f.as_str()).collect();
            let deviations: Vec<&str> = m.deviations.keys().map(|d| d.as_str()).collect();
            let reasons: serde_json::Map<String, serde_json::Value> = m
                .deviations
                .iter()
                .map(|(d, why)| (d.as_str().to_string(), why.clone().into()))
                .collect();
            Row {
                id: s.id.clone(),
                implements: features.join(" "),
                deviations: if deviations.is_empty() {
                    "-".into()
                } else {
                    deviations.join(" ")
                },
                status: avail.to_string(),
                json: serde_json::json!({
                    "id": s.id, "language": m.language, "framework": m.framework,
                    "framework_version": m.framework_version, "implements": features,
                    "deviations": reasons,
                    "status": avail.to_string(), "availability": avail,
                    "description": m.description,
                }),
            }
        })
        .collect();
    rows.extend(catalog.broken.iter().map(|b| Row {
        id: b.id.clone(),
        implements: "-".into(),
        deviations: "-".into(),
        status: format!("broken manifest: {}", b.error),
        json: serde_json::json!({"id": b.id, "status": "broken", "error": b.error.to_string()}),
    }));
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    if args.format.is_json() {
        let all: Vec<&serde_json::Value> = rows.iter().map(|r| &r.json).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else if rows.is_empty() {
        let root = paths.root.unwrap_or_default();
        println!("no servers in {}", root.join("servers").display());
    } else {
        print_table(&rows);
    }
    Ok(Exit::Ok)
}

/// The terminal's width budget (the house rule for every command's output).
const WIDTH: usize = 120;

fn print_table(rows: &[Row]) {
    print!("{}", table(rows));
}

/// The fewest columns STATUS keeps (`needs setup` fits).
const STATUS_MIN: usize = 14;

/// The DEVIATIONS column's most characters (all of them: `list --json`).
const DEVIATIONS_MAX: usize = 20;

/// SERVER, IMPLEMENTS, DEVIATIONS and STATUS within [`WIDTH`] columns (counted in characters):
/// what of a long status does not fit its column continues on lines under the row, indented to
/// IMPLEMENTS; the frameworks and their versions are in `list --json`.
fn table(rows: &[Row]) -> String {
    let header = ["SERVER", "IMPLEMENTS", "DEVIATIONS", "STATUS"];
    let cols = |r: &Row| {
        [
            r.id.clone(),
            r.implements.clone(),
            shorten(&r.deviations, DEVIATIONS_MAX),
        ]
    };
    let mut w = header.map(|h| h.chars().count());
    for r in rows {
        for (i, c) in cols(r).iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    // IMPLEMENTS gives way first: it wraps within its column so STATUS keeps some room.
    w[1] = w[1].min(
        WIDTH
            .saturating_sub(w[0] + w[2] + 6 + STATUS_MIN)
            .max(header[1].len()),
    );
    let lead = w[0] + w[1] + w[2] + 6;
    let status_w = WIDTH.saturating_sub(lead).max(STATUS_MIN);
    let line = |c: [&str; 3], status: &str| {
        let pad = |s: &str, n: usize| format!("{s}{}", " ".repeat(n - s.chars().count().min(n)));
        let text = format!(
            "{}  {}  {}  {status}",
            pad(c[0], w[0]),
            pad(c[1], w[1]),
            pad(c[2], w[2])
        );
        text.trim_end().to_owned()
    };
    let mut out = line([header[0], header[1], header[2]], header[3]) + "\n";
    let indent = w[0] + 2;
    for r in rows {
        let c = cols(r);
        let features = wrap(&c[1], w[1]);
        let first = wrap(&r.status, status_w).swap_remove(0);
        out += &line([&c[0], &features[0], &c[2]], &first);
        out += "\n";
        for more in &features[1..] {
            out += &line(["", more, ""], "");
            out += "\n";
        }
        let rest = r.status.get(first.len()..).unwrap_or("").trim_start();
        if !rest.is_empty() {
            for more in wrap(rest, WIDTH - indent) {
                out += &format!("{}{more}\n", " ".repeat(indent));
            }
        }
    }
    out += "`list --json` adds the frameworks, their versions and the reasons of DEVIATIONS\n";
    if rows.iter().any(|r| r.deviations != "-") {
        out += "DEVIATIONS: declared in server.toml; verify shows them, not failing\n";
    }
    out
}

/// `s` cut to `max` characters, the last one `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    s.chars().take(max - 1).chain(['…']).collect()
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let (n, m) = (cur.chars().count(), word.chars().count());
        if n > 0 && n + 1 + m > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
        while cur.chars().count() > width {
            let head: String = cur.chars().take(width).collect();
            cur = cur.chars().skip(width).collect();
            lines.push(head);
        }
    }
    lines.push(cur);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, implements: &str, status: &str) -> Row {
        Row {
            id: id.into(),
            implements: implements.into(),
            deviations: "http10_keep_alive".into(),
            status: status.into(),
            json: serde_json::Value::Null,
        }
    }

    #[test]
    fn the_table_fits_120_columns_with_the_longest_ids_features_and_statuses() {
        let rows = [
            row(
                "java/jdk-httpserver-vthreads",
                "hello routes json payload pingpong echo tls h2 h2c",
                "missing erl (apt: erlang-base erlang-inets erlang-mochiweb), erlc (apt: \
                 erlang-dev), rebar3 (apt: rebar3): run `serverbench setup` as root or µ-install",
            ),
            row("c/nginx", "hello tls h2", "needs setup"),
        ];
        let text = table(&rows);
        for l in text.lines() {
            assert!(
                l.chars().count() <= WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(text.contains("rebar3 (apt: rebar3)"), "{text}");
        assert!(text
            .lines()
            .any(|l| l.starts_with("c/nginx") && l.ends_with("needs setup")));
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_cuts_a_word_longer_than_the_line() {
        assert_eq!(wrap("ab cd ef", 5), vec!["ab cd", "ef"]);
        assert_eq!(wrap("abcdefg", 3), vec!["abc", "def", "g"]);
    }
}
