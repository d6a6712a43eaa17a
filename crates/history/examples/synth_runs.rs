//! Writes N synthetic results folders (one server, 5 laps each, 2% noise, a 10% slowdown in the
//! last five runs) for `bench/history.sh`: `synth_runs OUT_DIR N`.

use serverbench_history::synth::{write_run, RunSpec};
use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(out), Some(n)) = (args.next(), args.next()) else {
        eprintln!("usage: synth_runs OUT_DIR N");
        std::process::exit(1);
    };
    let out = PathBuf::from(out);
    let n: usize = n.parse().expect("N is a number");
    for i in 0..n {
        let level = if i + 5 >= n { 0.9 } else { 1.0 };
        let spec = RunSpec {
            servers: vec![("mine".into(), 100_000.0 * level)],
            seed: i as u64,
            at_s: i as u64 * 3600,
            commit: Some(format!("c{i:06}")),
            ..RunSpec::default()
        };
        if let Err(e) = write_run(&out, &format!("run{i:05}"), &spec) {
            eprintln!("synth_runs: {e}");
            std::process::exit(1);
        }
    }
}
