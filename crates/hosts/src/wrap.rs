//! The remote side of a session: a POSIX `sh` wrapper that makes a command die with its ssh
//! session.
//!
//! sshd sends no signal when a session without a terminal drops, so a remote command would
//! outlive its controller. The wrapper starts the command in a session (and process group) of
//! its own with `setsid`, forwards the session's stdin to it line by line through a FIFO, and
//! when that stdin reaches EOF (the controller closed it, the local ssh died, the connection
//! broke or the remote sshd was killed) sends SIGTERM to the whole group, then SIGKILL after a
//! grace period. When the command ends by itself, what is left of its group gets SIGTERM too.
//! The session's exit status is the command's.
//!
//! Before starting, the wrapper changes to the host's checkout and checks that the program is
//! there; failures exit with [`EXIT_NO_CHECKOUT`] / [`EXIT_NO_PROGRAM`] and say so on stderr.

/// Exit status when the checkout folder is missing on the host.
pub const EXIT_NO_CHECKOUT: i32 = 125;
/// Exit status when the program is not an executable file on the host.
pub const EXIT_NO_PROGRAM: i32 = 127;
/// Tenths of a second between SIGTERM and SIGKILL of the remote group: longer than
/// `serverbench serve`'s own stop (5 s grace + 1 s) so it can stop its server group first.
const GRACE_TENTHS: u32 = 80;

/// The wrapper; `$1` is the checkout, the rest the command and its arguments.
fn script() -> String {
    format!(
        r#"cd "$1" 2>/dev/null || {{ echo "serverbench-session: no checkout at $1" >&2; exit {EXIT_NO_CHECKOUT}; }}
shift
case "$1" in */*) [ -f "$1" ] && [ -x "$1" ] ;; *) command -v "$1" >/dev/null ;; esac || {{ echo "serverbench-session: no executable $1" >&2; exit {EXIT_NO_PROGRAM}; }}
d=$(mktemp -d) && mkfifo "$d/in" || exit {EXIT_NO_CHECKOUT}
exec 4<&0
setsid "$@" <"$d/in" &
pid=$!
exec 3>"$d/in"
rm -rf "$d"
(
  while IFS= read -r l; do printf '%s\n' "$l" >&3 || break; done
  exec 3>&-
  kill -TERM -"$pid" 2>/dev/null || exit 0
  n=0
  while kill -0 -"$pid" 2>/dev/null && [ $n -lt {GRACE_TENTHS} ]; do sleep 0.1; n=$((n+1)); done
  kill -KILL -"$pid" 2>/dev/null
) <&4 >/dev/null 2>&1 &
w=$!
exec 3>&- 4<&-
wait "$pid"
rc=$?
kill -TERM -"$pid" 2>/dev/null
kill "$w" 2>/dev/null
exit $rc"#
    )
}

/// Quotes `s` for a POSIX shell (single quotes; a quote inside becomes `'\''`).
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command line for the remote login shell: the wrapper run by `sh` in `checkout` around
/// `argv`, every word quoted.
pub fn remote_command(checkout: &str, argv: &[String]) -> String {
    let mut words = vec![
        "exec".to_string(),
        "sh".into(),
        "-c".into(),
        quote(&script()),
        "serverbench-session".into(),
        quote(checkout),
    ];
    words.extend(argv.iter().map(|a| quote(a)));
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn spawn(argv: &[&str]) -> std::process::Child {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        Command::new("sh")
            .arg("-c")
            .arg(remote_command("/tmp", &argv))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The process exists and is not a zombie waiting for its reaper.
    fn alive(pid: i32) -> bool {
        serverbench_machine::process::is_running(pid as u32)
    }

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", quote("it's a $HOME `x`")))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "it's a $HOME `x`");
    }

    #[test]
    fn lines_reach_the_command_and_its_status_comes_back() {
        let mut child = spawn(&["sh", "-c", "echo ready; read x; echo got $x; exit 7"]);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n");
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        assert_eq!(line, "got go\n");
        // Read to EOF first: `wait` closes stdin, and a closed stdin is the signal to end the
        // command, which would race with its own `exit 7`.
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert_eq!(rest, "");
        assert_eq!(child.wait().unwrap().code(), Some(7));
    }

    #[test]
    fn closing_stdin_kills_the_whole_group() {
        let mut child = spawn(&["sh", "-c", "sleep 60 & echo $!; wait"]);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(alive(grandchild));
        let t = Instant::now();
        drop(child.stdin.take());
        let status = child.wait().unwrap();
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert_eq!(status.code(), Some(128 + libc::SIGTERM));
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(grandchild), "the sleep in the group survived");
    }

    #[test]
    fn a_missing_program_is_named_with_its_own_status() {
        let child = spawn(&["/nonexistent/serverbench", "--version"]);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(EXIT_NO_PROGRAM));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no executable /nonexistent/serverbench"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_checkout_is_named_with_its_own_status() {
        let child = Command::new("sh")
            .arg("-c")
            .arg(remote_command("/nonexistent/checkout", &["true".into()]))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(child.status.code(), Some(EXIT_NO_CHECKOUT));
        assert!(String::from_utf8_lossy(&child.stderr).contains("/nonexistent/checkout"));
    }
}
