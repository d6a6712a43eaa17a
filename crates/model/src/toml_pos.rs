//! Where things stand in TOML text, for errors that name a line: the line of a key from
//! toml_edit's spans, the line of a byte offset (`toml::de::Error::span`), and the field a serde
//! message names. Shared by manifests (`server.toml`) and suites (`suites/*.toml`).

use toml_edit::{ImDocument, Item, TableLike};

/// 1-based line number of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

/// The line where `key` is set, 1 when it is not (or the text is not TOML). A key is a path of
/// dotted names, each maybe indexed from 1 into an array of tables: `name`, `commands.run`,
/// `scenario[2].paths`, or `profile[1]` for the header of the first `[[profile]]`.
pub fn line_of_key(text: &str, key: &str) -> usize {
    start_of_key(text, key).map_or(1, |start| line_of(text, start))
}

fn start_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let mut table: &dyn TableLike = doc.as_table();
    let mut start = None;
    let mut names = key.split('.').peekable();
    while let Some(name) = names.next() {
        let (name, index) = match name.split_once('[') {
            Some((name, rest)) => (
                name,
                Some(rest.trim_end_matches(']').parse::<usize>().ok()?),
            ),
            None => (name, None),
        };
        let (k, item) = table.get_key_value(name)?;
        let item = match (index, item) {
            (Some(i), Item::ArrayOfTables(tables)) => {
                let t = tables.get(i.checked_sub(1)?)?;
                start = t.span().map(|s| s.start);
                table = t;
                continue;
            }
            (Some(_), _) => return None,
            (None, item) => item,
        };
        start = k.span().map(|s| s.start);
        if names.peek().is_some() {
            table = item.as_table_like()?;
        }
    }
    start
}

/// The field an `unknown field` or `missing field` message from serde names between backticks.
pub fn field_in_message(message: &str) -> Option<String> {
    if !(message.starts_with("unknown field") || message.starts_with("missing field")) {
        return None;
    }
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// The `[[array]]` table a line of `text` (1-based) belongs to, as keys name it: `scenario[2]`
/// for a line after the second `[[scenario]]` header; `None` at the top or in a plain `[table]`.
pub fn array_table_at(text: &str, line: usize) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut current = None;
    for l in text.lines().take(line) {
        let l = l.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split_once("]]")) {
            let name = name.0.trim().to_string();
            let n = match counts.iter_mut().find(|(k, _)| *k == name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    counts.push((name.clone(), 1));
                    1
                }
            };
            current = Some(format!("{name}[{n}]"));
        } else if l.starts_with('[') {
            current = None;
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = "name = \"t\"\n\
                         [[scenario]]\nname = \"a\"\n\
                         [[scenario]]\nname = \"b\"\npaths = [\"/\"]\n\
                         [commands]\nrun = \"x\"\n";

    #[test]
    fn keys_are_found_at_the_top_in_tables_and_in_arrays_of_tables() {
        assert_eq!(line_of_key(SUITE, "name"), 1);
        assert_eq!(line_of_key(SUITE, "scenario[2]"), 4);
        assert_eq!(line_of_key(SUITE, "scenario[2].paths"), 6);
        assert_eq!(line_of_key(SUITE, "commands.run"), 8);
    }

    #[test]
    fn dotted_and_inline_keys_are_found_too() {
        assert_eq!(
            line_of_key("a = 1\ncommands.run = \"x\"\n", "commands.run"),
            2
        );
        assert_eq!(
            line_of_key("a = 1\n\ncommands = { run = \"x\" }\n", "commands.run"),
            3
        );
    }

    #[test]
    fn a_key_that_is_not_there_is_on_line_1() {
        assert_eq!(line_of_key(SUITE, "scenario[3].paths"), 1);
        assert_eq!(line_of_key(SUITE, "scenario[1].paths"), 1);
        assert_eq!(line_of_key(SUITE, "requires.lockfiles"), 1);
        assert_eq!(line_of_key("not = = toml", "not"), 1);
    }

    #[test]
    fn a_line_is_placed_in_its_array_of_tables_counted_from_1() {
        assert_eq!(array_table_at(SUITE, 1), None);
        assert_eq!(array_table_at(SUITE, 3).as_deref(), Some("scenario[1]"));
        assert_eq!(array_table_at(SUITE, 6).as_deref(), Some("scenario[2]"));
        assert_eq!(array_table_at(SUITE, 8), None);
    }

    #[test]
    fn serde_messages_name_their_field() {
        let m = "unknown field `conections`, expected one of `name`, `connections`";
        assert_eq!(field_in_message(m).as_deref(), Some("conections"));
        assert_eq!(field_in_message("invalid type: string `x`"), None);
    }
}
