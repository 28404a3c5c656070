//! Parsing the `authorization` header: URL-decoded `type={master|aad|resource}&ver=1.0&sig={...}`.

use crate::protocol::percent::percent_decode;

/// The token kinds the header can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenType {
    Master,
    Aad,
    Resource,
}

/// A parsed authorization header. The signature/token is secret: not shown by `Debug`.
pub(crate) struct AuthHeader {
    pub token_type: TokenType,
    pub version: String,
    pub signature: String,
}

impl std::fmt::Debug for AuthHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthHeader")
            .field("token_type", &self.token_type)
            .field("version", &self.version)
            .field("signature", &"<redacted>")
            .finish()
    }
}

/// Parses the header value; the error says what is malformed (never echoing the secret part).
pub(crate) fn parse(raw: &str) -> Result<AuthHeader, String> {
    let decoded =
        percent_decode(raw).ok_or("the authorization header has an invalid percent-encoding")?;
    let mut token_type = None;
    let mut version = None;
    let mut signature = None;
    for part in decoded.split('&') {
        let Some((name, value)) = part.split_once('=') else {
            return Err(
                "the authorization header is malformed: expected type=...&ver=...&sig=...".into(),
            );
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "type" => {
                token_type = Some(match value.trim().to_ascii_lowercase().as_str() {
                    "master" => TokenType::Master,
                    "aad" => TokenType::Aad,
                    "resource" => TokenType::Resource,
                    _ => return Err("the authorization header has an unknown token type".into()),
                })
            }
            "ver" => version = Some(value.trim().to_owned()),
            "sig" => signature = Some(value.trim().to_owned()),
            _ => return Err("the authorization header is malformed: unknown field".into()),
        }
    }
    let token_type = token_type.ok_or("the authorization header is malformed: no type")?;
    let version = version.ok_or("the authorization header is malformed: no ver")?;
    let signature = signature
        .filter(|s| !s.is_empty())
        .ok_or("the authorization header is malformed: no sig")?;
    if version != "1.0" {
        return Err("the authorization header is malformed: ver must be 1.0".into());
    }
    Ok(AuthHeader {
        token_type,
        version,
        signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_encoded_and_plain_forms() {
        let h = parse("type%3Dmaster%26ver%3D1.0%26sig%3Dab%2Bc%3D").unwrap();
        assert_eq!(h.token_type, TokenType::Master);
        assert_eq!(h.signature, "ab+c=");
        let h = parse("type=aad&ver=1.0&sig=tok+en").unwrap();
        assert_eq!(h.token_type, TokenType::Aad);
        assert_eq!(h.signature, "tok+en");
    }

    #[test]
    fn rejects_malformed_headers_with_a_reason() {
        let cases = [
            ("type=master&ver=1.0", "no sig"),
            ("type=master&sig=x", "no ver"),
            ("ver=1.0&sig=x", "no type"),
            ("type=other&ver=1.0&sig=x", "unknown token type"),
            ("type=master&ver=2.0&sig=x", "ver must be 1.0"),
            ("garbage", "malformed"),
            ("type=master%2", "percent-encoding"),
        ];
        for (input, reason) in cases {
            let err = parse(input).unwrap_err();
            assert!(err.contains(reason), "{input}: {err}");
        }
    }

    #[test]
    fn debug_hides_the_signature() {
        let h = parse("type=master&ver=1.0&sig=secretvalue").unwrap();
        assert!(!format!("{h:?}").contains("secretvalue"));
    }
}
