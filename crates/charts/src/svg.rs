//! A few helpers to write SVG text: escaping, numbers, and the shared look.

use std::fmt::Write;

/// Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008, "Color Universal Design").
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// Font size of labels, in px; [`CHAR_WIDTH`] approximates one character's advance at that size.
pub const FONT_SIZE: f64 = 12.0;
pub const CHAR_WIDTH: f64 = 6.8;
pub const TITLE_HEIGHT: f64 = 28.0;
pub const WIDTH: f64 = 760.0;

/// Escapes text for use in SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Formats a coordinate with at most one decimal, so snapshots stay stable and files small.
pub fn px(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Opens an `<svg>` document with the shared style and a title.
pub fn open(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}" font-family="sans-serif" font-size="{fs}">"#,
        w = px(width),
        h = px(height),
        t = escape(title),
        fs = FONT_SIZE
    );
    let _ = write!(
        out,
        r##"<title>{t}</title><rect width="100%" height="100%" fill="#ffffff"/><text x="{x}" y="18" font-size="14" font-weight="bold">{t}</text>"##,
        t = escape(title),
        x = 8
    );
}

/// Writes a text element; `anchor` is `start`, `middle` or `end`.
pub fn text(out: &mut String, x: f64, y: f64, anchor: &str, fill: &str, content: &str) {
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="{anchor}" fill="{fill}">{}</text>"#,
        px(x),
        px(y),
        escape(content)
    );
}

/// Writes a line segment.
pub fn line(
    out: &mut String,
    (x1, y1): (f64, f64),
    (x2, y2): (f64, f64),
    stroke: &str,
    width: f64,
) {
    let _ = write!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"/>"#,
        px(x1),
        px(y1),
        px(x2),
        px(y2),
        px(width)
    );
}

/// Writes a note saying there is nothing to draw, centred in the plot.
pub fn empty_note(out: &mut String, width: f64, height: f64) {
    text(
        out,
        width / 2.0,
        height / 2.0,
        "middle",
        "#666666",
        "no data",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_makes_markup_characters_inert() {
        assert_eq!(escape(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn px_keeps_at_most_one_decimal() {
        assert_eq!(px(1.0), "1");
        assert_eq!(px(1.26), "1.3");
        assert_eq!(px(-0.04), "0");
    }
}
