//! Per-thread statistics of HTTP/2 connections: the server's SETTINGS as the first connection
//! saw them, GOAWAYs, and HTTP/2 errors by code (protocol errors, reset streams).

use crate::h2::{frame, Settings};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct H2Stats {
    /// The server's SETTINGS on the first connection that got them.
    pub settings: Option<Settings>,
    /// GOAWAY frames received during measurement.
    pub goaways: u64,
    /// `errors.protocol` by error code (a handful at most: a list beats a map).
    pub errors: Vec<(u32, u64)>,
}

impl H2Stats {
    pub fn settings(&mut self, s: Settings) {
        self.settings.get_or_insert(s);
    }

    pub fn error(&mut self, code: u32) {
        add(&mut self.errors, code, 1);
    }

    /// Errors by the code's RFC name.
    pub fn errors_by_name(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.errors.iter().map(|&(c, n)| (frame::error_name(c), n))
    }
}

fn add(list: &mut Vec<(u32, u64)>, code: u32, n: u64) {
    match list.iter_mut().find(|(c, _)| *c == code) {
        Some((_, m)) => *m += n,
        None => list.push((code, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_add_up_by_code_and_the_first_settings_are_kept() {
        let mut a = H2Stats::default();
        let first = Settings {
            max_concurrent_streams: Some(5),
            ..Default::default()
        };
        a.settings(first);
        a.settings(Settings::default());
        a.error(frame::PROTOCOL_ERROR);
        a.error(frame::PROTOCOL_ERROR);
        a.error(frame::FLOW_CONTROL_ERROR);
        a.goaways = 2;
        assert_eq!(a.settings, Some(first));
        assert_eq!(a.goaways, 2);
        let named: Vec<_> = a.errors_by_name().collect();
        assert_eq!(
            named,
            vec![("PROTOCOL_ERROR", 2), ("FLOW_CONTROL_ERROR", 1)]
        );
    }
}
