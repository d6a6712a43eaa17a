//! `--format junit`: JUnit XML as Jenkins, GitLab and GitHub test reporters read it (the Ant
//! schema of `testsuites` / `testsuite` / `testcase`): one test suite per testbed, one test case
//! per cell and measure, a `failure` on a regression; an inconclusive row passes with its reason
//! in `system-out`.

use super::{caveats, ratio_text, shift_text, value};
use crate::check::{CheckReport, Row, Status};
use std::collections::BTreeMap;
use std::fmt::Write;

/// XML-escapes text and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

fn detail(r: &Row) -> String {
    let base = r
        .baseline
        .as_ref()
        .map_or("-".into(), |b| value(r.measure, b.median));
    let mut text = format!(
        "latest {} (run {}), baseline {}, ratio {}, shift {}",
        value(r.measure, r.latest.median),
        r.latest.label,
        base,
        ratio_text(r),
        shift_text(r)
    );
    for c in caveats(r) {
        text.push_str("; ");
        text.push_str(&c);
    }
    text
}

/// The XML document.
pub fn render(report: &CheckReport) -> String {
    let mut by_testbed: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in &report.rows {
        by_testbed.entry(&r.series.testbed).or_default().push(r);
    }
    let failures = |rows: &[&Row]| {
        rows.iter()
            .filter(|r| r.status == Status::Regression)
            .count()
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ =
        writeln!(
        out,
        "<testsuites name=\"serverbench history check\" tests=\"{}\" failures=\"{}\" errors=\"0\">",
        report.rows.len(),
        report.rows.iter().filter(|r| r.status == Status::Regression).count()
    );
    for (testbed, rows) in &by_testbed {
        let _ = writeln!(
            out,
            "  <testsuite name=\"testbed {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
            esc(testbed),
            rows.len(),
            failures(rows)
        );
        for r in rows {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"",
                esc(&r.series.label()),
                r.measure
            );
            match r.status {
                Status::Regression => {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"regression beyond {:.1}%\" type=\"regression\">{}</failure>\n    </testcase>",
                        report.threshold * 100.0,
                        esc(&detail(r))
                    );
                }
                s => {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>{}: {}</system-out>\n    </testcase>",
                        s.label(),
                        esc(&detail(r))
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::fixture;

    /// The Ant JUnit schema (the one Jenkins' junit plugin publishes as junit-10.xsd), as the
    /// elements each element may hold and the attributes it must and may carry.
    fn schema(
        element: &str,
    ) -> Option<(
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    )> {
        Some(match element {
            "testsuites" => (
                &["testsuite"],
                &[],
                &["name", "tests", "failures", "errors", "time", "disabled"],
            ),
            "testsuite" => (
                &["properties", "testcase", "system-out", "system-err"],
                &["name", "tests"],
                &[
                    "failures",
                    "errors",
                    "skipped",
                    "time",
                    "timestamp",
                    "hostname",
                    "id",
                    "package",
                    "disabled",
                ],
            ),
            "testcase" => (
                &["skipped", "error", "failure", "system-out", "system-err"],
                &["name"],
                &["classname", "time", "assertions", "status"],
            ),
            "failure" | "error" => (&[], &[], &["message", "type"]),
            "skipped" => (&[], &[], &["message"]),
            "system-out" | "system-err" => (&[], &[], &[]),
            _ => return None,
        })
    }

    fn validate(node: roxmltree::Node) -> Result<(), String> {
        let name = node.tag_name().name();
        let (children, required, optional) =
            schema(name).ok_or_else(|| format!("unknown element <{name}>"))?;
        for a in required {
            node.attribute(*a)
                .ok_or_else(|| format!("<{name}> lacks {a}"))?;
        }
        for a in node.attributes() {
            if !required.contains(&a.name()) && !optional.contains(&a.name()) {
                return Err(format!("<{name}> has no attribute {}", a.name()));
            }
            if ["tests", "failures", "errors", "skipped"].contains(&a.name()) {
                a.value()
                    .parse::<u64>()
                    .map_err(|_| format!("<{name} {}> is not a count", a.name()))?;
            }
        }
        for c in node.children().filter(|c| c.is_element()) {
            if !children.contains(&c.tag_name().name()) {
                return Err(format!("<{name}> may not hold <{}>", c.tag_name().name()));
            }
            validate(c)?;
        }
        if name == "testsuite" {
            let cases = node
                .children()
                .filter(|c| c.has_tag_name("testcase"))
                .count();
            let failed = node
                .children()
                .filter(|c| c.has_tag_name("testcase"))
                .filter(|c| c.children().any(|f| f.has_tag_name("failure")))
                .count();
            if node.attribute("tests") != Some(cases.to_string().as_str())
                || node.attribute("failures") != Some(failed.to_string().as_str())
            {
                return Err("a testsuite's counts disagree with its test cases".into());
            }
        }
        Ok(())
    }

    #[test]
    fn the_junit_xml_passes_the_junit_schema() {
        let text = render(&fixture::report());
        let doc = roxmltree::Document::parse(&text).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "testsuites");
        validate(doc.root_element()).unwrap();
        let failures = doc
            .descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count();
        assert_eq!(failures, 1);
    }

    #[test]
    fn the_schema_check_rejects_what_junit_readers_reject() {
        let bad = "<testsuites><testsuite name=\"x\" tests=\"2\"><testcase name=\"a\"/></testsuite></testsuites>";
        let doc = roxmltree::Document::parse(bad).unwrap();
        assert!(validate(doc.root_element()).is_err());
        let bad = "<testsuites><testcase name=\"a\"/></testsuites>";
        let doc = roxmltree::Document::parse(bad).unwrap();
        assert!(validate(doc.root_element()).is_err());
    }

    #[test]
    fn markup_in_names_is_escaped() {
        assert_eq!(esc("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
