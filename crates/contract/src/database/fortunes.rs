//! `/fortunes`: the page parsed, not compared byte for byte. Whitespace between tags and the
//! spelling of an escape may differ (`&quot;`, `&#34;`, `&#x22;`, `'` escaped or not); the rows
//! may not: every row of the `fortune` table plus the one added at request time, sorted by
//! message, each exactly as in the table once its entities are decoded. A `<script>` tag left
//! unescaped fails the page.

use crate::diff::{quote, Diff};
use crate::http::{get, Dial, Response};
use crate::Check;
use std::net::SocketAddr;

/// The fortune every request adds before sorting.
pub const ADDED: &str = "Additional fortune added at request time.";

/// `GET /fortunes` compared with the `fortune` table as verify read it.
pub fn check(addr: SocketAddr, table: &[(i32, String)]) -> Check {
    let name = "GET /fortunes: the table's rows and one more, sorted, escaped";
    let diffs = match get(Dial::tcp(addr), "/fortunes") {
        Ok(r) => compare(&r, table),
        Err(e) => vec![Diff::error("response", "200 /fortunes", &e)],
    };
    Check::new(name, diffs)
}

/// The rows a correct page has: the table, the added fortune, sorted by message (byte order).
pub fn expected(table: &[(i32, String)]) -> Vec<(i32, String)> {
    let mut rows = table.to_vec();
    rows.push((0, ADDED.to_owned()));
    rows.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    rows
}

/// A response compared with the page the table gives.
pub fn compare(r: &Response, table: &[(i32, String)]) -> Vec<Diff> {
    let mut diffs = Vec::new();
    if r.status != 200 {
        diffs.push(Diff::new("status", "200", r.status.to_string()));
    }
    let ctype = r.header("content-type").unwrap_or("no Content-Type header");
    if !is_html_utf8(ctype) {
        diffs.push(Diff::new("Content-Type", "text/html; charset=utf-8", ctype));
    }
    let Ok(page) = std::str::from_utf8(&r.body) else {
        diffs.push(Diff::new("body", "UTF-8 HTML", "bytes that are not UTF-8"));
        return diffs;
    };
    if let Some(at) = page.to_ascii_lowercase().find("<script") {
        diffs.push(Diff::new(
            "escaping",
            "<script> escaped as &lt;script&gt;",
            format!("an unescaped <script> at byte {at}"),
        ));
        return diffs;
    }
    match parse(page) {
        Ok(got) => diffs.extend(compare_rows(&expected(table), &got)),
        Err(e) => diffs.push(Diff::new(
            "table",
            "<table> of <tr><td>id</td><td>message</td>",
            e,
        )),
    }
    diffs
}

/// `text/html` with `charset=utf-8` (any case, quoted or not).
fn is_html_utf8(ctype: &str) -> bool {
    let mut parts = ctype.split(';').map(str::trim);
    let media = parts.next().unwrap_or("");
    media.eq_ignore_ascii_case("text/html")
        && parts.any(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("charset")
                    && v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
            })
        })
}

/// The data rows of the page's table (the `<th>` header row checked and left out).
pub fn parse(page: &str) -> Result<Vec<(i32, String)>, String> {
    let lower = page.to_ascii_lowercase();
    let starts: Vec<usize> = tag_starts(&lower, "<tr").collect();
    let Some(&first) = starts.first() else {
        return Err("no <tr> row".into());
    };
    let end = lower[first..]
        .find("</table")
        .map_or(page.len(), |i| first + i);
    let mut rows = Vec::new();
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(end).min(end);
        let cells = cells(&page[s..e], &lower[s..e])?;
        if i == 0 {
            if cells != ["id", "message"] {
                return Err(format!("header row {cells:?}, not [\"id\", \"message\"]"));
            }
            continue;
        }
        let [id, message] = <[String; 2]>::try_from(cells)
            .map_err(|c| format!("row {i} has {} cells, not 2: {c:?}", c.len()))?;
        let id = id
            .parse()
            .map_err(|_| format!("row {i}: id {id:?} is not an integer"))?;
        rows.push((id, message));
    }
    Ok(rows)
}

/// Where tags named `tag` (e.g. `<tr`) start, not mistaking `<track` for `<tr`.
fn tag_starts<'a>(lower: &'a str, tag: &'a str) -> impl Iterator<Item = usize> + 'a {
    lower.match_indices(tag).map(|(i, _)| i).filter(move |&i| {
        matches!(
            lower.as_bytes().get(i + tag.len()),
            Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
        )
    })
}

/// The decoded text of the `<td>` or `<th>` cells of one row.
fn cells(row: &str, lower: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut starts: Vec<usize> = tag_starts(lower, "<td")
        .chain(tag_starts(lower, "<th"))
        .collect();
    starts.sort_unstable();
    for s in starts {
        let open = lower[s..].find('>').ok_or("a cell tag that never closes")? + s + 1;
        let close = lower[open..].find("</t").map_or(row.len(), |i| open + i);
        let next = lower[open..].find('<').map_or(row.len(), |i| open + i);
        let raw = &row[open..close.min(next)];
        if next < close {
            let what = &row[next..(next + 20).min(row.len())];
            return Err(format!("markup inside a cell: {}", quote(what.as_bytes())));
        }
        out.push(decode(raw.trim()));
    }
    Ok(out)
}

/// Text with its character references decoded (`&lt;`, `&#34;`, `&#x27;`…); an unknown one is
/// kept as written.
pub fn decode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = rest.find(';').filter(|&j| j <= 10).and_then(|j| {
            let c = match &rest[1..j] {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                n => numeric(n),
            };
            c.map(|c| (c, j + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn numeric(n: &str) -> Option<char> {
    let n = n.strip_prefix('#')?;
    let code = match n.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => n.parse().ok()?,
    };
    char::from_u32(code)
}

/// The parsed rows against the expected ones: the added fortune, the set, then the order.
fn compare_rows(want: &[(i32, String)], got: &[(i32, String)]) -> Vec<Diff> {
    let show = |r: &(i32, String)| format!("{} {:?}", r.0, r.1);
    if !got.iter().any(|r| r.0 == 0 && r.1 == ADDED) {
        return vec![Diff::new(
            "added fortune",
            format!("0 {ADDED:?}"),
            "missing",
        )];
    }
    let mut sorted_got = got.to_vec();
    sorted_got.sort();
    let mut sorted_want = want.to_vec();
    sorted_want.sort();
    if sorted_got != sorted_want {
        let missing = sorted_want.iter().find(|r| !sorted_got.contains(r));
        let extra = sorted_got.iter().find(|r| !sorted_want.contains(r));
        return vec![Diff::new(
            format!("rows ({} expected, {} found)", want.len(), got.len()),
            missing.map_or("no other row".into(), |r| format!("the row {}", show(r))),
            extra.map_or("not there".into(), |r| format!("the row {}", show(r))),
        )];
    }
    match want.iter().zip(got).position(|(w, g)| w != g) {
        None => Vec::new(),
        Some(i) => vec![Diff::new(
            format!("order (sorted by message), row {}", i + 1),
            show(&want[i]),
            show(&got[i]),
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<(i32, String)> {
        vec![
            (1, "fortune: No such file or directory".into()),
            (
                2,
                "A computer scientist is someone who fixes things that aren't broken.".into(),
            ),
            (
                11,
                "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"
                    .into(),
            ),
            (12, "フレームワークのベンチマーク".into()),
        ]
    }

    fn escape(s: &str) -> String {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&#34;")
            .replace('\'', "&#x27;")
    }

    fn page(rows: &[(i32, String)], esc: fn(&str) -> String) -> String {
        let mut p = String::from("<!DOCTYPE html>\n<html><head><title>Fortunes</title></head><body><table>\n<tr><th>id</th><th>message</th></tr>\n");
        for (id, m) in rows {
            p.push_str(&format!(
                "<tr>\n  <td>{id}</td>\n  <td>{}</td>\n</tr>\n",
                esc(m)
            ));
        }
        p + "</table></body></html>"
    }

    fn resp(ctype: &str, body: String) -> Response {
        Response {
            version: "HTTP/1.1".into(),
            status: 200,
            headers: vec![("Content-Type".into(), ctype.into())],
            body: body.into_bytes(),
            close_delimited: false,
        }
    }

    #[test]
    fn a_correct_page_with_any_escape_spelling_and_whitespace_passes() {
        let r = resp(
            "text/html; charset=UTF-8",
            page(&expected(&table()), escape),
        );
        assert_eq!(compare(&r, &table()), vec![]);
    }

    #[test]
    fn an_unescaped_script_fails_the_page() {
        let r = resp(
            "text/html; charset=utf-8",
            page(&expected(&table()), |s| s.to_owned()),
        );
        assert_eq!(compare(&r, &table())[0].what, "escaping");
    }

    #[test]
    fn without_the_charset_the_content_type_is_wrong() {
        let r = resp("text/html", page(&expected(&table()), escape));
        assert_eq!(compare(&r, &table())[0].what, "Content-Type");
    }

    #[test]
    fn rows_out_of_order_are_named() {
        let mut rows = expected(&table());
        rows.swap(0, 1);
        let d = compare(
            &resp("text/html;charset=utf-8", page(&rows, escape)),
            &table(),
        );
        assert_eq!(d[0].what, "order (sorted by message), row 1");
    }

    #[test]
    fn the_missing_added_fortune_is_named() {
        let d = compare(
            &resp("text/html;charset=utf-8", page(&table(), escape)),
            &table(),
        );
        assert_eq!(d[0].what, "added fortune");
    }

    #[test]
    fn a_mangled_message_is_shown() {
        let mut rows = expected(&table());
        rows[3].1 = "mojibake".into();
        let d = compare(
            &resp("text/html;charset=utf-8", page(&rows, escape)),
            &table(),
        );
        assert!(d[0].what.starts_with("rows"), "{d:?}");
        assert!(d[0].got.contains("mojibake"), "{d:?}");
    }

    #[test]
    fn entities_decode_named_decimal_and_hex_and_keep_unknown_ones() {
        assert_eq!(
            decode("&lt;a&gt; &quot;&#34;&#x22;&#X27;&apos; &amp;amp; &nbsp x&y"),
            "<a> \"\"\"'' &amp; &nbsp x&y"
        );
    }

    #[test]
    fn byte_order_puts_the_japanese_fortune_last() {
        let rows = expected(&table());
        assert_eq!(rows.last().unwrap().0, 12);
        assert_eq!(rows[0].0, 11, "'<' sorts before letters");
    }
}
