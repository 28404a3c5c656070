//! Checking a request's credentials: master-key signature and date skew, or an Entra ID token.

use std::time::{Duration, SystemTime};

use ring::hmac;
use tokio::time::Instant;

use super::header::{parse, TokenType};
use super::signature::{verify, SignedFields};

/// How far `x-ms-date` may be from the emulator's clock.
pub(crate) const MAX_DATE_SKEW: Duration = Duration::from_secs(15 * 60);

/// What the emulator accepts. Secrets are redacted from `Debug`.
pub(crate) struct AuthPolicy {
    /// Master-key HMAC key; None when auth is off.
    key: Option<hmac::Key>,
    /// The bearer token accepted in `type=aad` headers, if any.
    aad_token: Option<String>,
    /// The wall clock at start-up and tokio's clock then: resource token expiry is measured on
    /// tokio's clock from there, so tests move it with paused time.
    started: (SystemTime, Instant),
}

impl std::fmt::Debug for AuthPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthPolicy")
            .field("checks_signatures", &self.key.is_some())
            .field("accepts_aad", &self.aad_token.is_some())
            .finish()
    }
}

/// What a request that passed the credential check may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anything (the account key, an accepted Entra ID token, or auth off).
    Full,
    /// What the permission this names grants, until it expires (a resource token).
    Resource(super::ResourceToken),
}

/// The request facts a credential check looks at.
pub(crate) struct Credentials<'a> {
    pub verb: &'a str,
    pub resource_type: &'a str,
    pub resource_link: &'a str,
    /// For a path addressed by resource ids, the link SDKs sign instead (see
    /// [`crate::protocol::route::rid_signing_link`]).
    pub rid_link: Option<&'a str>,
    pub authorization: Option<&'a str>,
    pub x_ms_date: Option<&'a str>,
    pub http_date: Option<&'a str>,
}

impl AuthPolicy {
    /// Checks master-key signatures made with `key`, and accepts `aad_token` when given.
    pub(crate) fn new(key: hmac::Key, aad_token: Option<String>) -> Self {
        Self {
            key: Some(key),
            aad_token,
            started: (SystemTime::now(), Instant::now()),
        }
    }

    /// Accepts every request (only when explicitly asked for).
    pub(crate) fn disabled() -> Self {
        Self {
            key: None,
            aad_token: None,
            started: (SystemTime::now(), Instant::now()),
        }
    }

    /// The resource token of the permission `token_id` names, valid for the default hour.
    pub(crate) fn resource_token(&self, token_id: &str) -> String {
        self.resource_token_for(token_id, super::resource_token::DEFAULT_TOKEN_SECONDS)
    }

    /// The resource token of the permission `token_id` names, valid for `seconds` from now (with
    /// auth off, one that names it unsigned: every request is accepted anyway).
    pub(crate) fn resource_token_for(&self, token_id: &str, seconds: u64) -> String {
        let expires = self.now_unix().saturating_add(seconds);
        match &self.key {
            Some(key) => super::resource_token::mint(key, token_id, expires),
            None => format!("type=resource&ver=1.0&sig={token_id}.{expires}.unsigned"),
        }
    }

    /// Seconds since the Unix epoch on the clock resource tokens expire by.
    pub(crate) fn now_unix(&self) -> u64 {
        let (wall, then) = self.started;
        let now = wall + Instant::now().saturating_duration_since(then);
        now.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    /// What the request may do when it may proceed; otherwise the 401 message saying what was
    /// wrong.
    pub(crate) fn check(&self, creds: &Credentials<'_>, now: SystemTime) -> Result<Access, String> {
        let Some(key) = &self.key else {
            return Ok(Access::Full);
        };
        let raw = creds
            .authorization
            .ok_or("the request has no authorization header")?;
        let header = parse(raw)?;
        match header.token_type {
            TokenType::Resource => {
                super::resource_token::verify(key, &header.signature).map(Access::Resource)
            }
            TokenType::Aad => {
                check_date(creds, now)?;
                match &self.aad_token {
                    None => Err("Entra ID (type=aad) tokens are not accepted: the emulator was started without one".into()),
                    Some(expected) if ring_eq(expected.as_bytes(), header.signature.as_bytes()) => Ok(Access::Full),
                    Some(_) => Err("the Entra ID (type=aad) token is not the one this emulator accepts".into()),
                }
            }
            TokenType::Master => {
                check_date(creds, now)?;
                let fields = SignedFields {
                    verb: creds.verb,
                    resource_type: creds.resource_type,
                    resource_link: creds.resource_link,
                    x_ms_date: creds.x_ms_date.unwrap_or(""),
                    http_date: creds.http_date.unwrap_or(""),
                };
                if verify(key, &fields, &header.signature) {
                    return Ok(Access::Full);
                }
                // Clients that send both dates commonly sign only x-ms-date.
                let without_http_date = SignedFields {
                    http_date: "",
                    ..fields
                };
                if creds.x_ms_date.is_some() && verify(key, &without_http_date, &header.signature) {
                    return Ok(Access::Full);
                }
                if let Some(rid_link) = creds.rid_link {
                    let by_rid = SignedFields {
                        resource_link: rid_link,
                        ..fields
                    };
                    let by_rid_without_http_date = SignedFields {
                        http_date: "",
                        ..by_rid
                    };
                    if verify(key, &by_rid, &header.signature)
                        || verify(key, &by_rid_without_http_date, &header.signature)
                    {
                        return Ok(Access::Full);
                    }
                }
                Err(format!(
                    "the authorization signature does not match: wrong key, or a payload built differently from \
                     the one the emulator signed: '{}'",
                    super::signature::string_to_sign(&without_http_date).escape_default()
                ))
            }
        }
    }
}

pub(super) fn ring_eq(a: &[u8], b: &[u8]) -> bool {
    // Compare HMACs of both sides so the comparison time does not depend on where they differ.
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"token-compare");
    let tag = hmac::sign(&key, a);
    hmac::verify(&key, b, tag.as_ref()).is_ok()
}

fn check_date(creds: &Credentials<'_>, now: SystemTime) -> Result<(), String> {
    let text = creds
        .x_ms_date
        .or(creds.http_date)
        .ok_or("the request has no x-ms-date header (nor a date header)")?;
    let when = parse_http_date(text)
        .ok_or_else(|| format!("the x-ms-date header {text:?} is not an RFC 1123 date"))?;
    let skew = match now.duration_since(when) {
        Ok(d) => d,
        Err(e) => e.duration(),
    };
    if skew > MAX_DATE_SKEW {
        return Err(format!(
            "the x-ms-date {text:?} is stale: it is {} s away from the emulator's clock (at most {} s allowed)",
            skew.as_secs(),
            MAX_DATE_SKEW.as_secs()
        ));
    }
    Ok(())
}

/// Parses an RFC 1123 date in any letter case ("thu, 27 apr 2017 00:51:12 gmt" included).
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let mut normalized = String::with_capacity(text.len());
    let mut word_start = true;
    for c in text.trim().chars() {
        if c.is_ascii_alphabetic() {
            normalized.push(if word_start {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            });
            word_start = false;
        } else {
            normalized.push(c);
            word_start = true;
        }
    }
    let normalized = normalized.replace("Gmt", "GMT");
    httpdate::parse_http_date(&normalized).ok()
}

#[cfg(test)]
mod tests {
    use super::super::signature::{key_from_base64, sign};
    use super::*;

    const KEY: &str =
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    fn signed(date: &str, link: &str) -> String {
        let key = key_from_base64(KEY).unwrap();
        let fields = SignedFields {
            verb: "GET",
            resource_type: "docs",
            resource_link: link,
            x_ms_date: date,
            http_date: "",
        };
        format!(
            "type%3Dmaster%26ver%3D1.0%26sig%3D{}",
            sign(&key, &fields).replace('+', "%2B")
        )
    }

    fn policy() -> AuthPolicy {
        AuthPolicy::new(key_from_base64(KEY).unwrap(), Some("aad-secret".into()))
    }

    fn creds<'a>(auth: Option<&'a str>, date: Option<&'a str>) -> Credentials<'a> {
        Credentials {
            verb: "GET",
            resource_type: "docs",
            resource_link: "dbs/d/colls/c/docs/x",
            rid_link: None,
            authorization: auth,
            x_ms_date: date,
            http_date: None,
        }
    }

    #[test]
    fn each_failure_names_its_cause() {
        let now = SystemTime::now();
        let date = httpdate::fmt_http_date(now);
        let good = signed(&date, "dbs/d/colls/c/docs/x");
        let wrong = signed(&date, "dbs/d/colls/c/docs/y");
        let old_date = httpdate::fmt_http_date(now - Duration::from_secs(16 * 60));
        let old = signed(&old_date, "dbs/d/colls/c/docs/x");
        let p = policy();
        assert!(p.check(&creds(Some(&good), Some(&date)), now).is_ok());
        assert!(p
            .check(&creds(Some(&good), Some(&date.to_lowercase())), now)
            .is_ok());
        let table: Vec<(Credentials<'_>, &str)> = vec![
            (creds(None, Some(&date)), "no authorization header"),
            (creds(Some("nonsense"), Some(&date)), "malformed"),
            (creds(Some(&wrong), Some(&date)), "signature does not match"),
            (creds(Some(&good), None), "no x-ms-date"),
            (creds(Some(&old), Some(&old_date)), "stale"),
            (
                creds(Some("type=aad&ver=1.0&sig=nope"), Some(&date)),
                "not the one",
            ),
        ];
        for (c, reason) in table {
            let err = p.check(&c, now).unwrap_err();
            assert!(err.contains(reason), "expected {reason:?} in {err:?}");
        }
        assert!(p
            .check(
                &creds(Some("type=aad&ver=1.0&sig=aad-secret"), Some(&date)),
                now
            )
            .is_ok());
    }

    #[test]
    fn errors_never_contain_the_key_or_signature() {
        let now = SystemTime::now();
        let date = httpdate::fmt_http_date(now);
        let err = policy()
            .check(&creds(Some("type=aad&ver=1.0&sig=guess"), Some(&date)), now)
            .unwrap_err();
        assert!(!err.contains("aad-secret") && !err.contains("guess"));
        assert!(!format!("{:?}", policy()).contains("aad-secret"));
    }

    #[test]
    fn disabled_policy_accepts_anything() {
        assert!(AuthPolicy::disabled()
            .check(&creds(None, None), SystemTime::now())
            .is_ok());
    }

    #[test]
    fn dates_parse_in_any_case() {
        let a = parse_http_date("thu, 27 apr 2017 00:51:12 gmt").unwrap();
        let b = parse_http_date("Thu, 27 Apr 2017 00:51:12 GMT").unwrap();
        assert_eq!(a, b);
        assert!(parse_http_date("yesterday").is_none());
    }
}
