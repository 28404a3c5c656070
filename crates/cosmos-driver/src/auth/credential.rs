//! The credential a driver signs requests with.

use std::fmt;
use std::sync::Arc;

use http::HeaderValue;

use super::master_key::MasterKey;
use super::token::{TokenAuthorizer, TokenCredential};
use crate::error::CosmosError;

#[derive(Clone)]
enum Kind {
    MasterKey(Arc<MasterKey>),
    Token(Arc<TokenAuthorizer>),
}

/// How the driver authorizes requests: an account (master) key, or Entra ID bearer tokens.
/// Cloning is cheap; `Debug` never shows secrets.
#[derive(Clone)]
pub struct Credential(Kind);

impl Credential {
    /// An account key (base64, as shown in the portal).
    pub fn master_key(base64_key: &str) -> Result<Self, CosmosError> {
        Ok(Credential(Kind::MasterKey(Arc::new(MasterKey::new(
            base64_key,
        )?))))
    }

    /// Entra ID tokens from `credential`.
    pub fn token_credential(credential: Arc<dyn TokenCredential>) -> Self {
        Credential(Kind::Token(Arc::new(TokenAuthorizer::new(credential))))
    }

    /// Entra ID tokens from an `azure_core` token credential, such as the `azure_identity` crate's
    /// `DeveloperToolsCredential`, `ManagedIdentityCredential` or `ClientSecretCredential`.
    #[cfg(feature = "azure-identity")]
    pub fn from_azure_core(credential: Arc<dyn azure_core::credentials::TokenCredential>) -> Self {
        Self::token_credential(Arc::new(super::AzureCoreCredential::new(credential)))
    }

    /// The master key, when this is one (it signs synchronously, per request).
    pub(crate) fn as_master_key(&self) -> Option<&MasterKey> {
        match &self.0 {
            Kind::MasterKey(k) => Some(k),
            Kind::Token(_) => None,
        }
    }

    /// The `authorization` header of a token credential (cached until near expiry); `None` for a
    /// master key, which signs each request with [`MasterKey::authorization`].
    pub(crate) async fn token_authorization(
        &self,
        token_scope: &str,
    ) -> Option<Result<HeaderValue, CosmosError>> {
        match &self.0 {
            Kind::MasterKey(_) => None,
            Kind::Token(t) => Some(t.authorization(token_scope).await),
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::MasterKey(_) => f.write_str("Credential::MasterKey(<redacted>)"),
            Kind::Token(_) => f.write_str("Credential::TokenCredential(<redacted>)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_redacted() {
        let key = "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==";
        let c = Credential::master_key(key).unwrap();
        let shown = format!("{c:?}");
        assert!(!shown.contains("dsZQ"));
        assert!(shown.contains("redacted"));
    }
}
