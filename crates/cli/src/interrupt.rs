//! Installs serverbench's one Ctrl-C handler (serverbench-harness's `process::interrupt`) and
//! prints its notices.

use serverbench_harness::process::{install_interrupt, OnInterrupt, Stage};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn notice(stage: Stage) {
    match stage {
        Stage::Stopping => eprintln!(
            "\nserverbench: stopping: the lap in flight is dropped (Ctrl-C again to stop at once)"
        ),
        Stage::Exiting => eprintln!("\nserverbench: stopping every server and exiting"),
    }
}

/// Installs the handler (idempotent) and returns the flag the first Ctrl-C sets.
pub fn install(on: OnInterrupt) -> Arc<AtomicBool> {
    install_interrupt(on, notice).unwrap_or_else(|e| {
        eprintln!("serverbench: warning: cannot install the Ctrl-C handler: {e}");
        Arc::new(AtomicBool::new(false))
    })
}
