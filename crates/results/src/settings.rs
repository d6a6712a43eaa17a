//! The settings of a lap and of a run as canonical JSON text: what the history hashes to tell
//! equal settings apart. The keys come in the order records and suites had before a lap's
//! parameters and a suite's scenario shared their types (issue 40), so a lap's settings hash is
//! the one an older serverbench wrote for the same settings; keys added since come after them,
//! in their own order.

use crate::env::SuiteRecord;
use crate::record::LoadParams;

/// A lap record's parameter keys, in their canonical order.
const PARAMS: [&str; 26] = [
    "mode",
    "paths",
    "connections",
    "threads",
    "duration_s",
    "requests",
    "pipeline",
    "rate",
    "warmup_s",
    "message",
    "size",
    "binary",
    "reconnect_every",
    "server_cpus",
    "protocol",
    "tls",
    "new_conn",
    "tls_resume",
    "streams",
    "pool",
    "find_max",
    "mix",
    "method",
    "body",
    "body_size",
    "chunked",
];

/// A suite scenario's keys, in their canonical order.
const SCENARIO: [&str; 20] = [
    "name",
    "mode",
    "paths",
    "message",
    "size",
    "binary",
    "reconnect_every",
    "requires",
    "protocol",
    "tls",
    "new_conn",
    "tls_resume",
    "streams",
    "connections",
    "mix",
    "method",
    "body",
    "body_size",
    "chunked",
    "chunk_size",
];

impl LoadParams {
    /// The parameters as canonical JSON: one line, the keys in the order records had before
    /// issue 40 (the settings hash of older laps), then newer keys.
    pub fn settings_json(&self) -> String {
        let json = serde_json::to_string(self).expect("lap parameters always serialize");
        reorder(&json, &PARAMS)
    }
}

impl SuiteRecord {
    /// The suite as canonical JSON: one line, each scenario's keys in the order suites had in
    /// `env.json` before issue 40, then newer keys.
    pub fn settings_json(&self) -> String {
        let json = serde_json::to_string(self).expect("a suite always serializes");
        let fields = object_fields(&json)
            .into_iter()
            .map(|(key, value)| match key {
                "\"scenario\"" => {
                    let scenarios: Vec<String> = array_items(value)
                        .into_iter()
                        .map(|s| reorder(s, &SCENARIO))
                        .collect();
                    (key, format!("[{}]", scenarios.join(",")))
                }
                _ => (key, value.to_string()),
            });
        join(fields)
    }
}

/// A compact JSON object with the keys of `order` first, in that order, then the others as
/// they came.
fn reorder(json: &str, order: &[&str]) -> String {
    let mut fields = object_fields(json);
    let rank = |key: &str| {
        let bare = key.trim_matches('"');
        order.iter().position(|k| *k == bare).unwrap_or(order.len())
    };
    fields.sort_by_key(|(key, _)| rank(key));
    join(fields.into_iter().map(|(k, v)| (k, v.to_string())))
}

fn join<'a>(fields: impl Iterator<Item = (&'a str, String)>) -> String {
    let parts: Vec<String> = fields.map(|(k, v)| format!("{k}:{v}")).collect();
    format!("{{{}}}", parts.join(","))
}

/// The top-level `"key"` and value texts of a compact JSON object (serde_json's output).
fn object_fields(json: &str) -> Vec<(&str, &str)> {
    let inner = json
        .strip_prefix('{')
        .and_then(|j| j.strip_suffix('}'))
        .unwrap_or("");
    top_level(inner)
        .into_iter()
        .filter_map(|field| {
            let colon = top_level_colon(field)?;
            Some((&field[..colon], &field[colon + 1..]))
        })
        .collect()
}

/// The items of a compact JSON array.
fn array_items(json: &str) -> Vec<&str> {
    let inner = json
        .strip_prefix('[')
        .and_then(|j| j.strip_suffix(']'))
        .unwrap_or("");
    top_level(inner)
}

/// `text` split at its commas outside strings, objects and arrays.
fn top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ if in_string => {}
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The colon after a field's key (the key being a string, possibly with escapes).
fn top_level_colon(field: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in field.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return field[i + 1..].starts_with(':').then_some(i + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::{Mode, Protocol, Transport};

    #[test]
    fn keys_come_in_the_canonical_order_and_nested_values_keep_theirs() {
        let json = r#"{"b":{"z":1,"a":[1,{"q":"x,}"}]},"a":"s\"{","c":null}"#;
        assert_eq!(
            reorder(json, &["a", "b"]),
            r#"{"a":"s\"{","b":{"z":1,"a":[1,{"q":"x,}"}]},"c":null}"#
        );
    }

    #[test]
    fn lap_parameters_read_back_the_same_and_their_settings_keep_the_old_key_order() {
        let old = r#"{"mode":"http","paths":["/hello"],"connections":8,"threads":1,"duration_s":0.5,"requests":null,"pipeline":1,"rate":null,"warmup_s":0.2,"message":null,"size":null,"protocol":"h2","tls":true,"streams":4}"#;
        let p: LoadParams = serde_json::from_str(old).unwrap();
        assert_eq!(p.work.mode, Mode::Http);
        assert_eq!(
            p.transport,
            Transport {
                protocol: Protocol::H2,
                tls: true,
                streams: Some(4),
                ..Transport::default()
            }
        );
        assert_eq!(p.settings_json(), old);
    }

    #[test]
    fn a_suites_scenarios_keep_their_old_key_order_in_its_settings() {
        let text = "name = \"t\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\
                    [[scenario]]\nname = \"h2\"\nrequires = \"hello\"\nprotocol = \"h2\"\n\
                    paths = [\"/hello\"]\n[[profile]]\nconnections = 8\nduration = \"1s\"\n";
        let suite = serverbench_model::suite::Suite::parse(text, "t.toml".as_ref()).unwrap();
        let json = SuiteRecord::from(&suite).settings_json();
        let scenario = r#""scenario":[{"name":"h2","mode":"http","paths":["/hello"],"message":null,"size":null,"requires":["hello"],"protocol":"h2","tls":true}]"#;
        assert!(json.contains(scenario), "{json}");
        assert!(
            json.starts_with(r#"{"name":"t","description":"d""#),
            "{json}"
        );
    }
}
