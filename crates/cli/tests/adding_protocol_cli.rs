//! `spec/adding-a-protocol.md` stays true: every file its table names exists, and the engine
//! matches on its protocol enum only where the page says (the driver is chosen in
//! `proto/mod.rs`; `config/` builds and checks the prepared specs).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The paths in the second column of the page's table (`| step | `path` | what |`).
fn table_paths(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let step = cells.get(1)?;
            if step.is_empty() || !step.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            Some(cells.get(2)?.trim_matches('`').to_owned())
        })
        .collect()
}

#[test]
fn every_file_the_adding_a_protocol_page_names_exists() {
    let page = std::fs::read_to_string(root().join("spec/adding-a-protocol.md")).unwrap();
    let paths = table_paths(&page);
    assert!(paths.len() >= 30, "the table lists {} files", paths.len());
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !root().join(p.as_str()).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "spec/adding-a-protocol.md names files that are gone: {missing:?}"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_engine_matches_on_its_protocol_only_where_a_driver_is_chosen_and_in_its_config() {
    let src = root().join("crates/engine/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let strays: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.contains("Protocol::")
        })
        .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
        .filter(|f| f != "proto/mod.rs" && !f.starts_with("config/"))
        .collect();
    assert!(
        strays.is_empty(),
        "config::Protocol is matched outside proto/mod.rs and config/: {strays:?}"
    );
}
