//! The settings of a driver's HTTP connection pool.

use std::time::Duration;

/// Connection pool settings (one keep-alive pool per driver, shared by all endpoints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionPoolOptions {
    /// Idle connections kept per host.
    pub max_idle_per_host: usize,
    /// How long an idle connection is kept.
    pub idle_timeout: Duration,
    /// Bound on establishing one connection (TCP + TLS).
    pub connect_timeout: Duration,
}

impl Default for ConnectionPoolOptions {
    fn default() -> Self {
        Self {
            max_idle_per_host: 64,
            idle_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
        }
    }
}
