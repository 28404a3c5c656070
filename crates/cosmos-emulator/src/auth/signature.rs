//! The master-key signature: HMAC-SHA256 over "verb\nresourcetype\nresourcelink\nx-ms-date\ndate\n"
//! (verb, type and dates lower-cased; the link as sent), base64-encoded.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::hmac;

/// What the signature covers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SignedFields<'a> {
    pub verb: &'a str,
    pub resource_type: &'a str,
    pub resource_link: &'a str,
    pub x_ms_date: &'a str,
    pub http_date: &'a str,
}

/// The text the HMAC is computed over.
pub(crate) fn string_to_sign(fields: &SignedFields<'_>) -> String {
    format!(
        "{}\n{}\n{}\n{}\n{}\n",
        fields.verb.to_ascii_lowercase(),
        fields.resource_type.to_ascii_lowercase(),
        fields.resource_link,
        fields.x_ms_date.to_ascii_lowercase(),
        fields.http_date.to_ascii_lowercase()
    )
}

/// Base64 signature of `fields` under `key`.
#[cfg(test)]
pub(crate) fn sign(key: &hmac::Key, fields: &SignedFields<'_>) -> String {
    STANDARD.encode(hmac::sign(key, string_to_sign(fields).as_bytes()).as_ref())
}

/// Whether `signature` (base64) is the signature of `fields`, compared in constant time.
pub(super) fn verify(key: &hmac::Key, fields: &SignedFields<'_>, signature: &str) -> bool {
    match STANDARD.decode(signature.trim()) {
        Ok(tag) => hmac::verify(key, string_to_sign(fields).as_bytes(), &tag).is_ok(),
        Err(_) => false,
    }
}

/// Builds the HMAC key from the account key (base64).
pub(crate) fn key_from_base64(account_key: &str) -> Result<hmac::Key, String> {
    let bytes = STANDARD
        .decode(account_key.trim())
        .map_err(|_| "the account key is not valid base64".to_owned())?;
    Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example from the service's REST documentation ("access control" page).
    #[test]
    fn matches_the_documented_worked_example() {
        let key = key_from_base64(
            "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==",
        )
        .unwrap();
        let fields = SignedFields {
            verb: "GET",
            resource_type: "dbs",
            resource_link: "dbs/ToDoList",
            x_ms_date: "Thu, 27 Apr 2017 00:51:12 GMT",
            http_date: "",
        };
        let sig = sign(&key, &fields);
        assert_eq!(sig, "c09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu+c+c=");
        assert!(verify(&key, &fields, &sig));
        let other = SignedFields {
            resource_link: "dbs/todolist",
            ..fields
        };
        assert!(!verify(&key, &other, &sig), "the link is case sensitive");
        assert!(!verify(&key, &fields, "not base64!"));
    }

    #[test]
    fn refuses_a_key_that_is_not_base64() {
        let err = key_from_base64("%%%").err().unwrap();
        assert!(!err.contains("%%%"));
    }
}
