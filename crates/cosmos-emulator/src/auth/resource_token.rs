//! Resource tokens: the `_token` of a permission, which a client sends as its whole
//! `authorization` header (`type=resource&ver=1.0&sig=...`). The signature part names the
//! permission and the time the token expires, and carries an HMAC of both under the account key,
//! so a token cannot be made up, altered or extended; what it grants is looked up on each request,
//! so deleting the permission (or its user) revokes it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::hmac;

/// Longest permission name a token carries.
const MAX_TOKEN_ID: usize = 512;

/// The header that asks, when a permission is created, replaced or read, how many seconds the
/// token it answers stays valid.
pub(crate) const EXPIRY_SECONDS_HEADER: &str = "x-ms-documentdb-expiry-seconds";
/// A token's lifetime when the request does not ask for one: an hour.
pub(super) const DEFAULT_TOKEN_SECONDS: u64 = 3600;
/// The shortest and longest lifetimes a request may ask for (ten seconds to five hours).
pub(super) const MIN_TOKEN_SECONDS: u64 = 10;
pub(super) const MAX_TOKEN_SECONDS: u64 = 18_000;

/// A verified resource token: the permission it names and when it expires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourceToken {
    /// `db.user.permission` resource ids (names nothing secret).
    pub token_id: String,
    /// Seconds since the Unix epoch at which the token stops being accepted.
    pub expires: u64,
}

/// The lifetime a request's expiry header asks for (`None`: absent); why not, when it is out of
/// range or not a number.
pub(crate) fn lifetime(header: Option<&str>) -> Result<u64, String> {
    let Some(text) = header else {
        return Ok(DEFAULT_TOKEN_SECONDS);
    };
    let seconds: u64 = text.trim().parse().map_err(|_| {
        format!("{EXPIRY_SECONDS_HEADER} must be a whole number of seconds, not {text:?}.")
    })?;
    if !(MIN_TOKEN_SECONDS..=MAX_TOKEN_SECONDS).contains(&seconds) {
        return Err(format!(
            "{EXPIRY_SECONDS_HEADER} is {seconds}; a resource token is valid for {MIN_TOKEN_SECONDS} to {MAX_TOKEN_SECONDS} seconds."
        ));
    }
    Ok(seconds)
}

fn payload(token_id: &str, expires: u64) -> String {
    format!("resource-token\n{token_id}\n{expires}")
}

/// The `authorization` header value that grants what permission `token_id` grants until
/// `expires` (Unix seconds).
pub(super) fn mint(key: &hmac::Key, token_id: &str, expires: u64) -> String {
    let mac = STANDARD.encode(hmac::sign(key, payload(token_id, expires).as_bytes()).as_ref());
    format!("type=resource&ver=1.0&sig={token_id}.{expires}.{mac}")
}

/// The permission a token's signature part names and its expiry, when the HMAC matches;
/// otherwise why not (never echoing the token).
pub(super) fn verify(key: &hmac::Key, signature: &str) -> Result<ResourceToken, String> {
    const MALFORMED: &str = "the resource token is malformed";
    let (rest, mac) = signature.rsplit_once('.').ok_or(MALFORMED)?;
    let (token_id, expires) = rest
        .rsplit_once('.')
        .filter(|(id, _)| !id.is_empty() && id.len() <= MAX_TOKEN_ID)
        .ok_or(MALFORMED)?;
    let expires: u64 = expires.parse().map_err(|_| MALFORMED)?;
    let tag = STANDARD.decode(mac.trim()).map_err(|_| MALFORMED)?;
    hmac::verify(key, payload(token_id, expires).as_bytes(), &tag)
        .map_err(|_| "the resource token was not issued by this emulator (or was altered)")?;
    Ok(ResourceToken {
        token_id: token_id.to_owned(),
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_verify_and_altered_ones_do_not() {
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"k");
        let other = hmac::Key::new(hmac::HMAC_SHA256, b"other");
        let token = mint(&key, "db.user.perm", 1000);
        let sig = token.strip_prefix("type=resource&ver=1.0&sig=").unwrap();
        let verified = verify(&key, sig).unwrap();
        assert_eq!(verified.token_id, "db.user.perm");
        assert_eq!(verified.expires, 1000);
        assert!(verify(&other, sig).is_err());
        let altered = sig.replacen("perm", "perx", 1);
        assert!(verify(&key, &altered).is_err());
        let extended = sig.replacen(".1000.", ".9000.", 1);
        assert!(verify(&key, &extended).is_err());
        for bad in ["", "nodot", ".abc", "id.!!!", "id.x.abc", ".5.abc"] {
            let err = verify(&key, bad).unwrap_err();
            assert!(!err.contains(bad) || bad.is_empty(), "{err}");
        }
    }

    #[test]
    fn lifetimes_default_to_an_hour_and_stay_within_five_hours() {
        let table: &[(Option<&str>, Option<u64>)] = &[
            (None, Some(3600)),
            (Some("10"), Some(10)),
            (Some(" 18000 "), Some(18000)),
            (Some("9"), None),
            (Some("18001"), None),
            (Some("0"), None),
            (Some("-10"), None),
            (Some("ten"), None),
            (Some(""), None),
            (Some("99999999999999999999999"), None),
        ];
        for (header, expected) in table {
            assert_eq!(lifetime(*header).ok(), *expected, "{header:?}");
        }
    }
}
