//! The README kept true: its "Benchmark your own server" example, run as written (with the
//! catalog server swapped for a fixture one and the laps shortened, so it needs no `serverbench
//! setup`); its first block, its length, its links (every one resolves, and every page of docs/
//! is linked), the commands it names; and the crate graph and catalog count it and docs/ give.

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

/// docs/development.md's crate diagram: each workspace crate and the workspace crates it depends on
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
fn the_crate_diagram_in_docs_development_is_the_one_cargo_metadata_gives() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/development.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find(GRAPH_BEGIN)
        .expect("docs/development.md marks its crate graph");
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
        "docs/development.md's crate graph drifted from `cargo metadata`; \
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

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// Every file under `dir` (recursively), relative to the repository, with `/` separators.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(repo()).unwrap_or(&path).to_owned();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The Markdown files whose links the tests check: the README and every page of docs/.
fn checked_pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    pages.extend(
        files_under(&repo().join("docs"))
            .into_iter()
            .filter(|f| f.ends_with(".md")),
    );
    pages
}

/// The lines inside fenced code blocks (`inside`), or outside them, fences left out.
fn lines_fenced(text: &str, inside: bool) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced == inside {
            out.push(line);
        }
    }
    out
}

/// The text outside fenced code blocks, line by line (code is not Markdown: `# comment`,
/// `[a](b)` in a shell line are neither headings nor links).
fn prose_lines(text: &str) -> Vec<&str> {
    lines_fenced(text, false)
}

/// The lines inside fenced code blocks.
fn code_lines(text: &str) -> Vec<&str> {
    lines_fenced(text, true)
}

/// A line with its inline code spans (`...`) blanked out.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the Markdown links `[text](target)` in `text`, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            match after.find(')') {
                Some(j) => {
                    out.push(after[..j].trim().to_owned());
                    rest = &after[j + 1..];
                }
                None => break,
            }
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces
/// as `-`; a repeated heading gets `-1`, `-2`...
fn anchors(text: &str) -> std::collections::BTreeSet<String> {
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    let mut out = std::collections::BTreeSet::new();
    for line in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// `a/b/../c` as `a/c`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[test]
fn the_readme_starts_with_the_two_commands_of_a_fresh_machine() {
    let text = readme();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("# "))
        .take(4)
        .collect();
    assert_eq!(
        lines[0], "```sh",
        "the README opens with a sh block: {lines:?}"
    );
    assert!(lines[1].starts_with("make bench "), "{lines:?}");
    assert!(lines[2].starts_with("make test "), "{lines:?}");
    assert_eq!(lines[3], "```", "{lines:?}");
}

#[test]
fn the_readme_reads_in_five_minutes() {
    let lines = readme().lines().count();
    assert!(
        lines <= 400,
        "the README has {lines} lines: keep it under 400, move reference text to docs/"
    );
}

#[test]
fn the_readme_links_every_page_of_docs() {
    let text = readme();
    let linked: std::collections::BTreeSet<String> = link_targets(&text)
        .iter()
        .map(|t| normalize(t.split('#').next().unwrap()))
        .collect();
    let pages: Vec<String> = files_under(&repo().join("docs"))
        .into_iter()
        .filter(|f| f.ends_with(".md") || f.ends_with(".html"))
        .collect();
    assert!(pages.len() >= 10, "{pages:?}");
    let missing: Vec<&String> = pages.iter().filter(|p| !linked.contains(*p)).collect();
    assert!(
        missing.is_empty(),
        "the README links no page {missing:?} (link each under \"Documentation\")"
    );
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in checked_pages() {
        let text = std::fs::read_to_string(repo().join(&page)).unwrap();
        let dir = page.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                normalize(&format!("{dir}/{path}"))
            };
            checked += 1;
            if !repo().join(&file).exists() {
                broken.push(format!("{page}: ({target}): no file {file}"));
                continue;
            }
            if let Some(anchor) = anchor.filter(|_| file.ends_with(".md")) {
                let there = std::fs::read_to_string(repo().join(&file)).unwrap();
                if !anchors(&there).contains(anchor) {
                    broken.push(format!(
                        "{page}: ({target}): no heading #{anchor} in {file}"
                    ));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_serverbench_command_the_readme_names_is_a_real_subcommand() {
    let text = readme();
    let mut named = std::collections::BTreeSet::new();
    let code: Vec<String> = code_lines(&text)
        .into_iter()
        .map(str::to_owned)
        .chain(prose_lines(&text).into_iter().flat_map(|l| {
            l.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        }))
        .collect();
    for line in &code {
        let words: Vec<&str> = line.split_whitespace().collect();
        for w in words.windows(2) {
            if w[0] == "serverbench" && w[1].chars().all(|c| c.is_ascii_lowercase()) {
                named.insert(w[1].to_owned());
            }
        }
    }
    for must in [
        "load", "run", "verify", "list", "setup", "report", "compare",
    ] {
        assert!(
            named.contains(must),
            "the README names no `serverbench {must}`: {named:?}"
        );
    }
    let bin = env!("CARGO_BIN_EXE_serverbench");
    for sub in &named {
        let out = Command::new(bin)
            .args([sub.as_str(), "--help"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the README names `serverbench {sub}`, which is no subcommand:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_anchor_of_a_heading_is_githubs() {
    let text = "# A tour\n## `serverbench load`: the load\n## io_uring (`--io uring`) against epoll\n## Notes\n## Notes\n```sh\n# not a heading\n```\n";
    let want: Vec<&str> = vec![
        "a-tour",
        "io_uring---io-uring-against-epoll",
        "notes",
        "notes-1",
        "serverbench-load-the-load",
    ];
    assert_eq!(
        anchors(text).iter().map(String::as_str).collect::<Vec<_>>(),
        want
    );
    assert_eq!(
        link_targets("see [a](b.md#c) and `[x](y)`\n```\n[p](q)\n```\n"),
        vec!["b.md#c"]
    );
}
