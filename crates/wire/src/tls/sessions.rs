//! The session cache of one worker thread. rustls's in-memory cache keeps eight TLS 1.3
//! tickets per server; each ticket is used once, so more than eight connections reconnecting at
//! once run it dry and a quarter of "resumed" handshakes come out full (20 connections against
//! a server that sends two tickets per handshake). This one keeps two tickets per connection of
//! the thread, for the one server a run talks to.

use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;
use std::collections::VecDeque;
use std::sync::Mutex;

#[derive(Debug)]
pub(super) struct Sessions {
    max_tickets: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    tls13: VecDeque<Tls13ClientSessionValue>,
}

impl Sessions {
    pub(super) fn new(connections: usize) -> Sessions {
        Sessions {
            max_tickets: (2 * connections).max(8),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        // Only this thread's connections use it: the lock is never contended.
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl ClientSessionStore for Sessions {
    fn set_kx_hint(&self, _: ServerName<'static>, group: NamedGroup) {
        self.with(|s| s.kx_hint = Some(group));
    }

    fn kx_hint(&self, _: &ServerName<'_>) -> Option<NamedGroup> {
        self.with(|s| s.kx_hint)
    }

    fn set_tls12_session(&self, _: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.with(|s| s.tls12 = Some(value));
    }

    fn tls12_session(&self, _: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.with(|s| s.tls12.clone())
    }

    fn remove_tls12_session(&self, _: &ServerName<'static>) {
        self.with(|s| s.tls12 = None);
    }

    fn insert_tls13_ticket(&self, _: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.with(|s| {
            if s.tls13.len() == self.max_tickets {
                s.tls13.pop_front();
            }
            s.tls13.push_back(value);
        });
    }

    fn take_tls13_ticket(&self, _: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        // The newest first: it is the furthest from expiring.
        self.with(|s| s.tls13.pop_back())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticket_cap_grows_with_the_connections() {
        assert_eq!(Sessions::new(1).max_tickets, 8);
        assert_eq!(Sessions::new(50).max_tickets, 100);
    }
}
