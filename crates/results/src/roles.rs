//! The roles whose processes a lap samples: the server, the load's client, the database the
//! harness starts for database laps (and room for more). The server's figures stay in
//! [`LapRecord::server_stats`] (where every record before roles keeps them); the other roles'
//! are in [`LapRecord::roles`]; [`LapRecord::stats`] reads either.

use crate::record::{LapRecord, ServerStats};
use serde::{Deserialize, Serialize};

/// What a group of processes does in a lap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The server measured.
    Server,
    /// The load generator.
    Client,
    /// The database the server queries (database laps).
    Database,
}

impl Role {
    /// Every role, in report order.
    pub const ALL: [Role; 3] = [Role::Server, Role::Client, Role::Database];

    /// Its name in records and reports.
    pub fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Client => "client",
            Role::Database => "database",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A role's process tree, sampled from `/proc` during the lap (the server's figures).
pub type ProcessStats = ServerStats;

impl LapRecord {
    /// The figures of `role`'s processes in this lap, if they were sampled.
    pub fn stats(&self, role: Role) -> Option<&ProcessStats> {
        match role {
            Role::Server => self.server_stats.as_ref(),
            other => self.roles.get(&other),
        }
    }

    /// Records `role`'s figures (the server's in `server_stats`, as every record has them).
    pub fn set_stats(&mut self, role: Role, stats: ProcessStats) {
        match role {
            Role::Server => self.server_stats = Some(stats),
            other => {
                self.roles.insert(other, stats);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_spelled_in_lowercase_in_records() {
        let json = serde_json::to_string(&Role::Database).unwrap();
        assert_eq!(json, "\"database\"");
        assert_eq!(
            serde_json::from_str::<Role>("\"server\"").unwrap(),
            Role::Server
        );
    }
}
