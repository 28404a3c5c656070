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
    /// The HTTP version spoken to the service.
    pub http_version: HttpVersion,
}

/// The HTTP version a driver speaks to the service's endpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.1 on keep-alive connections: one request in flight per connection, so concurrent
    /// requests to one endpoint open as many connections, and a cancelled request (the losing leg
    /// of a hedged read) closes its connection.
    #[default]
    Http1,
    /// HTTP/2: offered by ALPN over TLS (HTTP/1.1 when the server does not offer `h2`), and with
    /// prior knowledge over plain `http://` (an emulator), whose server must then speak it. One
    /// connection per endpoint carries every request to it; a cancelled request resets its stream
    /// and the connection stays.
    Http2,
}

impl Default for ConnectionPoolOptions {
    fn default() -> Self {
        Self {
            max_idle_per_host: 64,
            idle_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
            http_version: HttpVersion::Http1,
        }
    }
}
