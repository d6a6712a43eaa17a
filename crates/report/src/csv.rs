//! CSV: one row per server x scenario x profile (or per compared row), with the machine names
//! of [`crate::table`]'s columns as the header and the cells' raw values as the fields. Each
//! further table follows after an empty line under a header of its own: runs over several
//! machines, one row per lap x client host; laps over TLS, the TLS table; laps over HTTP/2,
//! the HTTP/2 table; gRPC laps, their calls by how they ended; HTTP/3 laps, their QUIC figures. The `csv` crate does the RFC 4180 quoting.

use crate::table::{self, Grid};
use crate::{Comparison, Exporter, NoComparisonForm};
use serverbench_analysis::summary::Summary;
use serverbench_results::env::Env;

/// The CSV exporter.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    /// The summary rows; then, each after an empty line and under its own header, the
    /// per-host rows, the TLS rows and the HTTP/2 rows of the laps that have them.
    fn render(&self, summary: &Summary, env: Option<&Env>) -> String {
        let mut out = write(&table::csv_grid(summary, env));
        let more = [
            table::hosts_csv(summary),
            table::tls_csv(summary),
            table::h2_csv(summary),
            table::grpc_csv(summary),
            table::h3_csv(summary),
            table::database_csv(summary),
            table::cost_csv(summary),
            table::capacity_csv(summary),
            table::capacity_steps_csv(summary),
            table::mix_csv(summary),
        ];
        for grid in more.iter().flatten() {
            out.push('\n');
            out.push_str(&write(grid));
        }
        out
    }

    fn render_comparison(
        &self,
        c: &Comparison,
        _old: &str,
        _new: &str,
    ) -> Result<String, NoComparisonForm> {
        Ok(write(&table::comparison_csv(c)))
    }
}

/// The grid as CSV text: keys, then raw values.
fn write(g: &Grid) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = g.columns.iter().map(|c| c.key);
    let rows = g
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.raw.as_str()));
    std::iter::once(w.write_record(header))
        .chain(rows.map(|r| w.write_record(r)))
        .collect::<Result<(), _>>()
        .and_then(|()| w.into_inner().map_err(|e| e.into_error().into()))
        .map(|bytes| String::from_utf8(bytes).expect("UTF-8 fields make UTF-8 CSV"))
        .expect("writing CSV to memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Align, Cell, Column, Row};

    fn one_field(field: &str) -> String {
        let g = Grid {
            columns: vec![
                Column {
                    key: "a",
                    label: "a".into(),
                    align: Align::Left,
                };
                2
            ],
            rows: vec![Row {
                cells: vec![Cell::plain(field), Cell::plain("")],
                ..Row::default()
            }],
            headline: None,
        };
        write(&g).lines().skip(1).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn fields_with_commas_quotes_or_newlines_are_quoted() {
        assert_eq!(one_field("plain"), "plain,");
        assert_eq!(one_field("a,b"), "\"a,b\",");
        assert_eq!(one_field("say \"hi\""), "\"say \"\"hi\"\"\",");
        assert_eq!(one_field("two\nlines"), "\"two\nlines\",");
    }
}
