//! The master-key (shared key) signature: HMAC-SHA256 over verb, resource type, link and date.

use std::fmt;

use base64::Engine as _;
use http::HeaderValue;
use ring::hmac;

use crate::error::{CosmosError, ErrorKind};

const PREFIX: &[u8] = b"type%3Dmaster%26ver%3D1.0%26sig%3D";

/// An account key, decoded once and kept only as an HMAC key. Never printed.
pub struct MasterKey {
    key: hmac::Key,
}

impl MasterKey {
    /// Decodes a base64 account key; the error does not repeat the key.
    pub fn new(base64_key: &str) -> Result<Self, CosmosError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(base64_key.trim())
            .map_err(|_| {
                CosmosError::new(ErrorKind::Credential, "the account key is not valid base64")
            })?;
        if bytes.is_empty() {
            return Err(CosmosError::new(
                ErrorKind::Credential,
                "the account key is empty",
            ));
        }
        Ok(Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
        })
    }

    /// The `authorization` header value for one request.
    ///
    /// `verb` is the lowercase HTTP method, `resource_type` the lowercase resource type (`docs`,
    /// `dbs`, ...), `resource_link` the unencoded link as the service names it, and `date_lower` the
    /// `x-ms-date` value in lowercase.
    pub fn authorization(
        &self,
        verb: &str,
        resource_type: &str,
        resource_link: &str,
        date_lower: &str,
    ) -> HeaderValue {
        let mut ctx = hmac::Context::with_key(&self.key);
        for part in [
            verb,
            "\n",
            resource_type,
            "\n",
            resource_link,
            "\n",
            date_lower,
            "\n\n",
        ] {
            ctx.update(part.as_bytes());
        }
        let tag = ctx.sign();
        let mut sig = [0u8; 44];
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(tag.as_ref(), &mut sig)
            .unwrap_or(0);
        // URL-encode the whole `type=master&ver=1.0&sig=...` string; only +, / and = need it.
        let mut out = [0u8; PREFIX.len() + 44 * 3];
        out[..PREFIX.len()].copy_from_slice(PREFIX);
        let mut len = PREFIX.len();
        for &b in &sig[..n] {
            let esc: &[u8] = match b {
                b'+' => b"%2B",
                b'/' => b"%2F",
                b'=' => b"%3D",
                _ => std::slice::from_ref(&b),
            };
            out[len..len + esc.len()].copy_from_slice(esc);
            len += esc.len();
        }
        let mut value =
            HeaderValue::from_bytes(&out[..len]).unwrap_or_else(|_| HeaderValue::from_static(""));
        value.set_sensitive(true);
        value
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the service documentation ("Access control in the Azure Cosmos DB SQL
    /// API"): GET, dbs, dbs/ToDoList, Thu, 27 Apr 2017 00:51:12 GMT.
    #[test]
    fn documented_worked_example() {
        let key = MasterKey::new("dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==")
            .unwrap();
        let v = key.authorization(
            "get",
            "dbs",
            "dbs/ToDoList",
            "thu, 27 apr 2017 00:51:12 gmt",
        );
        assert_eq!(
            v.to_str().unwrap(),
            "type%3Dmaster%26ver%3D1.0%26sig%3Dc09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu%2Bc%2Bc%3D"
        );
    }

    /// A second published vector: listing databases (empty resource link).
    #[test]
    fn empty_link_vector() {
        let key = MasterKey::new("SB1mrDcsPfPnHN2lCLYLTXDJMEqXsjvWqS2BXbvBbro94dxVHem3gyXKLPruSeMVE7ZKf36EGC5ArCkJqJaoOg==")
            .unwrap();
        let v = key.authorization("get", "dbs", "", "wed, 16 may 2018 19:47:46 gmt");
        assert_eq!(
            v.to_str().unwrap(),
            "type%3Dmaster%26ver%3D1.0%26sig%3DcK0fCpDW9YvCbmmrIVxaGL%2Fq9o%2FlFlPc8GdCphvow3c%3D"
        );
    }

    #[test]
    fn bad_keys_are_refused_without_echo() {
        let err = MasterKey::new("not base64 at all!").unwrap_err();
        assert!(!err.message().contains("not base64 at all"));
        assert_eq!(
            format!("{:?}", MasterKey::new("AAAA").unwrap()),
            "MasterKey(<redacted>)"
        );
    }
}
