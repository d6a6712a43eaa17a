//! `serverbench list`: every catalog server, what it implements and whether it can run here.

use crate::exit::Exit;
use anyhow::Context;
use serverbench_catalog::paths::Paths;
use serverbench_catalog::{availability, Catalog};
use std::path::PathBuf;

/// Arguments of `serverbench list`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON (one array of objects) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The project root (default: SERVERBENCH_ROOT, else found above the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// One row of the listing.
struct Row {
    id: String,
    framework: String,
    implements: String,
    /// Declared `[deviations]` keys, `-` when none.
    deviations: String,
    status: String,
    json: serde_json::Value,
}

/// Runs `serverbench list`; exits 0 even when some manifests are broken (they are listed).
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let paths = Paths::discover(args.root.as_deref())?;
    let catalog = Catalog::load(&paths.root)
        .with_context(|| format!("reading the catalog in {}", paths.servers_dir().display()))?;
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
                framework: format!("{} {}", m.framework, m.framework_version),
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
        framework: "-".into(),
        implements: "-".into(),
        deviations: "-".into(),
        status: format!("broken manifest: {}", b.error),
        json: serde_json::json!({"id": b.id, "status": "broken", "error": b.error.to_string()}),
    }));
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    if args.json {
        let all: Vec<&serde_json::Value> = rows.iter().map(|r| &r.json).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else if rows.is_empty() {
        println!("no servers in {}", paths.servers_dir().display());
    } else {
        print_table(&rows);
    }
    Ok(Exit::Ok)
}

fn print_table(rows: &[Row]) {
    let header = ["SERVER", "FRAMEWORK", "IMPLEMENTS", "DEVIATIONS", "STATUS"];
    let w = |f: fn(&Row) -> &str, h: &str| rows.iter().map(|r| f(r).len()).chain([h.len()]).max();
    let w0 = w(|r| &r.id, header[0]).unwrap_or(0);
    let w1 = w(|r| &r.framework, header[1]).unwrap_or(0);
    let w2 = w(|r| &r.implements, header[2]).unwrap_or(0);
    let w3 = w(|r| &r.deviations, header[3]).unwrap_or(0);
    println!(
        "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
        header[0], header[1], header[2], header[3], header[4]
    );
    for r in rows {
        println!(
            "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
            r.id, r.framework, r.implements, r.deviations, r.status
        );
    }
    if rows.iter().any(|r| r.deviations != "-") {
        println!(
            "DEVIATIONS: declared in server.toml with the reason (`list --json`); verify shows them, not failing"
        );
    }
}
