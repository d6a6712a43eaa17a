//! `run`'s progress: on a terminal, one bar that says at once what the run is doing (starting
//! a server, its quick contract check, a warm-up, lap N of M, with the seconds of the step so
//! far) and the time left, counting down from the harness's [`Event::Estimate`]s; plain lines
//! otherwise.

use super::lap_figure;
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use serverbench_harness::run::Event;
use serverbench_results::record::{LapRecord, LapStatus};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the bar's timers count from.
#[derive(Debug, Default, Clone)]
struct Clock {
    /// The current step's start and length (`None`: open-ended, e.g. a server starting).
    step: Option<(Instant, Option<Duration>)>,
    /// The last estimate of the time left, and when it came.
    eta: Option<(Instant, Duration)>,
}

impl Clock {
    /// ` · 4s/10s` (or ` · 4s`): the step so far.
    fn step_text(&self, now: Instant) -> String {
        let Some((at, len)) = self.step else {
            return String::new();
        };
        let so_far = now.saturating_duration_since(at).as_secs();
        match len {
            Some(l) => format!(" · {so_far}s/{}", seconds(l)),
            None => format!(" · {so_far}s"),
        }
    }

    /// ` · ETA 3m 5s`: the last estimate less the time since.
    fn eta_text(&self, now: Instant) -> String {
        let Some((at, left)) = self.eta else {
            return String::new();
        };
        let left = left.saturating_sub(now.saturating_duration_since(at));
        format!(" · ETA {}", hms(left))
    }
}

/// Renders events: a progress bar on a terminal, plain lines otherwise.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    laps: u32,
    /// Lap length by profile name (`None`: a request count).
    durations: HashMap<String, Option<f64>>,
    clock: Arc<Mutex<Clock>>,
    /// Failure reasons already shown in full.
    shown: HashSet<String>,
}

impl Progress {
    pub(super) fn new(laps: u32, durations: HashMap<String, Option<f64>>) -> Progress {
        Progress {
            bar: None,
            laps,
            durations,
            clock: Arc::default(),
            shown: HashSet::new(),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(b) if !b.is_hidden() => b.println(text),
            _ => eprintln!("{text}"),
        }
    }

    fn bar(&self, total: usize, already: usize) -> ProgressBar {
        let bar = ProgressBar::new(total as u64);
        let (step, eta) = (Arc::clone(&self.clock), Arc::clone(&self.clock));
        let style = ProgressStyle::with_template(
            "{spinner} [{bar:20}] {pos}/{len} laps{eta_left} · {wide_msg}{step}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "step",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let c = step.lock().unwrap_or_else(|e| e.into_inner());
                let _ = w.write_str(&c.step_text(Instant::now()));
            },
        )
        .with_key(
            "eta_left",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let c = eta.lock().unwrap_or_else(|e| e.into_inner());
                let _ = w.write_str(&c.eta_text(Instant::now()));
            },
        )
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_position(already as u64);
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A new step on the bar: its message, and its length when known.
    fn step(&self, msg: String, len: Option<Duration>) {
        self.clock.lock().unwrap_or_else(|e| e.into_inner()).step = Some((Instant::now(), len));
        if let Some(b) = self.bar.as_ref().filter(|b| !b.is_hidden()) {
            b.set_message(msg);
        }
    }

    fn estimate(&self, left: Duration) {
        self.clock.lock().unwrap_or_else(|e| e.into_inner()).eta = Some((Instant::now(), left));
    }

    pub(super) fn event(&mut self, e: Event) {
        match e {
            Event::Started {
                dir,
                servers,
                total,
                already,
            } => {
                eprintln!("results: {}", dir.display());
                eprintln!("servers: {}", servers.join(", "));
                self.bar = Some(self.bar(total, already));
            }
            Event::Preparing { what } => eprintln!("{what}..."),
            Event::ToolInstall(step) => {
                self.line(format!("installing {}: {}", step.tool, step.command))
            }
            Event::ServerSkipped { server, why } if self.shown.contains(&why) => {
                self.line(format!("skip {server}: it failed (above)"))
            }
            Event::ServerSkipped { server, why } => self.line(format!("skip {server}: {why}")),
            Event::ScenarioSkipped {
                server,
                scenario,
                why,
            } => self.line(format!("skip {server} x {scenario}: {why}")),
            Event::ServerStarting { server, lap } => self.step(
                format!("starting {server} for lap {lap}/{}", self.laps),
                None,
            ),
            Event::Verifying { server } => {
                self.step(format!("checking {server} against the contract"), None)
            }
            Event::ServerFailed { server, lap, why } => {
                self.failure(&format!("FAILED {server} lap {lap}"), &why)
            }
            Event::WarmupStarted {
                server,
                scenario,
                profile,
                seconds,
            } => self.step(
                format!("warm-up · {server} · {scenario} · {profile}"),
                Some(Duration::from_secs_f64(seconds)),
            ),
            // Its `eta` counts the whole lap again, warm-up included: the countdown from the
            // last `Estimate` (sent as each lap ends) is the steadier figure.
            Event::LapStarted {
                server,
                scenario,
                profile,
                lap,
                ..
            } => {
                let len = self.durations.get(&profile).copied().flatten();
                self.step(
                    format!(
                        "lap {lap}/{} · {server} · {scenario} · {profile}",
                        self.laps
                    ),
                    len.map(Duration::from_secs_f64),
                );
            }
            Event::Estimate { left } => self.estimate(left),
            Event::LapFinished { record, .. } => self.finished(&record),
            Event::Interrupted => self.line("interrupted".into()),
            Event::DatabaseFloor {
                round,
                clients,
                outcome,
            } => self.line(match outcome {
                Ok(rate) => format!(
                    "database floor, {clients} sessions, round {round}: {} selects/s",
                    rate.round()
                ),
                Err(why) => {
                    format!(
                        "database floor, {clients} sessions, round {round}: not measured: {why}"
                    )
                }
            }),
        }
    }

    fn finished(&mut self, r: &LapRecord) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        let what = format!(
            "{} · {} · {} · lap {}",
            r.server, r.scenario, r.profile, r.lap
        );
        match (
            &r.status,
            r.load
                .as_ref()
                .and_then(|m| lap_figure(r.params.work.mode, m)),
        ) {
            (LapStatus::Ok, Some(figure)) => {
                let hidden = self.bar.as_ref().is_none_or(|b| b.is_hidden());
                if hidden {
                    eprintln!("{what}: {figure}");
                }
            }
            (LapStatus::Ok, None) => {}
            (LapStatus::Failed, _) => self.failure(
                &format!("{what}: FAILED"),
                &r.failure
                    .as_ref()
                    .map(|f| f.to_string())
                    .unwrap_or_default(),
            ),
        }
    }

    /// A failure, shown by its first line once per distinct reason (the log tail is printed
    /// once under the final table); the same reason again says so.
    fn failure(&mut self, what: &str, why: &str) {
        if !self.shown.insert(why.to_owned()) {
            self.line(format!("{what} (same reason as above)"));
            return;
        }
        let first = why.lines().find(|l| !l.trim().is_empty());
        self.line(format!("{what}: {}", first.unwrap_or("(no reason given)")));
    }

    pub(super) fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// An ETA to the second (`3m 5s`), in humantime's spelling.
pub(super) fn hms(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

/// A step's length: `10s`, `2.5s`.
fn seconds(d: Duration) -> String {
    let mut s = String::new();
    if d.subsec_millis() == 0 {
        let _ = write!(s, "{}s", d.as_secs());
    } else {
        let _ = write!(s, "{:.1}s", d.as_secs_f64());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_counts_up_against_its_length_and_the_eta_counts_down() {
        let t = Instant::now();
        let clock = Clock {
            step: Some((t, Some(Duration::from_secs(10)))),
            eta: Some((t, Duration::from_secs(185))),
        };
        let later = t + Duration::from_millis(4_300);
        assert_eq!(clock.step_text(later), " · 4s/10s");
        assert_eq!(clock.eta_text(later), " · ETA 3m");
        let much_later = t + Duration::from_secs(999);
        assert_eq!(clock.eta_text(much_later), " · ETA 0s", "never negative");
    }

    #[test]
    fn an_open_ended_step_counts_up_alone_and_nothing_shows_before_an_estimate() {
        let t = Instant::now();
        let clock = Clock {
            step: Some((t, None)),
            eta: None,
        };
        assert_eq!(clock.step_text(t + Duration::from_secs(2)), " · 2s");
        assert_eq!(clock.eta_text(t), "");
        assert_eq!(Clock::default().step_text(t), "");
        assert_eq!(seconds(Duration::from_millis(2_500)), "2.5s");
    }
}
