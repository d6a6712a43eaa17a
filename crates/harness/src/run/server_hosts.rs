//! One measured lap over several machines (`run --hosts`): the warm-up happens on the client
//! hosts before their barrier, the server host's sampler starts at the release, and the lap
//! records the merge with every client host's own result.

use super::super::hosts::{self, RemoteSampler};
use super::{died, Event, RunState, LOG_TAIL};
use crate::results::record::{FailureKind, LapFailure, LapRecord, LapStatus, Measurement};
use crate::tools::Target;
use serverbench_results::LapKey;
use std::time::Instant;

impl RunState<'_> {
    /// The lap on the hosts; `None` when interrupted.
    pub(super) fn measure_on_hosts(
        &mut self,
        proc: &mut super::Running,
        target: &Target,
        j: &super::Job,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<LapRecord> {
        let h = self.opts.hosts.clone().expect("a run over hosts");
        let LapKey {
            server,
            scenario,
            profile,
            lap,
        } = self.key(j);
        let params = self.params(j);
        on_event(Event::LapStarted {
            server,
            scenario,
            profile,
            lap,
            index: self.index + 1,
            total: self.plan.jobs.len(),
            eta: Some(self.eta()),
        });
        let mut record = self.record(j, LapStatus::Ok, None);
        let jobs = match hosts::client_jobs(&h, &params, target, self.hosts_tls.as_ref()) {
            Ok(jobs) => jobs,
            Err(why) => {
                record.status = LapStatus::Failed;
                record.failure = Some(LapFailure::from_text(FailureKind::Hosts, &why));
                return Some(record);
            }
        };
        let t0 = Instant::now();
        let mut sampler = proc.remote_pid().map(|pid| RemoteSampler::arm(&h, pid));
        let armed = match &mut sampler {
            Some(Ok(s)) => Some(s),
            _ => None,
        };
        let load = hosts::load(&h, &params, &jobs, armed, &self.opts.cancel);
        let requests = load.outcome.as_ref().ok().map(|d| d.merged.requests);
        record.server_stats = match sampler {
            Some(Ok(s)) => s.finish(requests).ok(),
            _ => None,
        };
        record.wall_s = t0.elapsed().as_secs_f64();
        record.hosts = Some(hosts::lap_record(&h, &load));
        match load.outcome {
            Err(f) if f.cancelled => return None,
            Err(f) => {
                record.status = LapStatus::Failed;
                let faults: Vec<String> = f.faults.iter().map(|e| e.to_string()).collect();
                let mut why = LapFailure::new(FailureKind::Hosts, faults.join("; "));
                if let Some(dead) = died(proc) {
                    why.detail = format!("{}; {}", why.detail, dead.detail);
                    why.log_tail = dead.log_tail;
                } else if f.faults.iter().any(|e| e.host() == h.server.name) {
                    why = why.with_log_tail(proc.log_tail(LOG_TAIL));
                }
                record.failure = Some(why);
            }
            Ok(d) => {
                record.load = Some(Measurement::from(&d.merged));
                if let Some(why) = died(proc) {
                    record.status = LapStatus::Failed;
                    record.failure = Some(why);
                }
            }
        }
        Some(record)
    }
}
