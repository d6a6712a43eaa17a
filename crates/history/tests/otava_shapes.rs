//! The change-point detector against Apache Otava on the same series: a step, a step and its
//! fix, two steps, a slow drift, a single outlier, heavy-tailed noise with and without a step,
//! and plain noise. The series and Otava's change points are fixed data, made by
//! scripts/otava-shapes.py (numpy seed 33) with apache-otava 0.8.0:
//!
//!     python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
//!     /tmp/otava/bin/python scripts/otava-shapes.py > crates/history/tests/data/otava-shapes.json
//!
//! (`otava.analysis.compute_change_points(values)` with its defaults, as `otava analyze` runs
//! it.) The detector must find every change point Otava finds, at the same run or the next or
//! previous one, with the same size within a point of percent, and no other.

use serde::Deserialize;
use serverbench_history::changepoint::{detect, Options};

#[derive(Deserialize)]
struct Fixture {
    otava: String,
    shapes: Vec<Shape>,
}

#[derive(Deserialize)]
struct Shape {
    name: String,
    series: Vec<f64>,
    otava: Vec<OtavaPoint>,
}

#[derive(Deserialize)]
struct OtavaPoint {
    index: usize,
    forward_change_percent: f64,
}

#[test]
fn the_detector_finds_what_otava_finds_and_nothing_else_on_every_shape() {
    let fixture: Fixture =
        serde_json::from_str(include_str!("data/otava-shapes.json")).expect("the fixture parses");
    assert_eq!(fixture.otava, "0.8.0");
    assert!(fixture.shapes.len() >= 8);
    let mut wrong = Vec::new();
    for shape in &fixture.shapes {
        let ours = detect(&shape.series, &Options::default());
        let matched = |i: usize| ours.iter().find(|c| c.index.abs_diff(i) <= 1);
        for o in &shape.otava {
            match matched(o.index) {
                None => wrong.push(format!("{}: missed Otava's {}", shape.name, o.index)),
                Some(c) if (c.magnitude() * 100.0 - o.forward_change_percent).abs() > 1.0 => wrong
                    .push(format!(
                        "{}: at {} {:+.2}% where Otava says {:+.2}%",
                        shape.name,
                        c.index,
                        c.magnitude() * 100.0,
                        o.forward_change_percent
                    )),
                Some(_) => {}
            }
        }
        for c in &ours {
            if !shape.otava.iter().any(|o| o.index.abs_diff(c.index) <= 1) {
                wrong.push(format!("{}: {} is not Otava's", shape.name, c.index));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_regression_and_its_fix_in_thirty_runs_gives_both_change_points() {
    let shape = |name: &str| {
        let fixture: Fixture =
            serde_json::from_str(include_str!("data/otava-shapes.json")).unwrap();
        fixture.shapes.into_iter().find(|s| s.name == name).unwrap()
    };
    let s = shape("step and its fix");
    assert_eq!(s.series.len(), 30);
    let at: Vec<usize> = detect(&s.series, &Options::default())
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(at, [12, 22]);
}
