//! Files written before the protocol seam (issue 40) still read and render: a results folder and
//! a history file made on 2026-11-28 by commit a677a2d (`fixtures/before-seam/suite.toml`: c/nginx
//! over HTTP/1.1, HTTPS and h2 with 4 streams, 8 connections, 2 laps of 0.5 s). Re-importing the
//! folder finds the run already recorded, so a lap's settings (and its hash) read the same.

mod common;

use common::{serverbench, text};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/before-seam")
        .join(name)
}

#[test]
fn an_old_results_folder_renders_in_every_format_with_its_figures() {
    let results = fixture("20261128T211547Z-before-seam");
    let dir = results.to_str().unwrap();
    let out = serverbench(&["report", dir]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for cell in ["hello", "https-hello", "h2-hello-m4", "c/nginx"] {
        assert!(stdout.contains(cell), "no {cell} in:\n{stdout}");
    }
    assert!(
        stdout.contains("TLSv1.3") && stdout.contains("h2 m4"),
        "the TLS and HTTP/2 tables read the old laps:\n{stdout}"
    );
    let tmp = tempfile::tempdir().unwrap();
    for format in ["md", "json", "csv", "html"] {
        let file = tmp.path().join(format!("report.{format}"));
        let out = serverbench(&[
            "report",
            dir,
            "--format",
            format,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{format}: {}", text(&out.stderr));
        let body = std::fs::read_to_string(&file).unwrap();
        assert!(body.contains("h2-hello-m4"), "{format} lacks the h2 row");
    }
}

#[test]
fn an_old_history_file_lists_its_cells_and_knows_the_old_run_when_it_is_imported_again() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.db");
    std::fs::copy(fixture("history.db"), &db).unwrap();
    let db = db.to_str().unwrap();
    let out = serverbench(&["history", "list", "--history", db]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for cell in ["c/nginx hello c8 h1", "c/nginx h2-hello-m4 c8 h2 m4"] {
        assert!(stdout.contains(cell), "no {cell} in:\n{stdout}");
    }
    // The settings hashes the old binary wrote.
    for hash in ["87e93195", "41296ab1", "e48430c4"] {
        assert!(stdout.contains(hash), "no settings {hash} in:\n{stdout}");
    }
    let results = fixture("20261128T211547Z-before-seam");
    let out = serverbench(&[
        "history",
        "import",
        "--history",
        db,
        results.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("already recorded as run 1"),
        "{}",
        text(&out.stderr)
    );
    // A fresh history gets the same settings hashes from the old folder.
    let fresh = tmp.path().join("fresh.db");
    let fresh = fresh.to_str().unwrap();
    let out = serverbench(&[
        "history",
        "import",
        "--history",
        fresh,
        results.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = serverbench(&["history", "list", "--history", fresh]);
    let stdout = text(&out.stdout);
    for hash in ["87e93195", "41296ab1", "e48430c4"] {
        assert!(stdout.contains(hash), "no settings {hash} in:\n{stdout}");
    }
}
