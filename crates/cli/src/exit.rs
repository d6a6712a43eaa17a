//! serverbench's exit codes, in one place: every command returns an [`Exit`], `--help` prints
//! [`table`], and the README's "Exit codes" table lists the same rows.

use std::process::ExitCode;

/// How a command ended; its code is the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything worked.
    Ok,
    /// Bad input (a usage error) or an error before anything was measured.
    BadInput,
    /// `load`: the target refused every connection.
    Refused,
    /// `run`: at least one lap failed (a server or the load broke); the results are still written.
    LapsFailed,
    /// `compare --fail-above`: a server regressed by more than the threshold.
    Regression,
    /// `load` over TLS: every handshake failed, or resumption was asked and the server resumed none.
    Tls,
    /// `load`: no request succeeded: every one failed at the socket or got an error status, or
    /// none was answered at all ([`serverbench_hosts::LOAD_NO_SUCCESS_EXIT`], which the harness
    /// reads from a load tool here or on a client host).
    NoSuccess,
    /// `verify`, `setup`, `hosts check`: a server failed the contract or its setup, or a host its check.
    CheckFailed,
    /// `load --barrier`: no `go` line came on stdin; nothing was measured.
    NoGo,
    /// `history check --strict`: a change straddles the threshold (neither clearly within nor
    /// beyond).
    Inconclusive,
    /// `load --find-max`: the goal failed at the lowest rate tried; the steps are reported.
    GoalMissed,
    /// Interrupted by Ctrl-C or SIGTERM.
    Interrupted,
}

impl Exit {
    /// Every exit, in code order.
    pub const ALL: [Exit; 12] = [
        Exit::Ok,
        Exit::BadInput,
        Exit::Refused,
        Exit::LapsFailed,
        Exit::Regression,
        Exit::Tls,
        Exit::NoSuccess,
        Exit::CheckFailed,
        Exit::NoGo,
        Exit::Inconclusive,
        Exit::GoalMissed,
        Exit::Interrupted,
    ];

    /// The process exit status.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::BadInput => 1,
            Exit::Refused => 2,
            Exit::LapsFailed => 3,
            Exit::Regression => 4,
            Exit::Tls => 5,
            Exit::NoSuccess => 6,
            Exit::CheckFailed => 7,
            Exit::NoGo => 8,
            Exit::Inconclusive => 9,
            Exit::GoalMissed => 10,
            Exit::Interrupted => serverbench_harness::process::INTERRUPTED,
        }
    }

    /// What the code means, in the words of `--help` and the README.
    pub const fn meaning(self) -> &'static str {
        match self {
            Exit::Ok => "everything worked",
            Exit::BadInput => "bad input, or an error before anything was measured",
            Exit::Refused => "load: the target refused every connection",
            Exit::LapsFailed => "run: at least one lap failed; the results are written",
            Exit::Regression => {
                "compare --fail-above, history check: a regression beyond the threshold"
            }
            Exit::Tls => "load over TLS: every handshake failed, or no session was resumed",
            Exit::NoSuccess => {
                "load: no success (socket errors, error statuses, failed gRPC calls)"
            }
            Exit::CheckFailed => "verify, setup, hosts check: a server or host failed",
            Exit::NoGo => "load --barrier: no `go` line on stdin; nothing measured",
            Exit::Inconclusive => "history check --strict: a change straddles the threshold",
            Exit::GoalMissed => "load --find-max: the goal failed at the lowest rate",
            Exit::Interrupted => "interrupted (Ctrl-C, SIGTERM)",
        }
    }

    /// `Ok` when nothing failed, else `failed`.
    pub fn unless(failed: bool, exit: Exit) -> Exit {
        if failed {
            exit
        } else {
            Exit::Ok
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// The exit codes as `--help` shows them under the commands.
pub fn table() -> String {
    let mut s = String::from("Exit codes:\n");
    for e in Exit::ALL {
        s.push_str(&format!("  {:>3}  {}\n", e.code(), e.meaning()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_has_its_own_code() {
        let mut codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), Exit::ALL.len());
        assert!(
            codes.windows(2).all(|w| w[0] < w[1]),
            "ALL is in code order"
        );
    }

    #[test]
    fn the_help_table_fits_in_80_columns() {
        for line in table().lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
    }

    /// `| 4 | compare --fail-above, history check: ... |` without the backticks.
    fn plain(s: &str) -> String {
        s.replace('`', "")
    }

    #[test]
    fn the_readme_table_is_the_enums_table() {
        let readme = include_str!("../../../README.md");
        let rows: Vec<String> = readme
            .lines()
            .skip_while(|l| !l.starts_with("| exit code | meaning |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(plain)
            .collect();
        let want: Vec<String> = Exit::ALL
            .iter()
            .map(|e| format!("| {} | {} |", e.code(), plain(e.meaning())))
            .collect();
        assert_eq!(rows, want);
    }

    /// Every `N regression` and `N inconclusive` in `text`.
    fn claims(text: &str) -> Vec<(String, String)> {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || ",;/()".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(2)
            .filter(|w| w[0].bytes().all(|b| b.is_ascii_digit()))
            .filter(|w| w[1] == "regression" || w[1] == "inconclusive")
            .map(|w| (w[0].to_owned(), w[1].to_owned()))
            .collect()
    }

    #[test]
    fn help_readme_and_changelog_give_history_checks_codes_as_the_enum() {
        use clap::CommandFactory;
        let mut cli = crate::Cli::command();
        let history = cli.find_subcommand_mut("history").expect("history");
        let mut texts = vec![history.render_long_help().to_string()];
        let check = history.find_subcommand_mut("check").expect("history check");
        texts.push(check.render_long_help().to_string());
        texts.push(include_str!("../../../README.md").to_owned());
        let changelog = include_str!("../../../CHANGELOG.md");
        let unreleased = changelog.split("\n## ").nth(1).unwrap_or_default();
        texts.push(unreleased.to_owned());
        let mut seen = 0;
        for text in &texts {
            for (code, word) in claims(text) {
                let want = match word.as_str() {
                    "regression" => Exit::Regression,
                    _ => Exit::Inconclusive,
                };
                assert_eq!(code, want.code().to_string(), "{code} {word}");
                seen += 1;
            }
        }
        assert!(seen >= 4, "{seen} claims found");
    }

    #[test]
    fn verify_failures_and_failed_loads_differ_from_bad_input() {
        let bad = Exit::BadInput.code();
        assert_ne!(Exit::CheckFailed.code(), bad);
        assert_ne!(Exit::NoSuccess.code(), bad);
        assert_ne!(Exit::NoSuccess.code(), Exit::CheckFailed.code());
        assert_ne!(Exit::NoGo.code(), Exit::LapsFailed.code());
    }

    #[test]
    fn the_harness_knows_the_exit_of_a_load_that_nothing_answered() {
        let code = i32::from(Exit::NoSuccess.code());
        assert_eq!(code, serverbench_hosts::LOAD_NO_SUCCESS_EXIT);
    }
}
