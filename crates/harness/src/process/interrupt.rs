//! Ctrl-C and SIGTERM: a handler that only writes to a pipe, and a thread that stops every
//! registered server group, then exits.

use super::stop_all_registered;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

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

/// On SIGINT or SIGTERM: [`stop_all_registered`], then `exit(exit_code)` (130 by convention).
/// The handler only writes to a pipe; a thread does the cleanup. Idempotent; `notice` runs
/// (e.g. prints) before the cleanup.
pub fn install_interrupt_cleanup(exit_code: i32, notice: fn(libc::c_int)) -> std::io::Result<()> {
    static INSTALLED: Mutex<bool> = Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if *installed {
        return Ok(());
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    INTERRUPT_PIPE.store(fds[1], Ordering::Relaxed);
    let reader = fds[0];
    std::thread::Builder::new()
        .name("interrupt-cleanup".into())
        .spawn(move || {
            let mut b = 0u8;
            loop {
                // SAFETY: reading one byte into a live stack variable.
                let n = unsafe { libc::read(reader, (&mut b as *mut u8).cast(), 1) };
                if n == 1 {
                    break;
                }
                if n == 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    return;
                }
            }
            notice(libc::c_int::from(b));
            stop_all_registered();
            std::process::exit(exit_code);
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
    *installed = true;
    Ok(())
}
