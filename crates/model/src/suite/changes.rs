//! What differs between the suite a results folder was started with and the one a `--resume`
//! would run: resuming with other settings would pool laps that are not comparable.

use super::Suite;

impl Suite {
    /// One line per top-level setting that differs (`laps: 3 -> 5`), in the suite's key order;
    /// empty when the two would run the same laps.
    pub fn changes_from(&self, recorded: &Suite) -> Vec<String> {
        let (Ok(serde_json::Value::Object(new)), Ok(serde_json::Value::Object(old))) =
            (serde_json::to_value(self), serde_json::to_value(recorded))
        else {
            return vec!["the suite cannot be compared".into()];
        };
        new.iter()
            .filter(|(key, _)| key.as_str() != "description")
            .filter_map(|(key, v)| {
                let before = old.get(key).unwrap_or(&serde_json::Value::Null);
                (before != v).then(|| format!("{key}: {} -> {}", short(before), short(v)))
            })
            .collect()
    }
}

/// A value in at most 60 characters.
fn short(v: &serde_json::Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::Suite;

    const SUITE: &str = r#"
name = "s"
description = "d"
reproduces = "none"
servers = ["node/http"]
laps = 3
[[scenario]]
name = "hello"
paths = ["/hello"]
[[profile]]
connections = 10
duration = "2s"
"#;

    fn suite(text: &str) -> Suite {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        std::fs::write(&p, text).unwrap();
        Suite::load(&p).unwrap()
    }

    #[test]
    fn the_same_suite_has_no_changes() {
        assert!(suite(SUITE).changes_from(&suite(SUITE)).is_empty());
    }

    #[test]
    fn changed_laps_and_duration_are_named_with_both_values() {
        let new = suite(
            &SUITE
                .replace("laps = 3", "laps = 5")
                .replace("\"2s\"", "\"5s\""),
        );
        let changes = new.changes_from(&suite(SUITE));
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(changes[0].starts_with("laps: 3 -> 5"), "{changes:?}");
        assert!(changes[1].starts_with("profile: "), "{changes:?}");
    }
}
