//! The configuration block every report shows above its tables, read from the typed
//! [`Env`] of the results folder: one sentence-like line per setting, in a fixed order.

use serverbench_analysis::summary::Summary;
use serverbench_results::env::{Env, Git, HostsEnv, Pinning, Warmup};

/// The version of `server` as one line, `-` when `env.json` has none.
pub fn server_version(env: Option<&Env>, server: &str) -> String {
    env.and_then(|e| e.server_version(server))
        .unwrap_or("-")
        .to_owned()
}

/// The suite's baseline server, if `env.json` names one.
pub fn suite_baseline(env: Option<&Env>) -> Option<String> {
    env?.baseline().map(str::to_owned)
}

/// CPUs as a short list: `0`, `0, 1`, `0-3`.
fn cpus(list: &[usize]) -> String {
    let contiguous = list.windows(2).all(|w| w[1] == w[0] + 1);
    match list {
        [] => "any CPU".to_owned(),
        [one] => format!("CPU {one}"),
        [first, .., last] if contiguous && list.len() > 2 => format!("CPUs {first}-{last}"),
        _ => {
            let all: Vec<String> = list.iter().map(usize::to_string).collect();
            format!("CPUs {}", all.join(", "))
        }
    }
}

/// `server on CPU 0 (WORKERS=1), client on CPU 1`.
/// `run --hosts`: where the servers ran and where the load came from.
fn hosts(h: &HostsEnv) -> String {
    let clients: Vec<String> = h
        .clients
        .iter()
        .map(|c| format!("{} ({} CPUs)", c.name, c.cpus))
        .collect();
    let database = h.database.as_ref().map_or(String::new(), |d| {
        format!(", database on {} ({}, {} CPUs)", d.name, d.address, d.cpus)
    });
    format!(
        "servers on {} ({}, {} CPUs), load from {}{database}",
        h.server.name,
        h.server.address,
        h.server.cpus,
        clients.join(", ")
    )
}

fn pinning(p: &Pinning) -> String {
    format!(
        "server on {} (WORKERS={}), client on {}",
        cpus(&p.server_cpus),
        p.workers.max(1),
        cpus(&p.client_cpus)
    )
}

/// `commit 1a2b3c4d5e6f (uncommitted changes)`, `None` when the commit is unknown.
fn commit(git: &Git) -> Option<String> {
    let c = git.commit.as_deref()?;
    let c = &c[..c.len().min(12)];
    Some(match git.dirty {
        Some(true) => format!("commit {c} (uncommitted changes)"),
        _ => format!("commit {c}"),
    })
}

/// `0.1.0, commit 1a2b3c4d5e6f (uncommitted changes)`.
fn serverbench(env: &Env) -> Option<String> {
    let version = env.serverbench_version.clone()?;
    Some(match commit(&env.git) {
        Some(c) => format!("{version}, {c}"),
        None => version,
    })
}

/// The rustc line: its version, or `not found` when it was absent (older runs recorded the
/// shell's `sh: 1: rustc: not found`); `None` when not recorded at all.
fn rustc(env: &Env) -> Option<String> {
    let recorded = env.toolchains.get("rustc")?;
    Some(match recorded.as_deref() {
        Some(v) if !(v.starts_with("sh: ") && v.ends_with("not found")) => v.to_owned(),
        _ => "not found".to_owned(),
    })
}

/// A JSON scalar as text (`"2s"` → `2s`, `2.0` → `2s`).
fn warmup(v: &Warmup) -> String {
    v.to_string()
}

/// The configuration lines a report shows above its tables, as (label, value) pairs, in a fixed
/// order; settings that are absent are left out.
pub fn config_lines(env: Option<&Env>) -> Vec<(&'static str, String)> {
    let Some(env) = env else {
        return Vec::new();
    };
    let suite = env.suite.as_ref();
    let m = &env.machine;
    let lines: [(&'static str, Option<String>); 17] = [
        ("Suite", suite.map(|s| s.name.clone())),
        ("Reproduces", suite.and_then(|s| s.reproduces.clone())),
        ("Baseline", env.baseline().map(str::to_owned)),
        ("CPU", m.cpu_model.clone()),
        ("Cores", m.cpus_available.map(|n| n.to_string())),
        ("Kernel", m.kernel.clone()),
        ("OS", m.os.clone()),
        ("Governor", m.governor.clone()),
        ("Pinning", env.pinning.as_ref().map(pinning)),
        ("Hosts", env.hosts.as_ref().map(hosts)),
        ("Load tool", env.load_tool.clone()),
        ("Laps", suite.and_then(|s| s.laps).map(|n| n.to_string())),
        ("Warm-up", suite.and_then(|s| s.warmup.as_ref()).map(warmup)),
        ("serverbench", serverbench(env)),
        ("Catalog", env.catalog_git.as_ref().and_then(commit)),
        ("Started", env.started_at.clone()),
        ("rustc", rustc(env)),
    ];
    lines
        .into_iter()
        .filter_map(|(label, v)| Some((label, v.filter(|s| !s.is_empty())?)))
        .collect()
}

/// The servers of `summary` with the one-line version `env.json` gives each, sorted by name;
/// servers without a version are left out. Reports show them in the configuration block, not
/// in the ranking (`--wide` puts them in the tables too).
pub fn versions(env: Option<&Env>, summary: &Summary) -> Vec<(String, String)> {
    let Some(env) = env else {
        return Vec::new();
    };
    let mut servers: Vec<&str> = summary
        .tables
        .iter()
        .flat_map(|t| t.servers.iter().map(|s| s.server.as_str()))
        .collect();
    servers.sort_unstable();
    servers.dedup();
    servers
        .into_iter()
        .filter_map(|s| Some((s.to_owned(), env.server_version(s)?.to_owned())))
        .collect()
}

/// The configuration lines and the server versions as aligned `label: value` text, each line
/// starting with `indent` (empty when env.json has none of the keys), a value too long for 120
/// columns wrapped under itself (a server's version string can be a sentence). Shared by the
/// terminal and Markdown exporters.
pub fn config_block(env: Option<&Env>, versions: &[(String, String)], indent: &str) -> String {
    let config = config_lines(env);
    let versions_label = (!versions.is_empty()).then_some("Versions");
    let labels = config.iter().map(|(l, _)| *l).chain(versions_label);
    let width = labels.map(str::len).max().unwrap_or(0) + 1;
    let mut out: String = config
        .iter()
        .map(|(label, value)| {
            let label = format!("{indent}{:<width$} ", format!("{label}:"));
            hang(&label, value)
        })
        .collect();
    let name_width = versions.iter().map(|(s, _)| s.chars().count()).max();
    for (i, (server, version)) in versions.iter().enumerate() {
        let label = if i == 0 { "Versions:" } else { "" };
        let name_width = name_width.unwrap_or(0);
        let lead = format!("{indent}{label:<width$} {server:<name_width$}  ");
        out.push_str(&hang(&lead, version));
    }
    out
}

/// The columns every line of the configuration block fits.
const BLOCK_WIDTH: usize = 120;

/// `lead` then `value` wrapped to [`BLOCK_WIDTH`], continuation lines aligned under the value.
fn hang(lead: &str, value: &str) -> String {
    let pad = lead.chars().count();
    let room = BLOCK_WIDTH.saturating_sub(pad).max(20);
    let mut out = String::new();
    for (i, line) in textwrap::wrap(value, room).iter().enumerate() {
        match i {
            0 => out.push_str(lead),
            _ => out.push_str(&" ".repeat(pad)),
        }
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out = format!("{}\n", lead.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_server_version_is_wrapped_under_itself_within_120_columns() {
        let version = "node v20.20.2, uwebsockets-express 2.0.4, express 5.3.0, uwebsockets \
                       (uWebSockets.js republish) 20.52.0, ts-chan 0.5.0 and µWS built from source";
        let versions = vec![
            ("node/uwebsockets-express".to_string(), version.to_string()),
            ("c/nginx".to_string(), "nginx/1.22.1".to_string()),
        ];
        let block = config_block(None, &versions, "  ");
        for l in block.lines() {
            assert!(l.chars().count() <= 120, "{l}");
        }
        let flat = block.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("and µWS built from source"), "{block}");
        assert!(block.lines().count() >= 3, "{block}");
    }
    use serverbench_results::env::{ServerVersion, SuiteRecord};

    #[test]
    fn versions_are_one_line_or_a_dash() {
        let mut env = Env::default();
        env.servers.insert(
            "a".into(),
            ServerVersion {
                available: true,
                version: Some("1.2\nmore".into()),
                ..ServerVersion::default()
            },
        );
        assert_eq!(server_version(Some(&env), "a"), "1.2");
        assert_eq!(server_version(Some(&env), "e"), "-");
        assert_eq!(server_version(None, "a"), "-");
    }

    #[test]
    fn the_configuration_reads_as_sentences_and_skips_what_is_missing() {
        let env = Env {
            serverbench_version: Some("0.1.0".into()),
            suite: Some(SuiteRecord {
                name: "quick".into(),
                warmup: Some(Warmup::Text("500ms".into())),
                ..SuiteRecord::default()
            }),
            pinning: Some(Pinning {
                server_cpus: vec![0],
                client_cpus: vec![1],
                workers: 1,
                how: "default".into(),
            }),
            ..Env::default()
        };
        let lines = config_lines(Some(&env));
        assert_eq!(
            lines,
            vec![
                ("Suite", "quick".to_owned()),
                (
                    "Pinning",
                    "server on CPU 0 (WORKERS=1), client on CPU 1".to_owned()
                ),
                ("Warm-up", "500ms".to_owned()),
                ("serverbench", "0.1.0".to_owned()),
            ]
        );
    }

    #[test]
    fn a_missing_rustc_reads_not_found_and_the_catalog_has_its_own_commit() {
        let git = |c: char, dirty| Git {
            commit: Some(c.to_string().repeat(40)),
            dirty: Some(dirty),
        };
        let mut env = Env {
            serverbench_version: Some("0.2.0".into()),
            git: git('a', false),
            catalog_git: Some(git('b', true)),
            toolchains: [("rustc".to_owned(), None)].into(),
            ..Env::default()
        };
        let line = |env: &Env, label: &str| {
            let lines = config_lines(Some(env));
            lines.into_iter().find(|(l, _)| *l == label).map(|(_, v)| v)
        };
        assert_eq!(
            line(&env, "serverbench").unwrap(),
            "0.2.0, commit aaaaaaaaaaaa"
        );
        assert_eq!(
            line(&env, "Catalog").unwrap(),
            "commit bbbbbbbbbbbb (uncommitted changes)"
        );
        assert_eq!(line(&env, "rustc").unwrap(), "not found");
        // What older runs recorded when rustc was absent.
        env.toolchains = [("rustc".to_owned(), Some("sh: 1: rustc: not found".into()))].into();
        assert_eq!(line(&env, "rustc").unwrap(), "not found");
    }

    #[test]
    fn the_hosts_line_names_the_database_host_when_it_has_its_own() {
        use serverbench_results::env::HostEnv;
        let host = |name: &str, address: &str| HostEnv {
            name: name.into(),
            address: address.into(),
            cpus: 2,
            ..HostEnv::default()
        };
        let mut h = HostsEnv {
            server: host("app", "10.0.0.2"),
            clients: vec![host("load", "10.0.0.3")],
            ..HostsEnv::default()
        };
        assert_eq!(
            hosts(&h),
            "servers on app (10.0.0.2, 2 CPUs), load from load (2 CPUs)"
        );
        h.database = Some(host("pg", "10.0.0.4"));
        assert!(
            hosts(&h).ends_with("load from load (2 CPUs), database on pg (10.0.0.4, 2 CPUs)"),
            "{}",
            hosts(&h)
        );
    }

    #[test]
    fn cpu_lists_are_short() {
        assert_eq!(cpus(&[0, 1, 2, 3]), "CPUs 0-3");
        assert_eq!(cpus(&[0, 2]), "CPUs 0, 2");
        assert_eq!(cpus(&[]), "any CPU");
    }
}
