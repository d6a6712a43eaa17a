//! Ctrl-C and SIGTERM: stop every server process group the harness started, then exit 130.

/// Installs the handler (idempotent). Call it once at the start of `main`.
pub fn install_cleanup_on_interrupt() {
    if let Err(e) = serverbench_harness::process::install_interrupt_cleanup(130, notice) {
        eprintln!("serverbench: warning: cannot install the Ctrl-C handler: {e}");
    }
}

fn notice(sig: libc::c_int) {
    let name = if sig == libc::SIGTERM {
        "SIGTERM"
    } else {
        "interrupted"
    };
    eprintln!("\nserverbench: {name}: stopping the servers");
}
