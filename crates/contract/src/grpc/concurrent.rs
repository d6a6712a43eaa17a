//! [`names::CONCURRENT`]: 100 `Sum` calls with distinct operands at once on one connection,
//! each answer checked (sent after one call is answered, so the server's SETTINGS are in force;
//! its `SETTINGS_MAX_CONCURRENT_STREAMS` is noted).

use super::{connect, names, sum, sum_call};
use crate::diff::Diff;
use crate::http2::Transport;
use crate::Check;
use std::sync::Arc;
use tokio::task::JoinSet;

/// Calls of [`names::CONCURRENT`].
pub const CALLS: usize = 100;

pub(super) async fn check(t: Transport<'_>, n: usize) -> Check {
    let name = names::CONCURRENT;
    let conn = match connect(t).await {
        Ok(c) => Arc::new(c),
        Err(d) => return Check::new(name, vec![d]),
    };
    if let Err(d) = sum(&conn, 1, 1, sum_call(1, 1)).await {
        let d = Diff::new("first call", "answered before the burst", d.render());
        return Check::new(name, vec![d]);
    }
    let mut set = JoinSet::new();
    for i in 0..n {
        let conn = conn.clone();
        let (a, b) = (i as i32, 1000 * i as i32 + 7);
        set.spawn(async move { (i, sum(&conn, a, b, sum_call(a, b)).await) });
    }
    let mut failed: Vec<(usize, Diff)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((_, Ok(()))) => {}
            Ok((i, Err(d))) => failed.push((i, d)),
            Err(e) => failed.push((usize::MAX, Diff::error("call", "answered", &e))),
        }
    }
    failed.sort_by_key(|(i, _)| *i);
    let allowed = conn.send.current_max_send_streams();
    let Some((first, d)) = failed.first().cloned() else {
        let note = match allowed {
            usize::MAX => "the server sets no limit on concurrent streams".to_owned(),
            m => format!("the server allows {m} concurrent streams"),
        };
        return Check::pass(name).with_note(note);
    };
    let count = Diff::new(
        "calls that failed",
        format!("0 of {n}"),
        format!("{} of {n}", failed.len()),
    );
    let first = super::at(&format!("call {} of {n}", first.wrapping_add(1)), d);
    Check::new(name, vec![first, count])
}
