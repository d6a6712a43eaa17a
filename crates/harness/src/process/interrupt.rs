//! Ctrl-C and SIGTERM, handled in one place for every command: the signal handler only writes a
//! byte to a pipe (async-signal-safe); a thread reads it and acts.
//!
//! - [`OnInterrupt::Exit`] (`serve`, `verify`): stop every registered server group, exit
//!   [`INTERRUPTED`] (130).
//! - [`OnInterrupt::Cancel`] (`run`): the first signal sets the cancel flag, so the lap in flight
//!   is dropped (never recorded) and the run ends cleanly; a second signal, or a graceful stop
//!   lasting longer than [`GRACE`], stops every group and exits [`INTERRUPTED`].
//!
//! Servers and load tools run in process groups of their own, so a terminal's Ctrl-C reaches
//! only serverbench, which then decides what to stop.

use super::stop_all_registered;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a graceful stop may take before everything is stopped at once.
pub const GRACE: Duration = Duration::from_secs(15);

/// The exit status of an interrupted serverbench: 128 + SIGINT, as shells report Ctrl-C. The
/// CLI's `Exit::Interrupted` has this code too.
pub const INTERRUPTED: u8 = 128 + libc::SIGINT as u8;

static INTERRUPT_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_interrupt(sig: libc::c_int) {
    let fd = INTERRUPT_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; one byte from a live stack variable.
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// What the first signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnInterrupt {
    /// Stop every registered server group and exit [`INTERRUPTED`].
    Exit,
    /// Set the cancel flag; the second signal (or [`GRACE`]) exits.
    Cancel,
}

/// What is happening, for the notice the caller prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The first signal of a graceful stop: the lap in flight is being dropped.
    Stopping,
    /// Every server group is being stopped and serverbench exits.
    Exiting,
}

/// Installs the handler for SIGINT and SIGTERM (once per process; later calls return the same
/// flag) and returns the cancel flag the first signal sets. `notice` runs before each stage.
pub fn install_interrupt(on: OnInterrupt, notice: fn(Stage)) -> std::io::Result<Arc<AtomicBool>> {
    static INSTALLED: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(flag) = installed.as_ref() {
        return Ok(Arc::clone(flag));
    }
    let reader = pipe()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || {
            if !read_byte(reader, None) {
                return;
            }
            // Set in both modes: with `Exit`, a caller that sees its server die while the
            // groups are being stopped knows the exit ([`INTERRUPTED`]) is on its way.
            flag.store(true, Ordering::SeqCst);
            if on == OnInterrupt::Cancel {
                notice(Stage::Stopping);
                read_byte(reader, Some(GRACE));
            }
            notice(Stage::Exiting);
            stop_all_registered();
            std::process::exit(i32::from(INTERRUPTED));
        })?;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a plain handler and SA_RESTART is valid.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    *installed = Some(Arc::clone(&cancel));
    Ok(cancel)
}

/// Creates the pipe, publishes its write end to the handler and returns the read end.
fn pipe() -> std::io::Result<libc::c_int> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    INTERRUPT_PIPE.store(fds[1], Ordering::Relaxed);
    Ok(fds[0])
}

/// Waits for one byte on `fd` (at most `timeout`); true when one arrived.
fn read_byte(fd: libc::c_int, timeout: Option<Duration>) -> bool {
    let ms = timeout.map_or(-1, |t| t.as_millis() as libc::c_int);
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return false;
        }
        let mut b = 0u8;
        // SAFETY: reading one byte into a live stack variable.
        return unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) } == 1;
    }
}
