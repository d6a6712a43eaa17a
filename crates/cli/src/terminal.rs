//! The terminal the CLI writes to.

/// The terminal's columns, from stderr (`None` when it is not a terminal).
pub fn width() -> Option<usize> {
    // SAFETY: TIOCGWINSZ fills a winsize; stderr is a valid descriptor (maybe not a tty, then
    // the call fails and nothing is read).
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        (libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0)
            .then_some(ws.ws_col as usize)
    }
}
