//! Resource tokens: a permission's `_token` (`type=resource&ver=1.0&sig=...`), sent as the whole
//! `authorization` header of requests on the resource the permission covers.
//!
//! A credential holds tokens by the resource link each was granted on (the permission's
//! `resource`, such as `dbs/shop/colls/orders`). Each request is signed with the token whose link
//! covers the request's resource (the longest such link); a request above every granted resource
//! (the account read at start, a container's metadata when the grant is on one of its items) with
//! a token granted below it, which the service accepts for those reads; any other request with
//! the first token, so that the service answers it (403 when nothing covers it).

use std::fmt;
use std::sync::Arc;

use http::HeaderValue;
use serde::{Deserialize, Deserializer};

use crate::error::{CosmosError, ErrorKind};

/// A resource token as the service issues it in a permission's `_token`. A secret: `Debug` never
/// shows it; [`ResourceToken::secret`] gives the text.
#[derive(Clone, PartialEq, Eq)]
pub struct ResourceToken(Arc<str>);

impl ResourceToken {
    /// A token, as read from a permission (`type=resource&ver=1.0&sig=...`).
    pub fn new(token: impl Into<String>) -> Self {
        Self(Arc::from(token.into()))
    }

    /// The token's text, to hand to whoever is to sign with it.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl From<String> for ResourceToken {
    fn from(token: String) -> Self {
        Self::new(token)
    }
}

impl From<&str> for ResourceToken {
    fn from(token: &str) -> Self {
        Self::new(token)
    }
}

impl fmt::Debug for ResourceToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResourceToken(<redacted>)")
    }
}

impl<'de> Deserialize<'de> for ResourceToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::new)
    }
}

/// Hands out the token for a request's resource link (`""` for the account read at start);
/// `None`: no token covers it.
pub(crate) type TokenProvider = dyn Fn(&str) -> Option<ResourceToken> + Send + Sync;

/// Where a credential's resource tokens come from.
pub(crate) enum ResourceTokenSource {
    /// A fixed set, chosen from by link.
    Fixed(ResourceTokens),
    /// The application's provider, asked for every request.
    Provider(Box<TokenProvider>),
}

impl ResourceTokenSource {
    /// The `authorization` header of a request on `resource_link`; why not (naming the link,
    /// never a token) when the provider has no token for it or gives one that cannot be sent.
    pub(crate) fn authorization(&self, resource_link: &str) -> Result<HeaderValue, CosmosError> {
        match self {
            ResourceTokenSource::Fixed(tokens) => Ok(tokens.authorization(resource_link)),
            ResourceTokenSource::Provider(provider) => {
                let token = provider(resource_link).ok_or_else(|| {
                    refused(format!(
                        "the resource token provider has no token for {resource_link:?}"
                    ))
                })?;
                header(&token).map_err(|why| {
                    refused(format!(
                        "the resource token provided for {resource_link:?} {why}"
                    ))
                })
            }
        }
    }
}

/// Tokens by the resource link each covers, each ready as a header value.
pub(crate) struct ResourceTokens {
    links: Vec<String>,
    headers: Vec<HeaderValue>,
}

/// Most tokens one credential holds.
const MAX_TOKENS: usize = 10_000;
/// Longest token accepted (a service token is a few hundred bytes).
const MAX_TOKEN_LEN: usize = 8 * 1024;

fn refused(message: String) -> CosmosError {
    CosmosError::new(ErrorKind::Credential, message)
}

impl ResourceTokens {
    /// Tokens from `(resource link, token)` pairs; why not, without repeating any token.
    pub(crate) fn new(
        tokens: impl IntoIterator<Item = (String, ResourceToken)>,
    ) -> Result<Self, CosmosError> {
        let mut links = Vec::new();
        let mut headers = Vec::new();
        for (link, token) in tokens {
            if links.len() == MAX_TOKENS {
                return Err(refused(format!(
                    "more than {MAX_TOKENS} resource tokens were given"
                )));
            }
            let link = link.trim_matches('/').to_owned();
            if link.is_empty() {
                return Err(refused(
                    "a resource token was given for an empty resource link".into(),
                ));
            }
            headers.push(
                header(&token)
                    .map_err(|why| refused(format!("the resource token for {link:?} {why}")))?,
            );
            links.push(link);
        }
        if links.is_empty() {
            return Err(refused("no resource token was given".into()));
        }
        Ok(Self { links, headers })
    }

    /// The `authorization` header of a request on `resource_link`.
    pub(crate) fn authorization(&self, resource_link: &str) -> HeaderValue {
        self.headers[choose(&self.links, resource_link)].clone()
    }
}

/// Which of the tokens granted on `links` (not empty) signs a request on `request_link`.
fn choose(links: &[String], request_link: &str) -> usize {
    let request = request_link.trim_matches('/');
    let covering = links
        .iter()
        .enumerate()
        .filter(|(_, l)| under(request, l))
        .max_by_key(|(i, l)| (l.len(), std::cmp::Reverse(*i)));
    if let Some((i, _)) = covering {
        return i;
    }
    links.iter().position(|l| under(l, request)).unwrap_or(0)
}

/// Whether `link` is `within` or below it (whole segments; the empty link holds everything).
fn under(link: &str, within: &str) -> bool {
    within.is_empty()
        || link == within
        || (link.starts_with(within) && link.as_bytes().get(within.len()) == Some(&b'/'))
}

/// The header value of `token`: URL-encoded as the service expects, unless it already is.
fn header(token: &ResourceToken) -> Result<HeaderValue, &'static str> {
    let text = token.secret().trim();
    if text.is_empty() {
        return Err("is empty");
    }
    if text.len() > MAX_TOKEN_LEN {
        return Err("is too long");
    }
    let lower = text.get(..7).unwrap_or_default().to_ascii_lowercase();
    let encoded = if lower == "type%3d" {
        text.to_owned()
    } else if lower.starts_with("type=") {
        url_encode(text)
    } else {
        return Err("is not a resource token (type=resource&ver=1.0&sig=...)");
    };
    let mut value =
        HeaderValue::from_str(&encoded).map_err(|_| "holds characters a header cannot")?;
    value.set_sensitive(true);
    Ok(value)
}

/// Percent-encodes every byte outside the URI unreserved set.
fn url_encode(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len() * 3 / 2);
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_covering_token_signs() {
        let links: Vec<String> = [
            "dbs/shop/colls/orders",
            "dbs/shop",
            "dbs/shop/colls/orders/docs/o1",
            "dbs/shop/colls/payments/docs/p1",
        ]
        .map(String::from)
        .to_vec();
        let table: &[(&str, usize)] = &[
            // Covered: the longest covering link.
            ("dbs/shop/colls/orders/docs/o1", 2),
            ("dbs/shop/colls/orders/docs/o2", 0),
            ("dbs/shop/colls/orders", 0),
            ("/dbs/shop/colls/orders/", 0),
            ("dbs/shop/colls/payments", 1),
            ("dbs/shop/colls/payments/docs/p1", 3),
            ("dbs/shop", 1),
            // A prefix that is not a whole segment does not cover.
            ("dbs/shop/colls/orders2", 1),
            // Above every grant: a token granted below.
            ("", 0),
            ("dbs", 0),
            // Nothing related: the first token, for the service to refuse.
            ("dbs/other/colls/x", 0),
        ];
        for (request, expected) in table {
            assert_eq!(choose(&links, request), *expected, "{request}");
        }
        let below_only: Vec<String> = ["dbs/a/colls/x", "dbs/b/colls/y/docs/i"]
            .map(String::from)
            .to_vec();
        for (request, expected) in [
            ("dbs/b/colls/y", 1),
            ("dbs/b", 1),
            ("dbs/a", 0),
            ("dbs/c", 0),
            ("", 0),
        ] {
            assert_eq!(choose(&below_only, request), expected, "{request}");
        }
    }

    #[test]
    fn tokens_are_sent_url_encoded_once() {
        let table: &[(&str, Option<&str>)] = &[
            (
                "type=resource&ver=1.0&sig=d.u.p.99.ab+c/d==",
                Some("type%3Dresource%26ver%3D1.0%26sig%3Dd.u.p.99.ab%2Bc%2Fd%3D%3D"),
            ),
            (
                "type%3Dresource%26ver%3D1.0%26sig%3Dx",
                Some("type%3Dresource%26ver%3D1.0%26sig%3Dx"),
            ),
            ("", None),
            ("   ", None),
            ("Bearer abc", None),
            ("type%3Dresource\u{1}%26sig%3Dx", None),
        ];
        for (token, expected) in table {
            let got = header(&ResourceToken::new(*token)).ok();
            assert_eq!(
                got.as_ref().map(|h| h.to_str().unwrap()),
                *expected,
                "{token:?}"
            );
            if let Some(h) = got {
                assert!(h.is_sensitive());
            }
        }
        let long = format!("type=resource&ver=1.0&sig={}", "a".repeat(MAX_TOKEN_LEN));
        assert!(header(&ResourceToken::new(long)).is_err());
    }

    #[test]
    fn a_provider_is_asked_with_the_requests_link() {
        let source = ResourceTokenSource::Provider(Box::new(|link: &str| {
            (link == "dbs/d/colls/c").then(|| ResourceToken::new("type=resource&ver=1.0&sig=x+y"))
        }));
        let got = source.authorization("dbs/d/colls/c").unwrap();
        assert_eq!(
            got.to_str().unwrap(),
            "type%3Dresource%26ver%3D1.0%26sig%3Dx%2By"
        );
        let err = source.authorization("dbs/d/colls/other").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Credential);
        assert!(err.message().contains("dbs/d/colls/other"), "{err}");
        let bad = ResourceTokenSource::Provider(Box::new(|_: &str| {
            Some(ResourceToken::new("SECRETMAC-not-a-token"))
        }));
        let err = bad.authorization("dbs/d").unwrap_err();
        assert!(!format!("{err} {err:?}").contains("SECRETMAC"), "{err}");
    }

    #[test]
    fn errors_and_debug_never_show_a_token() {
        let secret = "type%3Dresource%26ver%3D1.0%26sig%3Dd.u.p.99.SECRETMAC\u{1}";
        let err = ResourceTokens::new([("dbs/d".to_owned(), ResourceToken::new(secret))])
            .err()
            .unwrap();
        assert!(!format!("{err} {err:?}").contains("SECRETMAC"));
        assert_eq!(
            format!("{:?}", ResourceToken::new(secret)),
            "ResourceToken(<redacted>)"
        );
        let empty_link = ResourceTokens::new([("/".to_owned(), ResourceToken::new(secret))]);
        assert!(empty_link.is_err());
        assert!(ResourceTokens::new(Vec::new()).is_err());
    }
}
