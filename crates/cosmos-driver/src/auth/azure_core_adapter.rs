//! Entra ID tokens from any `azure_core` token credential (feature `azure-identity`).
//!
//! The credentials of the `azure_identity` crate (developer tools, managed identity, client secret,
//! workload identity, ...) implement `azure_core::credentials::TokenCredential`. [`AzureCoreCredential`]
//! wraps one so the driver can sign requests with its tokens; the driver still caches each token
//! and asks again shortly before it expires.
//!
//! ```text
//! // Cargo.toml: cosmos-driver = { ..., features = ["azure-identity"] }, azure_identity = "1"
//! use cosmos_driver::Credential;
//! use azure_identity::DeveloperToolsCredential;
//!
//! let azure = DeveloperToolsCredential::new(None)?; // or ManagedIdentityCredential, ClientSecretCredential
//! let credential = Credential::from_azure_core(azure);
//! // pass `credential` to the driver as with any other `Credential`
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use azure_core::credentials::TokenCredential as AzureTokenCredential;
use azure_core::time::OffsetDateTime;

use super::token::{AccessToken, TokenCredential, TokenFuture};
use crate::error::{CosmosError, ErrorKind};

/// An `azure_core` token credential (for example one from `azure_identity`) used as the driver's
/// [`TokenCredential`]. `Debug` shows nothing of the wrapped credential.
#[derive(Clone)]
pub struct AzureCoreCredential {
    inner: Arc<dyn AzureTokenCredential>,
}

impl AzureCoreCredential {
    /// Wraps `credential`; each token request is passed to it with default request options.
    pub fn new(credential: Arc<dyn AzureTokenCredential>) -> Self {
        Self { inner: credential }
    }
}

impl TokenCredential for AzureCoreCredential {
    fn get_token<'a>(&'a self, scopes: &'a [&'a str]) -> TokenFuture<'a> {
        Box::pin(async move {
            let token = self.inner.get_token(scopes, None).await.map_err(|e| {
                CosmosError::new(
                    ErrorKind::Credential,
                    format!("the azure_core credential could not get a token: {e}"),
                )
                .with_source(e)
            })?;
            let expires_on = system_time(token.expires_on)?;
            Ok(AccessToken::new(token.token.secret(), expires_on))
        })
    }
}

/// The expiry as a `SystemTime`; an expiry before 1970 becomes the epoch (already expired).
fn system_time(at: OffsetDateTime) -> Result<SystemTime, CosmosError> {
    let secs = match u64::try_from(at.unix_timestamp()) {
        Ok(secs) => secs,
        Err(_) => return Ok(UNIX_EPOCH),
    };
    UNIX_EPOCH
        .checked_add(Duration::new(secs, at.nanosecond()))
        .ok_or_else(|| {
            CosmosError::new(
                ErrorKind::Credential,
                format!("the azure_core token's expiry ({at}) is out of range"),
            )
        })
}

impl fmt::Debug for AzureCoreCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AzureCoreCredential(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use azure_core::credentials::{AccessToken as AzureAccessToken, TokenRequestOptions};
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;

    /// A fake `azure_core` credential: answers with a fixed token or fails, and records the scopes.
    #[derive(Debug)]
    struct Fake {
        answer: Result<(&'static str, OffsetDateTime), &'static str>,
        asked: Mutex<Vec<String>>,
    }

    // `azure_core`'s trait is declared with `async_trait`; this is the signature it expands to.
    impl AzureTokenCredential for Fake {
        fn get_token<'s, 'l, 'i, 'o, 'f>(
            &'s self,
            scopes: &'l [&'i str],
            _options: Option<TokenRequestOptions<'o>>,
        ) -> Pin<Box<dyn Future<Output = azure_core::Result<AzureAccessToken>> + Send + 'f>>
        where
            's: 'f,
            'l: 'f,
            'i: 'f,
            'o: 'f,
            Self: 'f,
        {
            Box::pin(async move {
                if let Ok(mut asked) = self.asked.lock() {
                    asked.extend(scopes.iter().map(|s| s.to_string()));
                }
                match self.answer {
                    Ok((token, expires_on)) => Ok(AzureAccessToken::new(token, expires_on)),
                    Err(message) => Err(azure_core::Error::with_message(
                        azure_core::error::ErrorKind::Credential,
                        message,
                    )),
                }
            })
        }
    }

    fn fake(answer: Result<(&'static str, OffsetDateTime), &'static str>) -> Arc<Fake> {
        Arc::new(Fake {
            answer,
            asked: Mutex::new(Vec::new()),
        })
    }

    const SCOPES: &[&str] = &["https://acct.documents.azure.com/.default"];

    #[tokio::test]
    async fn token_and_expiry_pass_through() {
        let expires = OffsetDateTime::from_unix_timestamp(1_900_000_000)
            .unwrap()
            .replace_nanosecond(250_000_000)
            .unwrap();
        let inner = fake(Ok(("eyJ0eXAi.secret-token", expires)));
        let cred = AzureCoreCredential::new(inner.clone());
        let token = cred.get_token(SCOPES).await.unwrap();
        assert_eq!(token.secret(), "eyJ0eXAi.secret-token");
        assert_eq!(
            token.expires_on(),
            UNIX_EPOCH + Duration::new(1_900_000_000, 250_000_000)
        );
        assert_eq!(*inner.asked.lock().unwrap(), SCOPES);
        assert_eq!(format!("{cred:?}"), "AzureCoreCredential(<redacted>)");
    }

    #[tokio::test]
    async fn expiry_before_the_epoch_is_already_expired() {
        let expires = OffsetDateTime::from_unix_timestamp(-5).unwrap();
        let cred = AzureCoreCredential::new(fake(Ok(("tok", expires))));
        let token = cred.get_token(SCOPES).await.unwrap();
        assert_eq!(token.expires_on(), UNIX_EPOCH);
    }

    #[tokio::test]
    async fn errors_become_credential_errors() {
        let cred = AzureCoreCredential::new(fake(Err("no az login session")));
        let err = cred.get_token(SCOPES).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Credential);
        assert!(
            err.message().contains("no az login session"),
            "{}",
            err.message()
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[tokio::test]
    async fn driver_credential_sends_the_wrapped_token() {
        let expires = OffsetDateTime::now_utc() + azure_core::time::Duration::hours(1);
        let credential = crate::auth::Credential::from_azure_core(fake(Ok(("abc+def", expires))));
        let header = credential
            .token_authorization(SCOPES[0])
            .await
            .expect("a token credential")
            .unwrap();
        assert_eq!(
            header.to_str().unwrap(),
            "type%3Daad%26ver%3D1.0%26sig%3Dabc%2Bdef"
        );
        assert!(!format!("{credential:?}").contains("abc"));
    }
}
