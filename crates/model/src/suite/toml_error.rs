//! A suite's TOML errors as `SuiteError::Invalid`: the line and the key, a flattened key's own
//! line, and which `[[scenario]]` or `[[profile]]` the key is in.

use super::SuiteError;
use crate::toml_pos::{array_table_at, field_in_message, line_of};
use std::path::Path;

/// Turns a toml error into `SuiteError::Invalid` with the line and the key.
pub(super) fn invalid(text: &str, file: &Path, err: &toml::de::Error) -> SuiteError {
    let message = err.message().trim().to_string();
    let span = err.span().unwrap_or(0..0);
    let (line, key) = flattened_value(text, span.clone(), &message).unwrap_or_else(|| {
        let line = line_of(text, span.start);
        let key = field_in_message(&message).unwrap_or_else(|| {
            let line_text = text.lines().nth(line - 1).unwrap_or("");
            line_text
                .split('=')
                .next()
                .unwrap_or("?")
                .trim()
                .to_string()
        });
        (line, key)
    });
    // A key of a [[scenario]] or [[profile]] says which one (`scenario[2].body_size`).
    let key = match array_table_at(text, line) {
        Some(table) if !key.contains(['.', '[']) => format!("{table}.{key}"),
        _ => key,
    };
    SuiteError::Invalid {
        file: file.to_path_buf(),
        line,
        key,
        message,
    }
}

/// A bad value of a flattened key (a scenario's work and transport) comes with the span of its
/// whole table: the line and key of the value the message quotes (`unknown variant `h3``,
/// `` `20MB..500KB`: the range is backwards``, `invalid type: string "x"`), if one line of that
/// table sets it.
fn flattened_value(
    text: &str,
    span: std::ops::Range<usize>,
    message: &str,
) -> Option<(usize, String)> {
    let value = quoted_value(message)?;
    let table = text.get(span.clone())?;
    let mut offset = span.start;
    for line in table.split_inclusive('\n') {
        if let Some((key, v)) = line.split_once('=') {
            if v.trim().trim_matches('"') == value {
                return Some((line_of(text, offset), key.trim().to_string()));
            }
        }
        offset += line.len();
    }
    None
}

/// The value a serde message quotes first, if it starts with one.
fn quoted_value(message: &str) -> Option<&str> {
    let (rest, end) = [
        ("unknown variant `", '`'),
        ("`", '`'),
        ("invalid type: string \"", '"'),
        ("invalid type: integer `", '`'),
        ("invalid type: boolean `", '`'),
    ]
    .into_iter()
    .find_map(|(prefix, end)| Some((message.strip_prefix(prefix)?, end)))?;
    rest.split(end).next()
}
