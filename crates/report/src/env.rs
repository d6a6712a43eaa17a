//! Reading the free-form `env.json` defensively: another part of serverbench writes it and its
//! shape may grow, so every key is optional and looked up in a few likely places.

use serde_json::Value;

/// The first value found at any of `paths` (each a list of object keys), skipping nulls.
fn lookup<'a>(env: &'a Value, paths: &[&[&str]]) -> Option<&'a Value> {
    paths.iter().find_map(|path| {
        let v = path.iter().try_fold(env, |v, k| v.get(*k))?;
        (!v.is_null()).then_some(v)
    })
}

/// A value as one line of text: strings as they are, arrays joined with `, `, objects as
/// `key=value` pairs (keys sorted), nested values as compact JSON.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.lines().next().unwrap_or("").trim().to_owned(),
        Value::Array(a) => a.iter().map(show).collect::<Vec<_>>().join(", "),
        Value::Object(o) => o
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::Object(_) | Value::Array(_) => format!("{k}={v}"),
                _ => format!("{k}={}", show(v)),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// The version of `server`: `env.servers[id].version`, then `.framework_version`,
/// then `env.servers[id]` itself when it is a string, then `env.versions[id]`; `-` otherwise.
pub fn server_version(env: Option<&Value>, server: &str) -> String {
    let found = env.and_then(|env| {
        lookup(
            env,
            &[
                &["servers", server, "version"],
                &["servers", server, "framework_version"],
                &["versions", server],
            ],
        )
        .or_else(|| env.get("servers")?.get(server).filter(|v| v.is_string()))
    });
    match found.map(show) {
        Some(s) if !s.is_empty() => s,
        _ => "-".to_owned(),
    }
}

/// The suite's baseline server, if env.json names one (`suite.baseline` or `baseline`).
pub fn suite_baseline(env: Option<&Value>) -> Option<String> {
    let v = lookup(env?, &[&["suite", "baseline"], &["baseline"]])?;
    v.as_str().map(str::to_owned)
}

/// The configuration lines a report shows above its tables, as (label, value) pairs, in a fixed
/// order; keys that are absent are left out.
pub fn config_lines(env: Option<&Value>) -> Vec<(&'static str, String)> {
    let Some(env) = env else {
        return Vec::new();
    };
    let wanted: [(&'static str, &[&[&str]]); 16] = [
        ("Suite", &[&["suite", "name"], &["suite"]]),
        ("Reproduces", &[&["suite", "reproduces"]]),
        ("Baseline", &[&["suite", "baseline"], &["baseline"]]),
        (
            "CPU Model",
            &[&["machine", "cpu_model"], &["cpu_model"], &["cpu", "model"]],
        ),
        (
            "Cores",
            &[
                &["machine", "cpus_available"],
                &["machine", "cores"],
                &["cores"],
            ],
        ),
        ("Kernel", &[&["machine", "kernel"], &["kernel"]]),
        ("OS", &[&["machine", "os"], &["os"]]),
        ("Governor", &[&["machine", "governor"], &["governor"]]),
        ("Pinning", &[&["pinning"], &["cpus"]]),
        ("Tool", &[&["load_tool"], &["suite", "tool"], &["tool"]]),
        (
            "Laps",
            &[&["suite", "laps"], &["params", "laps"], &["laps"]],
        ),
        (
            "Warm-up (s)",
            &[&["suite", "warmup"], &["params", "warmup_s"]],
        ),
        ("Parameters", &[&["params"], &["parameters"]]),
        (
            "serverbench",
            &[&["serverbench_version"], &["serverbench", "version"]],
        ),
        (
            "Commit",
            &[&["git"], &["serverbench", "commit"], &["commit"]],
        ),
        ("rustc", &[&["toolchains", "rustc"]]),
    ];
    let mut lines: Vec<(&'static str, String)> = wanted
        .iter()
        .filter_map(|(label, paths)| {
            let v = lookup(env, paths)?;
            let text = match (*label, v) {
                ("Suite", Value::Object(_)) => return None,
                _ => show(v),
            };
            (!text.is_empty()).then_some((*label, text))
        })
        .collect();
    if let Some(start) = lookup(env, &[&["started_at"], &["date"]]) {
        lines.push(("Started", show(start)));
    }
    lines
}

/// The configuration lines as aligned `label: value` text, each line starting with `indent`
/// (empty when env.json has none of the keys). Shared by the terminal and Markdown exporters.
pub fn config_block(env: Option<&Value>, indent: &str) -> String {
    let config = config_lines(env);
    let width = config.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 1;
    config
        .iter()
        .map(|(label, value)| {
            let label = format!("{label}:");
            format!("{indent}{label:<width$} {value}\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_come_from_the_servers_map_or_fall_back_to_a_dash() {
        let env = json!({"servers": {"a": {"version": "1.2\nmore"}, "b": {"framework_version": "go1.26"},
                                     "c": "3.0"}, "versions": {"d": "4"}});
        assert_eq!(server_version(Some(&env), "a"), "1.2");
        assert_eq!(server_version(Some(&env), "b"), "go1.26");
        assert_eq!(server_version(Some(&env), "c"), "3.0");
        assert_eq!(server_version(Some(&env), "d"), "4");
        assert_eq!(server_version(Some(&env), "e"), "-");
        assert_eq!(server_version(None, "a"), "-");
    }

    #[test]
    fn config_lines_skip_missing_and_null_keys() {
        let env = json!({"suite": "quick", "kernel": "6.1", "governor": null,
                         "pinning": {"server_cpus": "0", "client_cpus": "1"}});
        let lines = config_lines(Some(&env));
        assert_eq!(
            lines,
            vec![
                ("Suite", "quick".to_owned()),
                ("Kernel", "6.1".to_owned()),
                ("Pinning", "client_cpus=1, server_cpus=0".to_owned()),
            ]
        );
    }

    #[test]
    fn the_suite_baseline_is_read_from_either_place() {
        assert_eq!(
            suite_baseline(Some(&json!({"suite": {"baseline": "x"}}))),
            Some("x".into())
        );
        assert_eq!(
            suite_baseline(Some(&json!({"baseline": "y"}))),
            Some("y".into())
        );
        assert_eq!(suite_baseline(Some(&json!({}))), None);
    }
}
