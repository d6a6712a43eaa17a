//! Test fixtures shared by the modules' tests.

use serverbench_model::Mode;
use serverbench_model::Tool;
use serverbench_results::record::{LapRecord, LapStatus, LoadParams};

/// A successful HTTP lap of server `a` on `hello / c1` with no measurement yet.
pub fn lap() -> LapRecord {
    LapRecord {
        suite: "s".into(),
        server: "a".into(),
        scenario: "hello".into(),
        profile: "c1".into(),
        lap: 1,
        status: LapStatus::Ok,
        failure: None,
        tool: Tool::Serverbench,
        started_at: String::new(),
        wall_s: 1.0,
        params: LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::Http,
                ..Default::default()
            },
            connections: 1,
            ..LoadParams::default()
        },
        load: None,
        server_stats: None,
        roles: Default::default(),
        database: None,
        hosts: None,
        disturbance: None,
    }
}
