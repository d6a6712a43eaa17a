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
