//! Authorization: master-key signatures and Entra ID tokens.

mod credential;
mod master_key;
mod token;

pub use credential::Credential;
pub use master_key::MasterKey;
pub use token::{AccessToken, TokenCredential, TokenFuture};
