//! The one table model every exporter renders, in the manner of hyperfine's
//! `MarkupExporter::table_results`: which columns a table has, in which order, their headings,
//! alignment and the text of every cell are decided here, once. The terminal, Markdown, HTML
//! and CSV exporters only supply syntax. A cell carries the text people read and the raw value
//! machines read (the CSV file, the HTML page's sort keys).

mod capacity;
mod cells;
mod compare;
mod cost;
mod database;
mod grpc;
mod h3;
mod hosts;
mod legend;
mod mix;
mod protocol;
mod scaling;
mod summary;

pub use capacity::{
    capacity_csv, capacity_curve_tables, capacity_legend, capacity_steps_csv, capacity_tables,
};
pub use compare::{comparison_csv, comparison_grids, unmatched, COMPARISON_LEGEND};
pub use cost::{cost_csv, cost_legend, cost_tables};
pub use database::{database_csv, database_legend, database_tables};
pub use grpc::{grpc_csv, status_name};
pub use h3::h3_csv;
pub use hosts::{host_laps_grid, hosts_csv, hosts_grid, hosts_legend};
pub use legend::{disturbed_line, latency_note, legend, noisy_lines, until_ci_lines};
pub use mix::{mix_csv, mix_legend, mix_tables};
pub use protocol::{h2_csv, protocol_legend, protocol_tables, tls_csv};
pub use scaling::{
    scaling_grid, scaling_grid_of, scaling_legend, scaling_tables, ScalingTable, SATURATED,
};
pub use summary::{csv_grid, summary_grid, View};

use serverbench_analysis::stats::IntervalMethod;
use serverbench_analysis::summary::Table;

/// How a table's laps travelled, as every table names it: the lap's protocol label (`https
/// new-conn resume=off`, `h2 m16`), or the table's mode for plain HTTP/1.1 keep-alive or TCP
/// (`http`, `tcp-stream`).
pub fn transport(t: &Table) -> String {
    match t.transport.as_str() {
        "" => t.mode.to_string(),
        how => how.to_owned(),
    }
}

/// How a table's load is described in its title: [`transport`], then what the scenario's own
/// requests send when they carry a method or a body (`http, POST 500KB..20MB`).
pub fn load(t: &Table) -> String {
    match t.body.as_str() {
        "" => transport(t),
        body => format!("{}, {body}", transport(t)),
    }
}

/// How a column is aligned (beside [`crate::text::pad`], which applies it).
pub use crate::text::Align;

/// A column: its machine name (the CSV header), its heading and its alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub key: &'static str,
    pub label: String,
    pub align: Align,
}

/// One cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// What people read: `150,500`, `±3,000`, `16.63x`, `-` when not measured.
    pub text: String,
    /// What machines read: full precision, empty when not measured.
    pub raw: String,
    /// A longer explanation (the HTML page shows it on hover): each lap's figure, an interval's
    /// bounds and what kind of interval it is.
    pub hint: Option<String>,
}

impl Cell {
    /// A cell whose text is its raw value.
    pub fn plain(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            raw: text.clone(),
            text,
            hint: None,
        }
    }

    /// A number: `show` gives its text, the raw value is full precision; `-` and empty when
    /// absent or not finite.
    pub fn number(value: Option<f64>, show: impl Fn(f64) -> String) -> Cell {
        match value.filter(|v| v.is_finite()) {
            Some(v) => Cell {
                text: show(v),
                raw: v.to_string(),
                hint: None,
            },
            None => Cell {
                text: crate::text::MISSING.to_owned(),
                raw: String::new(),
                hint: None,
            },
        }
    }

    /// The same cell with a hint.
    pub fn with_hint(mut self, hint: Option<String>) -> Cell {
        self.hint = hint;
        self
    }
}

/// One row and what a format may decorate it with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub cells: Vec<Cell>,
    /// 1, 2 or 3 when the row holds that rank alone (Markdown shows a medal).
    pub medal: Option<u32>,
    /// The headline figure varies more than [`serverbench_analysis::stats::NOISY_CV`].
    pub noisy: bool,
}

/// The grid of a table whose columns are a fixed list `(key, heading, alignment)`: the columns at
/// `shown` (indexes into the list, in that order), one row per item from `cells` (every column's
/// cell) with `medal`'s medal. The database, cost, capacity and mix tables are built this way.
fn listed_grid<T, C: AsRef<[Cell]>>(
    list: &[(&'static str, &str, Align)],
    shown: &[usize],
    items: &[T],
    cells: impl Fn(&T) -> C,
    medal: impl Fn(&T) -> Option<u32>,
) -> Grid {
    Grid {
        columns: shown
            .iter()
            .map(|&i| Column {
                key: list[i].0,
                label: list[i].1.to_string(),
                align: list[i].2,
            })
            .collect(),
        rows: items
            .iter()
            .map(|r| {
                let all = cells(r);
                Row {
                    cells: shown.iter().map(|&i| all.as_ref()[i].clone()).collect(),
                    medal: medal(r),
                    ..Row::default()
                }
            })
            .collect(),
        headline: None,
    }
}

/// The indexes of the columns of `list` that `keep` lets through.
fn kept(list: &[(&'static str, &str, Align)], keep: impl Fn(&str) -> bool) -> Vec<usize> {
    (0..list.len()).filter(|&i| keep(list[i].0)).collect()
}

/// A table ready to render: columns and rows in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grid {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// The index of the headline column (req/s, or Mbps down for a stream), if shown.
    pub headline: Option<usize>,
}

/// A column defined over rows of type `R`.
pub(crate) trait ColumnDef<R> {
    fn key(&self) -> &'static str;
    fn label(&self) -> &'static str;
    fn align(&self) -> Align;
    fn cell(&self, row: &R) -> Cell;
    /// For an interval column, how the row's interval was obtained: the heading and, in a
    /// table that mixes kinds, each cell say which it is.
    fn interval(&self, _row: &R) -> Option<IntervalMethod> {
        None
    }
    /// Whether this is the headline figure of the table.
    fn headline(&self) -> bool {
        false
    }
}

/// The heading of an interval column over the kinds its rows hold, and whether the kinds are
/// mixed (then each min..max cell says `range`).
fn interval_heading(methods: &[IntervalMethod]) -> (&'static str, bool) {
    let bootstrap = methods.contains(&IntervalMethod::Bootstrap);
    let range = methods.contains(&IntervalMethod::Range);
    match (bootstrap, range) {
        (true, true) => ("95% CI/range", true),
        (false, true) => ("range", false),
        _ => ("95% CI", false),
    }
}

/// Builds the grid of `rows` over the columns `defs`; `decorate` gives a row's medal and
/// whether it is noisy.
pub(crate) fn build<R, D: ColumnDef<R>>(
    defs: &[D],
    rows: &[R],
    decorate: impl Fn(&R) -> (Option<u32>, bool),
) -> Grid {
    let mut grid = Grid {
        headline: defs.iter().position(ColumnDef::headline),
        ..Grid::default()
    };
    grid.rows = rows
        .iter()
        .map(|r| {
            let (medal, noisy) = decorate(r);
            Row {
                cells: defs.iter().map(|d| d.cell(r)).collect(),
                medal,
                noisy,
            }
        })
        .collect();
    for (c, def) in defs.iter().enumerate() {
        let methods: Vec<IntervalMethod> = rows.iter().filter_map(|r| def.interval(r)).collect();
        let mut label = def.label();
        if !methods.is_empty() {
            let (heading, mixed) = interval_heading(&methods);
            label = heading;
            for (row, r) in grid.rows.iter_mut().zip(rows) {
                if mixed && def.interval(r) == Some(IntervalMethod::Range) {
                    row.cells[c].text.push_str(" range");
                }
            }
        }
        grid.columns.push(Column {
            key: def.key(),
            label: label.to_owned(),
            align: def.align(),
        });
    }
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_heading_names_the_kind_of_interval() {
        use IntervalMethod::{Bootstrap, Range};
        assert_eq!(interval_heading(&[Bootstrap, Bootstrap]), ("95% CI", false));
        assert_eq!(interval_heading(&[Range]), ("range", false));
        assert_eq!(
            interval_heading(&[Bootstrap, Range]),
            ("95% CI/range", true)
        );
    }

    #[test]
    fn a_missing_number_is_a_dash_for_people_and_empty_for_machines() {
        let c = Cell::number(None, |v| v.to_string());
        assert_eq!((c.text.as_str(), c.raw.as_str()), ("-", ""));
        let c = Cell::number(Some(f64::INFINITY), |v| v.to_string());
        assert_eq!(c.raw, "");
        let c = Cell::number(Some(0.1 + 0.2), |v| format!("{v:.1}"));
        assert_eq!(
            (c.text.as_str(), c.raw.as_str()),
            ("0.3", "0.30000000000000004")
        );
    }
}
