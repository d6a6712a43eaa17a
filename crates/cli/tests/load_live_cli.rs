//! `serverbench load`'s live line: drawn on a terminal (a pseudo-terminal from `script(1)`, as
//! in interrupt_cli.rs), never with `-q`, never when stderr is a pipe, and never on stdout.

mod common;

use common::hello_server;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

/// `serverbench load -c 2 --warmup 1500ms -d 2s URL EXTRA`, as a shell command line.
fn load_command(addr: SocketAddr, extra: &str) -> String {
    format!(
        "{} load -c 2 -t 1 --warmup 1500ms -d 2s {extra} http://{addr}/",
        env!("CARGO_BIN_EXE_serverbench")
    )
}

/// What a terminal shows of `command` run in it (stdout and stderr both go to it).
fn on_a_terminal(command: &str) -> String {
    let out = Command::new("script")
        .args(["-qfec", &format!("exec {command}"), "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux runs the command in a pseudo-terminal");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_shows_the_warm_up_then_the_measured_figures_redrawn_in_place() {
    let screen = on_a_terminal(&load_command(hello_server(), ""));
    let warm = screen.find("\rwarm-up ").expect(&screen);
    let measuring = screen.find("\rmeasuring ").expect(&screen);
    assert!(warm < measuring, "{screen:?}");
    let line = &screen[measuring + 1..];
    let line = &line[..line.find('\r').unwrap()];
    assert!(line.contains("1s/2s"), "{line:?}");
    assert!(
        line.contains(" req/s (") && line.contains("so far)"),
        "{line:?}"
    );
    assert!(line.contains("p50 ") && line.contains("p99 "), "{line:?}");
    assert!(line.contains("0 errors"), "{line:?}");
    assert!(line.chars().count() <= 120 + "\x1b[K".len(), "{line:?}");
    assert!(
        screen.contains("\r\x1b[K") && screen.contains("Requests"),
        "the line is cleared before the summary: {screen:?}"
    );
}

#[test]
fn quiet_silences_the_live_line_on_a_terminal() {
    let screen = on_a_terminal(&load_command(hello_server(), "-q"));
    assert!(
        screen.contains("Requests"),
        "the summary still shows: {screen:?}"
    );
    assert!(
        !screen.contains("measuring") && !screen.contains("warm-up") && !screen.contains("req/s"),
        "{screen:?}"
    );
}

#[test]
fn nothing_live_is_written_when_stderr_is_a_pipe() {
    let addr = hello_server();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args([
            "load", "-c", "2", "-t", "1", "--warmup", "1500ms", "-d", "2s",
        ])
        .arg(format!("http://{addr}/"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "stderr stays empty"
    );
}

#[test]
fn with_json_the_live_line_is_on_the_terminal_and_stdout_is_only_json() {
    let tmp = tempfile::tempdir().unwrap();
    let json: &Path = &tmp.path().join("out.json");
    let command = format!(
        "{} > {}",
        load_command(hello_server(), "--json"),
        json.display()
    );
    let screen = on_a_terminal(&format!("sh -c '{command}'"));
    assert!(screen.contains("\rmeasuring "), "{screen:?}");
    let text = std::fs::read_to_string(json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("stdout is one JSON document");
    assert!(v["requests"].as_u64().unwrap() > 0, "{text}");
}
