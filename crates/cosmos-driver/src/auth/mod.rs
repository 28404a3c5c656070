//! Authorization: master-key signatures, resource tokens and Entra ID tokens.

#[cfg(feature = "azure-identity")]
mod azure_core_adapter;
mod credential;
mod master_key;
mod resource_tokens;
mod token;

#[cfg(feature = "azure-identity")]
pub use azure_core_adapter::AzureCoreCredential;
pub use credential::Credential;
pub(crate) use credential::Signer;
pub use master_key::MasterKey;
pub use resource_tokens::ResourceToken;
pub use token::{AccessToken, TokenCredential, TokenFuture};
