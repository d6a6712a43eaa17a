//! `serverbench run` in a terminal (a pseudo-terminal from `script(1)`): the bar says from the
//! start what the run is doing and how long is left.

use std::path::Path;
use std::process::Command;

#[test]
fn a_terminal_sees_each_step_of_a_lap_and_an_eta_from_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog");
    let command = format!(
        "exec {} run --root {} --results {} --servers python/fast --scenario hello -c 2 -d 1s \
         --laps 1 --warmup 1s",
        env!("CARGO_BIN_EXE_serverbench"),
        root.display(),
        tmp.path().display()
    );
    let out = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("SERVERBENCH_CACHE", tmp.path().join("cache"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux runs the command in a pseudo-terminal");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    let at = |text: &str| {
        screen
            .find(text)
            .unwrap_or_else(|| panic!("never showed {text:?}:\n{screen}"))
    };
    let steps = [
        at("starting python/fast"),
        at("checking python/fast"),
        at("warm-up · "),
        at("lap 1/1 · "),
    ];
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "in order: {screen}");
    assert!(
        at("· ETA ") < steps[0],
        "the ETA shows from the start: {screen}"
    );
    assert!(
        screen.contains("0s/1s"),
        "the step's seconds of its length: {screen}"
    );
}
