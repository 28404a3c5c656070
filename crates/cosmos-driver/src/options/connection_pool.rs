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
    /// HTTP/1.1 only, on keep-alive connections: one request in flight per connection, so
    /// concurrent requests to one endpoint open as many connections, and a cancelled request (the
    /// losing leg of a hedged read) closes its connection. The default: at 5,000 reads/s it costs
    /// less CPU per read than HTTP/2 and has lower tails (`bench/http_versions.sh`, figures in the
    /// crate README), at the price of tens of connections per endpoint instead of one.
    #[default]
    Http1,
    /// HTTP/2 wherever it can be negotiated, HTTP/1.1 elsewhere: over TLS (every account) each
    /// connection offers `h2` and `http/1.1` by ALPN and the server picks; over plain `http://` (an
    /// emulator) HTTP/1.1, since prior knowledge would break a server that speaks only HTTP/1.1.
    /// For many clients per account, or where connections are scarce.
    Negotiated,
    /// HTTP/2: offered by ALPN over TLS (HTTP/1.1 when the server does not offer `h2`), and with
    /// prior knowledge over plain `http://` (an emulator), whose server must then speak it. One
    /// connection per endpoint carries every request to it; a cancelled request resets its stream
    /// and the connection stays.
    Http2,
}

impl HttpVersion {
    /// Whether TLS connections offer `h2` by ALPN.
    pub(crate) fn offers_h2_over_tls(self) -> bool {
        !matches!(self, Self::Http1)
    }

    /// Whether plain `http://` connections speak HTTP/2 with prior knowledge.
    pub(crate) fn h2_prior_knowledge(self) -> bool {
        matches!(self, Self::Http2)
    }
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

#[cfg(test)]
mod tests {
    use super::HttpVersion;

    #[test]
    fn what_each_version_speaks() {
        // (version, offers h2 over TLS, h2 with prior knowledge over http://)
        let table = [
            (HttpVersion::Negotiated, true, false),
            (HttpVersion::Http1, false, false),
            (HttpVersion::Http2, true, true),
        ];
        for (version, tls, plain) in table {
            assert_eq!(version.offers_h2_over_tls(), tls, "{version:?}");
            assert_eq!(version.h2_prior_knowledge(), plain, "{version:?}");
        }
        assert_eq!(HttpVersion::default(), HttpVersion::Http1);
    }
}
