//! Entra ID (Azure AD) authorization through a token-credential trait, with token caching.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use http::HeaderValue;

use crate::error::{CosmosError, ErrorKind};

/// A bearer token and its expiry. The token is never printed.
#[derive(Clone)]
pub struct AccessToken {
    token: String,
    expires_on: SystemTime,
}

impl AccessToken {
    /// A token valid until `expires_on`.
    pub fn new(token: impl Into<String>, expires_on: SystemTime) -> Self {
        Self {
            token: token.into(),
            expires_on,
        }
    }
    /// The bearer token text.
    pub fn secret(&self) -> &str {
        &self.token
    }
    /// When the token expires.
    pub fn expires_on(&self) -> SystemTime {
        self.expires_on
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"<redacted>")
            .field("expires_on", &self.expires_on)
            .finish()
    }
}

/// The future a [`TokenCredential`] returns.
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AccessToken, CosmosError>> + Send + 'a>>;

/// A source of Entra ID bearer tokens (an `azure_identity` credential can be adapted to this).
pub trait TokenCredential: Send + Sync {
    /// A token for `scopes` (the driver asks for `https://{account-host}/.default`).
    fn get_token<'a>(&'a self, scopes: &'a [&'a str]) -> TokenFuture<'a>;
}

/// Refresh a cached token this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// Caches the authorization header built from the last token.
pub(crate) struct TokenAuthorizer {
    credential: Arc<dyn TokenCredential>,
    cached: Mutex<Option<(HeaderValue, SystemTime)>>,
}

impl TokenAuthorizer {
    pub(crate) fn new(credential: Arc<dyn TokenCredential>) -> Self {
        Self {
            credential,
            cached: Mutex::new(None),
        }
    }

    fn cached(&self) -> Option<HeaderValue> {
        let guard = self.cached.lock().ok()?;
        let (value, expires) = guard.as_ref()?;
        let fresh = expires
            .duration_since(SystemTime::now())
            .map(|left| left > REFRESH_MARGIN)
            .unwrap_or(false);
        fresh.then(|| value.clone())
    }

    /// The `authorization` header: `type=aad&ver=1.0&sig=<token>`, URL-encoded.
    pub(crate) async fn authorization(&self, scope: &str) -> Result<HeaderValue, CosmosError> {
        if let Some(v) = self.cached() {
            return Ok(v);
        }
        let scopes = [scope];
        let token = self.credential.get_token(&scopes).await.map_err(|e| {
            CosmosError::new(
                ErrorKind::Credential,
                format!("the token credential failed: {}", e.message()),
            )
        })?;
        let value = aad_header(token.secret())?;
        if let Ok(mut guard) = self.cached.lock() {
            *guard = Some((value.clone(), token.expires_on()));
        }
        Ok(value)
    }
}

/// Builds the URL-encoded `type=aad&ver=1.0&sig=<token>` header value.
pub(crate) fn aad_header(token: &str) -> Result<HeaderValue, CosmosError> {
    let mut out = String::with_capacity(32 + token.len());
    out.push_str("type%3Daad%26ver%3D1.0%26sig%3D");
    for b in token.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    let mut v = HeaderValue::from_str(&out).map_err(|_| {
        CosmosError::new(
            ErrorKind::Credential,
            "the bearer token cannot be sent as a header",
        )
    })?;
    v.set_sensitive(true);
    Ok(v)
}

impl fmt::Debug for TokenAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCredential(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(AtomicUsize, Duration);
    impl TokenCredential for Counting {
        fn get_token<'a>(&'a self, scopes: &'a [&'a str]) -> TokenFuture<'a> {
            Box::pin(async move {
                assert_eq!(scopes, ["https://acct.example/.default"]);
                let n = self.0.fetch_add(1, Ordering::SeqCst);
                Ok(AccessToken::new(
                    format!("eyJ.tok+{n}"),
                    SystemTime::now() + self.1,
                ))
            })
        }
    }

    #[tokio::test]
    async fn header_format_and_caching() {
        let cred = Arc::new(Counting(AtomicUsize::new(0), Duration::from_secs(3600)));
        let auth = TokenAuthorizer::new(cred.clone());
        let v = auth
            .authorization("https://acct.example/.default")
            .await
            .unwrap();
        assert_eq!(
            v.to_str().unwrap(),
            "type%3Daad%26ver%3D1.0%26sig%3DeyJ.tok%2B0"
        );
        auth.authorization("https://acct.example/.default")
            .await
            .unwrap();
        assert_eq!(cred.0.load(Ordering::SeqCst), 1, "a fresh token is reused");
        assert!(format!("{v:?}").contains("Sensitive"));
    }

    #[tokio::test]
    async fn near_expiry_tokens_are_refreshed() {
        let cred = Arc::new(Counting(AtomicUsize::new(0), Duration::from_secs(60)));
        let auth = TokenAuthorizer::new(cred.clone());
        auth.authorization("https://acct.example/.default")
            .await
            .unwrap();
        auth.authorization("https://acct.example/.default")
            .await
            .unwrap();
        assert_eq!(cred.0.load(Ordering::SeqCst), 2);
    }
}
