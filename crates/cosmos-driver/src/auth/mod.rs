//! Authorization: master-key signatures and Entra ID tokens.

#[cfg(feature = "azure-identity")]
mod azure_core_adapter;
mod credential;
mod master_key;
mod token;

#[cfg(feature = "azure-identity")]
pub use azure_core_adapter::AzureCoreCredential;
pub use credential::Credential;
pub use master_key::MasterKey;
pub use token::{AccessToken, TokenCredential, TokenFuture};
