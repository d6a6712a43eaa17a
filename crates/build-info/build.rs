//! Bakes the commit this binary is built from, and whether its sources had uncommitted changes,
//! into `SERVERBENCH_COMMIT` (40 hex digits, or `unknown` outside git), `SERVERBENCH_DIRTY`
//! (`true`, `false` or `unknown`) and `SERVERBENCH_VERSION_SUFFIX` (` (commit 1a2b3c4d5e6f)`),
//! read by src/lib.rs: `serverbench --version` and the `git` of `env.json` say which code ran,
//! wherever the binary runs from.
//!
//! A crate of its own so that computing it again (whenever a source changes) rebuilds this
//! crate and the binary only, not every test of the command line.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the binary is built from, relative to the workspace, besides each crate's `src/`,
/// `Cargo.toml` and `build.rs`: the sources whose changes make it "dirty", each watched so that
/// the flag is computed again when one changes (tests and fixtures are not among them).
const SOURCES: &[&str] = &["spec", "Cargo.toml", "Cargo.lock"];

/// The workspace-relative sources of the binary: [`SOURCES`] and every crate's own.
fn sources(workspace: &Path) -> Vec<String> {
    let mut out: Vec<String> = SOURCES.iter().map(|s| s.to_string()).collect();
    let mut crates: Vec<String> = std::fs::read_dir(workspace.join("crates"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    crates.sort();
    for c in crates {
        for part in ["src", "Cargo.toml", "build.rs"] {
            let rel = format!("crates/{c}/{part}");
            if workspace.join(&rel).exists() {
                out.push(rel);
            }
        }
    }
    out
}

fn git(workspace: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(workspace)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Git's own files that change with the commit or the index: HEAD, the branch's ref, packed
/// refs and the index (a worktree's HEAD and index are its own, the refs shared).
fn watch_git(workspace: &Path) {
    let mut files = vec![
        "HEAD".to_owned(),
        "packed-refs".to_owned(),
        "index".to_owned(),
    ];
    files.extend(git(workspace, &["symbolic-ref", "-q", "HEAD"]));
    for f in files {
        if let Some(path) = git(workspace, &["rev-parse", "--git-path", &f]) {
            let path = PathBuf::from(path);
            let path = if path.is_absolute() {
                path
            } else {
                workspace.join(path)
            };
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let workspace = manifest.join("../..");
    let sources = sources(&workspace);
    for s in &sources {
        println!("cargo:rerun-if-changed={}", workspace.join(s).display());
    }
    // Only the workspace's own repository: sources unpacked inside another one (a vendored
    // copy) are not that repository's commit.
    let own = git(&workspace, &["rev-parse", "--show-toplevel"])
        .and_then(|top| Path::new(&top).canonicalize().ok())
        .is_some_and(|top| workspace.canonicalize().is_ok_and(|w| w == top));
    let commit = own
        .then(|| git(&workspace, &["rev-parse", "HEAD"]))
        .flatten()
        .filter(|c| c.len() == 40);
    let dirty = match commit {
        Some(_) => {
            let mut args = vec!["status", "--porcelain", "--"];
            args.extend(sources.iter().map(String::as_str));
            git(&workspace, &args).map(|s| (!s.is_empty()).to_string())
        }
        None => None,
    };
    if commit.is_some() {
        watch_git(&workspace);
    }
    let suffix = match (&commit, dirty.as_deref()) {
        (Some(c), Some("true")) => format!(" (commit {}, uncommitted changes)", &c[..12]),
        (Some(c), _) => format!(" (commit {})", &c[..12]),
        (None, _) => " (commit unknown)".to_owned(),
    };
    println!("cargo:rustc-env=SERVERBENCH_VERSION_SUFFIX={suffix}");
    let unknown = || "unknown".to_owned();
    println!(
        "cargo:rustc-env=SERVERBENCH_COMMIT={}",
        commit.unwrap_or_else(unknown)
    );
    println!(
        "cargo:rustc-env=SERVERBENCH_DIRTY={}",
        dirty.unwrap_or_else(unknown)
    );
}
