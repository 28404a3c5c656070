//! Connection strings as the portal shows them: `AccountEndpoint=https://...;AccountKey=...;`.
//!
//! As the official SDKs read them: parts split on `;` (empty parts, such as a trailing one,
//! skipped), each `name=value` split at its first `=` (a key's base64 padding stays in the value),
//! names compared without regard to case, spaces around names and values trimmed, a name given
//! twice taking its last value, and names the driver does not use (such as
//! `DisableServerCertificateValidation`) ignored. No error repeats a value.

use std::fmt;

use crate::error::{CosmosError, ErrorKind};

/// The parts of a connection string the driver uses. `Debug` does not show the key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ConnectionString {
    pub(crate) endpoint: String,
    pub(crate) account_key: String,
}

impl fmt::Debug for ConnectionString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionString")
            .field("endpoint", &self.endpoint)
            .field("account_key", &"<redacted>")
            .finish()
    }
}

/// Longest connection string read (a real one is a few hundred bytes).
const MAX_LEN: usize = 8 * 1024;

fn refused(message: &str) -> CosmosError {
    CosmosError::new(
        ErrorKind::Credential,
        format!("the connection string {message}"),
    )
}

/// Reads `text`; why not, when it is not a connection string with an endpoint and a key.
pub(crate) fn parse(text: &str) -> Result<ConnectionString, CosmosError> {
    if text.len() > MAX_LEN {
        return Err(refused(&format!("is longer than {MAX_LEN} bytes")));
    }
    let mut endpoint = None;
    let mut account_key = None;
    for (index, part) in text.split(';').enumerate() {
        if part.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = part.split_once('=') else {
            return Err(refused(&format!(
                "is not a list of name=value parts: part {} has no '='",
                index + 1
            )));
        };
        let value = value.trim();
        let name = name.trim();
        if name.eq_ignore_ascii_case("AccountEndpoint") {
            endpoint = Some(value);
        } else if name.eq_ignore_ascii_case("AccountKey") {
            account_key = Some(value);
        }
    }
    let endpoint = endpoint
        .filter(|v| !v.is_empty())
        .ok_or_else(|| refused("has no AccountEndpoint"))?;
    let account_key = account_key
        .filter(|v| !v.is_empty())
        .ok_or_else(|| refused("has no AccountKey"))?;
    Ok(ConnectionString {
        endpoint: endpoint.to_owned(),
        account_key: account_key.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    #[test]
    fn connection_strings_are_read_as_the_official_sdks_read_them() {
        let ok = |e: &str, k: &str| Some((e.to_owned(), k.to_owned()));
        let long = "a".repeat(MAX_LEN + 1);
        let table: Vec<(String, Option<(String, String)>)> = vec![
            (
                format!("AccountEndpoint=https://a.documents.azure.com:443/;AccountKey={KEY};"),
                ok("https://a.documents.azure.com:443/", KEY),
            ),
            // No trailing `;`, other order, other case, spaces.
            (
                format!(" accountkey = {KEY} ;ACCOUNTENDPOINT=https://localhost:8081/"),
                ok("https://localhost:8081/", KEY),
            ),
            // Padding `=` stays in the value; unknown names and empty parts are skipped.
            (
                "AccountEndpoint=https://h/;;AccountKey=AA==;DisableServerCertificateValidation=True;"
                    .into(),
                ok("https://h/", "AA=="),
            ),
            // The last of a repeated name wins.
            (
                "AccountKey=AA==;AccountEndpoint=https://x/;AccountEndpoint=https://y/".into(),
                ok("https://y/", "AA=="),
            ),
            ("AccountEndpoint=https://h/".into(), None),
            (format!("AccountKey={KEY}"), None),
            (format!("AccountEndpoint=;AccountKey={KEY}"), None),
            ("AccountEndpoint=https://h/;AccountKey=".into(), None),
            (format!("AccountEndpoint=https://h/;{KEY}"), None),
            ("".into(), None),
            (";;;".into(), None),
            (long, None),
        ];
        for (text, expected) in table {
            let got = parse(&text).ok().map(|c| (c.endpoint, c.account_key));
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn errors_and_debug_never_show_the_key() {
        for text in [
            format!("AccountEndpoint=https://h/;{KEY}"),
            format!("AccountKey={KEY}"),
            format!("{KEY};AccountEndpoint=https://h/"),
        ] {
            let err = parse(&text).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Credential);
            let shown = format!("{err} {err:?}");
            assert!(!shown.contains("C2y6"), "{shown}");
        }
        let parsed = parse(&format!("AccountEndpoint=https://h/;AccountKey={KEY}")).unwrap();
        assert!(!format!("{parsed:?}").contains("C2y6"));
    }
}
