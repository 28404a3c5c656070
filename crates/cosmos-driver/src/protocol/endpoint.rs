//! Service endpoints: a validated base URL, ready to build request URIs from without formatting.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::sync::Arc;

use http::uri::{Authority, Scheme};

use super::protocol_error::ProtocolError;

/// The base URL of an account or regional endpoint (`https://host:port/`). Cheap to clone.
#[derive(Clone)]
pub struct Endpoint(Arc<Inner>);

struct Inner {
    url: String,
    scheme: Scheme,
    authority: Authority,
    host: String,
    /// The `Host` header: `host` for the scheme's default port, `host:port` otherwise.
    host_header: http::HeaderValue,
    is_loopback: bool,
    health_key: u64,
}

fn host_is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.eq_ignore_ascii_case("localhost") {
        return true;
    }
    bare.parse::<IpAddr>()
        .map(|ip| ip.is_loopback())
        .unwrap_or(false)
}

impl Endpoint {
    /// Parses and validates an endpoint URL.
    ///
    /// Only `https` is accepted, except plain `http` for loopback hosts or when `allow_insecure_http`
    /// is set. A path other than `/`, a query or a fragment is refused.
    pub fn parse(text: &str, allow_insecure_http: bool) -> Result<Self, ProtocolError> {
        let uri: http::Uri = text.trim().parse().map_err(|e| {
            ProtocolError::new(format!("the endpoint {text:?} is not a valid URL: {e}"))
        })?;
        let scheme = uri.scheme().cloned().ok_or_else(|| {
            ProtocolError::new(format!(
                "the endpoint {text:?} has no scheme (expected https://host)"
            ))
        })?;
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| ProtocolError::new(format!("the endpoint {text:?} has no host")))?;
        if authority.as_str().contains('@') {
            return Err(ProtocolError::new(format!(
                "the endpoint {text:?} carries user information, which is not allowed"
            )));
        }
        let host = authority.host().to_string();
        if host.is_empty() {
            return Err(ProtocolError::new(format!(
                "the endpoint {text:?} has no host"
            )));
        }
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return Err(ProtocolError::new(format!(
                "the endpoint {text:?} has a path or query; give the account URL only (https://host:port/)"
            )));
        }
        let is_loopback = host_is_loopback(&host);
        if scheme == Scheme::HTTP {
            if !(is_loopback || allow_insecure_http) {
                return Err(ProtocolError::new(format!(
                    "the endpoint {text:?} uses plain http on a non-loopback host; use https, or set allow_insecure_http"
                )));
            }
        } else if scheme != Scheme::HTTPS {
            return Err(ProtocolError::new(format!(
                "the endpoint {text:?} uses scheme {scheme}; only https (and http on loopback) are supported"
            )));
        }
        let port = authority
            .port_u16()
            .unwrap_or(if scheme == Scheme::HTTPS { 443 } else { 80 });
        let authority: Authority =
            format!("{}:{port}", authority.host())
                .parse()
                .map_err(|_| {
                    ProtocolError::new(format!("the endpoint {text:?} has an invalid host"))
                })?;
        let url = format!("{}://{}/", scheme, authority);
        let default_port = if scheme == Scheme::HTTPS { 443 } else { 80 };
        let host_text = if port == default_port {
            authority.host().to_string()
        } else {
            authority.as_str().to_string()
        };
        let host_header = http::HeaderValue::from_str(&host_text).map_err(|_| {
            ProtocolError::new(format!("the endpoint {text:?} has an invalid host"))
        })?;
        // Share the bytes now, so that every request's clone is a reference count increment.
        drop(host_header.clone());
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        url.to_ascii_lowercase().hash(&mut hasher);
        // 0 marks an empty slot in the health store.
        let health_key = hasher.finish().max(1);
        Ok(Endpoint(Arc::new(Inner {
            url,
            scheme,
            authority,
            host,
            host_header,
            is_loopback,
            health_key,
        })))
    }

    /// The normalized URL (`scheme://host:port/`).
    pub fn as_str(&self) -> &str {
        &self.0.url
    }

    /// The URL scheme.
    pub fn scheme(&self) -> &Scheme {
        &self.0.scheme
    }

    /// `host:port`.
    pub fn authority(&self) -> &Authority {
        &self.0.authority
    }

    /// The host name or address.
    pub fn host(&self) -> &str {
        &self.0.host
    }

    /// The `Host` header value for requests to this endpoint.
    pub(crate) fn host_header(&self) -> &http::HeaderValue {
        &self.0.host_header
    }

    /// Whether the host is a loopback address (or `localhost`).
    pub fn is_loopback(&self) -> bool {
        self.0.is_loopback
    }

    /// A stable non-zero key of this endpoint for the lock-free health store.
    pub(crate) fn health_key(&self) -> u64 {
        self.0.health_key
    }
}

impl PartialEq for Endpoint {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.url.eq_ignore_ascii_case(&other.0.url)
    }
}
impl Eq for Endpoint {}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({})", self.0.url)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_keys() {
        let e = Endpoint::parse("https://acct.documents.azure.com:443/", false).unwrap();
        assert_eq!(e.as_str(), "https://acct.documents.azure.com:443/");
        let f = Endpoint::parse("https://ACCT.documents.azure.com", false).unwrap();
        assert_eq!(e, f);
        assert_eq!(e.health_key(), f.health_key());
        assert_eq!(e.host_header(), "acct.documents.azure.com");
        let local = Endpoint::parse("http://127.0.0.1:8081/", false).unwrap();
        assert_eq!(local.host_header(), "127.0.0.1:8081");
        assert_ne!(e.health_key(), 0);
    }

    #[test]
    fn http_only_on_loopback_or_when_allowed() {
        assert!(Endpoint::parse("http://127.0.0.1:8081/", false)
            .unwrap()
            .is_loopback());
        assert!(Endpoint::parse("http://localhost:8081", false).is_ok());
        assert!(Endpoint::parse("http://[::1]:8081/", false).is_ok());
        let err = Endpoint::parse("http://example.com/", false).unwrap_err();
        assert!(err.message().contains("plain http"), "{}", err.message());
        assert!(Endpoint::parse("http://example.com/", true).is_ok());
    }

    #[test]
    fn malformed_urls_name_the_problem() {
        for (text, needle) in [
            ("not a url", "not a valid URL"),
            ("example.com", "no scheme"),
            ("https://a.example/dbs/x", "path or query"),
            ("https://a.example/?x=1", "path or query"),
            ("ftp://a.example/", "only https"),
            ("https://user:pw@a.example/", "user information"),
        ] {
            let err = Endpoint::parse(text, false).unwrap_err();
            assert!(err.message().contains(needle), "{text}: {}", err.message());
        }
    }
}
