//! The credential a driver signs requests with.

use std::fmt;
use std::sync::Arc;

use http::HeaderValue;

use super::master_key::MasterKey;
use super::resource_tokens::{ResourceToken, ResourceTokenSource, ResourceTokens};
use super::token::{TokenAuthorizer, TokenCredential};
use crate::error::CosmosError;

#[derive(Clone)]
enum Kind {
    MasterKey(Arc<MasterKey>),
    Token(Arc<TokenAuthorizer>),
    ResourceTokens(Arc<ResourceTokenSource>),
}

/// How a credential signs one request.
pub(crate) enum Signer<'a> {
    /// An HMAC over the request, at once.
    MasterKey(&'a MasterKey),
    /// The resource token that covers the request, at once.
    ResourceTokens(&'a ResourceTokenSource),
    /// A bearer token, which may have to be fetched.
    Token,
}

/// How the driver authorizes requests: an account (master) key, resource tokens of permissions,
/// or Entra ID bearer tokens.
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

    /// Resource tokens (the `_token` of permissions), each for the resource link its permission
    /// was granted on (the permission's `resource`, such as `dbs/shop/colls/orders`), as the
    /// official SDKs take them (`resourceTokens` in Node, `resource_tokens` in Python). Each
    /// request is signed with the token whose resource covers the request's; a request no token
    /// covers is sent with the first, and the service refuses it (403). The error never repeats a
    /// token.
    pub fn resource_tokens<I, L, T>(tokens: I) -> Result<Self, CosmosError>
    where
        I: IntoIterator<Item = (L, T)>,
        L: Into<String>,
        T: Into<ResourceToken>,
    {
        let tokens = tokens.into_iter().map(|(l, t)| (l.into(), t.into()));
        Ok(Credential(Kind::ResourceTokens(Arc::new(
            ResourceTokenSource::Fixed(ResourceTokens::new(tokens)?),
        ))))
    }

    /// One resource token, for the resource link its permission was granted on (see
    /// [`Credential::resource_tokens`]).
    pub fn resource_token(
        resource_link: impl Into<String>,
        token: impl Into<ResourceToken>,
    ) -> Result<Self, CosmosError> {
        Self::resource_tokens([(resource_link.into(), token.into())])
    }

    /// Resource tokens from the application: `provider` is asked, for every request, for the
    /// token of the request's resource link (`dbs/shop/colls/orders/docs/o1`; the parent's link
    /// for a feed; `""` for the account read when the driver starts, which any token of the
    /// account serves). Answering a fresh token once the old one expires or is revoked keeps the
    /// driver working. `None` refuses the request before it is sent, naming the link.
    pub fn resource_token_provider<F>(provider: F) -> Self
    where
        F: Fn(&str) -> Option<ResourceToken> + Send + Sync + 'static,
    {
        Credential(Kind::ResourceTokens(Arc::new(
            ResourceTokenSource::Provider(Box::new(provider)),
        )))
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

    /// How this credential signs a request.
    pub(crate) fn signer(&self) -> Signer<'_> {
        match &self.0 {
            Kind::MasterKey(k) => Signer::MasterKey(k),
            Kind::ResourceTokens(t) => Signer::ResourceTokens(t),
            Kind::Token(_) => Signer::Token,
        }
    }

    /// The `authorization` header of a token credential (cached until near expiry); `None` for a
    /// master key or resource tokens, which sign each request at once (see
    /// [`Credential::signer`]).
    pub(crate) async fn token_authorization(
        &self,
        token_scope: &str,
    ) -> Option<Result<HeaderValue, CosmosError>> {
        match &self.0 {
            Kind::MasterKey(_) | Kind::ResourceTokens(_) => None,
            Kind::Token(t) => Some(t.authorization(token_scope).await),
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::MasterKey(_) => f.write_str("Credential::MasterKey(<redacted>)"),
            Kind::Token(_) => f.write_str("Credential::TokenCredential(<redacted>)"),
            Kind::ResourceTokens(_) => f.write_str("Credential::ResourceTokens(<redacted>)"),
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
