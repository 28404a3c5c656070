//! Who may use the admin API (`/_emulator/*`): a loopback `Host` (or the address the emulator was
//! told to listen on), the account key or the admin token as a bearer credential, and JSON bodies.
//!
//! A web page the developer visits can send a `text/plain` POST to localhost without a preflight,
//! and DNS rebinding can point a foreign name at 127.0.0.1; neither can add an `Authorization`
//! header nor a `Host` that is a loopback name, so these checks keep both out.

use std::net::IpAddr;

use http::{HeaderMap, Method};

use super::verify::ring_eq;
use crate::protocol::{headers, ApiError};

/// What the admin API accepts. Secrets are redacted from `Debug`.
pub(crate) struct AdminAccess {
    /// The account key (base64 text as configured) and, when set, the admin token.
    secrets: Vec<String>,
    /// The address the listeners are bound to; a `Host` naming it is accepted too.
    listen: IpAddr,
    /// The advertised host (`--advertise-host`), accepted as a `Host` too: the operator named it.
    advertised: Option<String>,
}

impl std::fmt::Debug for AdminAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminAccess")
            .field("secrets", &self.secrets.len())
            .field("listen", &self.listen)
            .finish()
    }
}

impl AdminAccess {
    /// Accepts `Authorization: Bearer <account_key>` and, when given, `Bearer <admin_token>`.
    pub(crate) fn new(account_key: &str, admin_token: Option<&str>, listen: IpAddr) -> Self {
        let mut secrets = vec![account_key.to_owned()];
        secrets.extend(admin_token.map(str::to_owned));
        Self {
            secrets,
            listen,
            advertised: None,
        }
    }

    /// Also accepts a `Host` naming `name` (the host the account's endpoints advertise).
    pub(crate) fn also_host(mut self, name: Option<&str>) -> Self {
        self.advertised = name
            .map(|n| {
                n.trim()
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned()
            })
            .filter(|n| !n.is_empty());
        self
    }

    /// Ok when the request may reach the admin API: 403 for a foreign `Host`, 401 without the
    /// credential, 415 for a POST, PUT or PATCH whose body is not `application/json`.
    pub(crate) fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = headers
            .get(http::header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !self.host_allowed(host) {
            return Err(ApiError::new(
                403,
                format!(
                    "The admin API answers only requests whose Host is a loopback name (localhost, 127.0.0.1, [::1]) \
                     or the address the emulator listens on; this one names {:?}.",
                    cut(host)
                ),
            ));
        }
        let presented = headers
            .get(headers::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer);
        match presented {
            None => {
                return Err(ApiError::new(
                    401,
                    "The admin API needs the account key (or the --admin-token) as \"Authorization: Bearer <key>\".",
                ))
            }
            Some(given) if !self.secrets.iter().any(|s| ring_eq(s.as_bytes(), given.as_bytes())) => {
                return Err(ApiError::new(
                    401,
                    "The admin API credential is neither the account key nor the admin token.",
                ))
            }
            Some(_) => {}
        }
        let has_body = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
        if has_body && !is_json(headers) {
            return Err(ApiError::new(
                415,
                "The admin API takes JSON bodies only: send Content-Type: application/json.",
            ));
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.eq_ignore_ascii_case("localhost")
            || self
                .advertised
                .as_deref()
                .is_some_and(|a| name.eq_ignore_ascii_case(a))
        {
            return true;
        }
        let Ok(ip) = name.parse::<IpAddr>() else {
            return false;
        };
        // A name that is an address literal cannot be rebound by DNS; when the emulator listens on
        // every interface, any of its addresses may be named.
        ip.is_loopback() || ip == self.listen || self.listen.is_unspecified()
    }
}

/// The host part of a `Host` header: `[::1]:8081` -> `::1`, `localhost:8081` -> `localhost`.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim())
        .filter(|s| !s.is_empty())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(headers::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    /// A request's method and headers, and the status it is refused with (None: admitted).
    const JSON: (&str, &str) = ("content-type", "application/json; charset=utf-8");

    type Case = (Method, &'static [(&'static str, &'static str)], Option<u16>);

    #[test]
    fn each_refusal_has_its_status() {
        let access = AdminAccess::new("S2V5", Some("tok"), IpAddr::V4(Ipv4Addr::LOCALHOST));
        let table: &[Case] = &[
            (
                Method::GET,
                &[("host", "localhost:8081"), ("authorization", "Bearer S2V5")],
                None,
            ),
            (
                Method::GET,
                &[("host", "127.0.0.1"), ("authorization", "bearer tok")],
                None,
            ),
            (
                Method::GET,
                &[("host", "[::1]:1"), ("authorization", "Bearer S2V5")],
                None,
            ),
            (
                Method::GET,
                &[("host", "127.9.9.9:1"), ("authorization", "Bearer S2V5")],
                None,
            ),
            (
                Method::POST,
                &[
                    ("host", "localhost"),
                    ("authorization", "Bearer S2V5"),
                    JSON,
                ],
                None,
            ),
            (
                Method::GET,
                &[("host", "evil.example"), ("authorization", "Bearer S2V5")],
                Some(403),
            ),
            (
                Method::GET,
                &[("host", "10.0.0.1:8081"), ("authorization", "Bearer S2V5")],
                Some(403),
            ),
            (Method::GET, &[("authorization", "Bearer S2V5")], Some(403)),
            (Method::GET, &[("host", "localhost")], Some(401)),
            (
                Method::GET,
                &[("host", "localhost"), ("authorization", "Bearer nope")],
                Some(401),
            ),
            (
                Method::GET,
                &[("host", "localhost"), ("authorization", "S2V5")],
                Some(401),
            ),
            (
                Method::POST,
                &[("host", "localhost"), ("authorization", "Bearer S2V5")],
                Some(415),
            ),
            (
                Method::PUT,
                &[
                    ("host", "localhost"),
                    ("authorization", "Bearer S2V5"),
                    ("content-type", "text/plain"),
                ],
                Some(415),
            ),
        ];
        for (method, pairs, want) in table {
            let got = access
                .check(method, &headers(pairs))
                .err()
                .map(|e| e.status);
            assert_eq!(got, *want, "{method} {pairs:?}");
        }
    }

    #[test]
    fn the_listen_address_is_a_valid_host_and_secrets_stay_out_of_debug() {
        let access = AdminAccess::new("S2V5", Some("tok"), "10.0.0.1".parse().unwrap());
        let h = headers(&[("host", "10.0.0.1:8081"), ("authorization", "Bearer tok")]);
        assert!(access.check(&Method::GET, &h).is_ok());
        let shown = format!("{access:?}");
        assert!(
            !shown.contains("S2V5") && !shown.contains("tok\""),
            "{shown}"
        );
        let any = AdminAccess::new("S2V5", None, "0.0.0.0".parse().unwrap());
        let h = headers(&[("host", "192.168.1.5"), ("authorization", "Bearer S2V5")]);
        assert!(any.check(&Method::GET, &h).is_ok());
        let h = headers(&[
            ("host", "rebound.example"),
            ("authorization", "Bearer S2V5"),
        ]);
        assert_eq!(any.check(&Method::GET, &h).unwrap_err().status, 403);
    }
}
