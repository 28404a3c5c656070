//! Resource tokens: the `_token` of a permission, which a client sends as its whole
//! `authorization` header (`type=resource&ver=1.0&sig=...`). The signature part names the
//! permission and carries an HMAC of that name under the account key, so a token cannot be
//! made up or altered; what it grants is looked up on each request, so deleting the permission
//! (or its user) revokes it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::hmac;

/// Longest permission name a token carries.
const MAX_TOKEN_ID: usize = 512;

fn payload(token_id: &str) -> String {
    format!("resource-token\n{token_id}")
}

/// The `authorization` header value that grants what permission `token_id` grants.
pub fn mint(key: &hmac::Key, token_id: &str) -> String {
    let mac = STANDARD.encode(hmac::sign(key, payload(token_id).as_bytes()).as_ref());
    format!("type=resource&ver=1.0&sig={token_id}.{mac}")
}

/// The permission a token's signature part names, when the HMAC matches; otherwise why not
/// (never echoing the token).
pub fn verify(key: &hmac::Key, signature: &str) -> Result<String, String> {
    let (token_id, mac) = signature
        .rsplit_once('.')
        .filter(|(id, _)| !id.is_empty() && id.len() <= MAX_TOKEN_ID)
        .ok_or("the resource token is malformed")?;
    let tag = STANDARD
        .decode(mac.trim())
        .map_err(|_| "the resource token is malformed")?;
    hmac::verify(key, payload(token_id).as_bytes(), &tag)
        .map_err(|_| "the resource token was not issued by this emulator (or was altered)")?;
    Ok(token_id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_verify_and_altered_ones_do_not() {
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"k");
        let other = hmac::Key::new(hmac::HMAC_SHA256, b"other");
        let token = mint(&key, "db.user.perm");
        let sig = token.strip_prefix("type=resource&ver=1.0&sig=").unwrap();
        assert_eq!(verify(&key, sig).unwrap(), "db.user.perm");
        assert!(verify(&other, sig).is_err());
        let altered = sig.replacen("perm", "perx", 1);
        assert!(verify(&key, &altered).is_err());
        for bad in ["", "nodot", ".abc", "id.!!!"] {
            let err = verify(&key, bad).unwrap_err();
            assert!(!err.contains(bad) || bad.is_empty(), "{err}");
        }
    }
}
