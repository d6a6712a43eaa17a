//! The README's "Benchmark your own server" example, run as written, with the catalog server
//! swapped for a fixture one and the laps shortened (so it needs no `serverbench setup`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn readme_example() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(readme).unwrap();
    let marker = text
        .find("readme_cli.rs runs this block")
        .expect("the README marks its tested example");
    let block = &text[marker..];
    let start = block.find("```sh\n").expect("a sh block after the marker") + 6;
    let end = block[start..].find("```").unwrap() + start;
    block[start..end].to_owned()
}

#[test]
fn the_readme_example_of_your_own_server_runs_as_written() {
    let example = readme_example();
    assert!(
        example.lines().count() <= 12,
        "keep it about ten lines:\n{example}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog");
    let results = tmp.path().join("results");
    let script = example
        .replace("node/http", "python/fast")
        .replace("-d 5s --laps 3", "-d 500ms --laps 1 --warmup 0s")
        .replace(
            "serverbench run ",
            &format!("serverbench run --results {} ", results.display()),
        );
    assert_ne!(
        script, example,
        "the example still names node/http, -d 5s and --laps 3"
    );
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_serverbench"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-ec", &script])
        .current_dir(tmp.path())
        .env("PATH", path)
        .env("SERVERBENCH_ROOT", &root)
        .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script}\n{stdout}\n{stderr}");
    assert!(stdout.contains("mine"), "{stdout}");
    assert!(stdout.contains("python/fast"), "{stdout}");
}

/// The README's crate diagram: each workspace crate and the workspace crates it depends on
/// (normal dependencies), from `cargo metadata`, the crates that depend on more layers first.
fn crate_graph() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let short = |name: &str| match name.strip_prefix("serverbench-") {
        Some(s) => s.to_string(),
        None => "cli".to_string(),
    };
    let mut deps: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for p in meta["packages"].as_array().unwrap() {
        let mut on: Vec<String> = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null() && d["path"].is_string())
            .map(|d| short(d["name"].as_str().unwrap()))
            .collect();
        on.sort();
        deps.insert(short(p["name"].as_str().unwrap()), on);
    }
    fn depth(c: &str, deps: &std::collections::BTreeMap<String, Vec<String>>) -> usize {
        deps[c]
            .iter()
            .map(|d| 1 + depth(d, deps))
            .max()
            .unwrap_or(0)
    }
    let mut names: Vec<&String> = deps.keys().collect();
    names.sort_by_key(|c| (std::cmp::Reverse(depth(c, &deps)), c.to_string()));
    let lines: Vec<String> = names
        .iter()
        .map(|c| match deps[*c].as_slice() {
            [] => format!("{c:<10} (no crate of ours)"),
            on => format!("{c:<10} ──> {}", on.join(", ")),
        })
        .collect();
    format!("```text\n{}\n```\n", lines.join("\n"))
}

const GRAPH_BEGIN: &str = "<!-- crate graph: begin";
const GRAPH_END: &str = "<!-- crate graph: end -->";

#[test]
fn the_readme_crate_diagram_is_the_one_cargo_metadata_gives() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find(GRAPH_BEGIN)
        .expect("the README marks its crate graph");
    let start = begin + text[begin..].find("-->\n").unwrap() + 4;
    let end = text.find(GRAPH_END).expect("the crate graph's end marker");
    let want = crate_graph();
    if std::env::var_os("SERVERBENCH_UPDATE_README").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    assert_eq!(
        text[start..end],
        want,
        "the README's crate graph drifted from `cargo metadata`; \
         SERVERBENCH_UPDATE_README=1 cargo test -p serverbench --test readme_cli rewrites it"
    );
    assert_eq!(
        want.matches("engine").count(),
        2,
        "only cli depends on the engine (its own line and cli's):\n{want}"
    );
}

#[test]
fn the_readme_counts_the_catalog_servers_there_are() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../servers");
    let servers = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|lang| {
            std::fs::read_dir(lang.unwrap().path())
                .into_iter()
                .flatten()
        })
        .filter(|s| s.as_ref().unwrap().path().join("server.toml").is_file())
        .count();
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let said = format!("a **catalog** of {servers} small reference servers");
    assert!(readme.contains(&said), "the README should say: {said}");
}
