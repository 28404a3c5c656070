//! The credential a command signs with: the account key from where the flags say, or Entra ID
//! tokens from the default credential chain (built with the `entra` feature).

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cosmos_driver::auth::TokenFuture;
use cosmos_driver::{CosmosError, Credential, ErrorKind, TokenCredential};

use crate::args::target::{key_from_text, AuthPlan, KeySource, TargetArgs};

/// The credential `target` names; reads the key file or standard input when the flags say so.
pub fn credential(target: &TargetArgs) -> Result<Credential, String> {
    let key = match target.auth_plan()? {
        AuthPlan::Entra => return entra_credential(),
        AuthPlan::Key(KeySource::Inline(k)) => k.trim().to_owned(),
        AuthPlan::Key(KeySource::File(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the account key from {}: {e}", path.display()))?;
            key_from_text(&text, &path.display().to_string())?
        }
        AuthPlan::Key(KeySource::Stdin) => {
            let mut text = String::new();
            std::io::stdin()
                .take(64 * 1024)
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the account key from standard input: {e}"))?;
            key_from_text(&text, "standard input")?
        }
    };
    // The key's text never reaches an error message: a bad key is reported without it.
    Credential::master_key(&key).map_err(|_| "the account key is not valid base64".to_string())
}

/// One credential of the default chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainLink {
    /// A service principal's client secret (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`,
    /// `AZURE_CLIENT_SECRET`).
    ClientSecret,
    /// A Kubernetes workload identity (`AZURE_FEDERATED_TOKEN_FILE` with tenant and client id).
    WorkloadIdentity,
    /// The host's managed identity (a user-assigned one when `AZURE_CLIENT_ID` is set).
    ManagedIdentity,
    /// The signed-in Azure CLI, then the Azure Developer CLI.
    DeveloperTools,
}

impl ChainLink {
    /// The name used in errors.
    pub fn name(self) -> &'static str {
        match self {
            ChainLink::ClientSecret => "client secret (AZURE_CLIENT_SECRET)",
            ChainLink::WorkloadIdentity => "workload identity (AZURE_FEDERATED_TOKEN_FILE)",
            ChainLink::ManagedIdentity => "managed identity",
            ChainLink::DeveloperTools => "developer tools (az, azd)",
        }
    }
}

/// Which of the `AZURE_*` variables the chain reads are set (non-empty).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntraEnv {
    /// `AZURE_TENANT_ID`.
    pub tenant_id: bool,
    /// `AZURE_CLIENT_ID`.
    pub client_id: bool,
    /// `AZURE_CLIENT_SECRET`.
    pub client_secret: bool,
    /// `AZURE_FEDERATED_TOKEN_FILE`.
    pub federated_token_file: bool,
}

impl EntraEnv {
    /// Read from the process environment.
    pub fn from_process() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Self {
            tenant_id: set("AZURE_TENANT_ID"),
            client_id: set("AZURE_CLIENT_ID"),
            client_secret: set("AZURE_CLIENT_SECRET"),
            federated_token_file: set("AZURE_FEDERATED_TOKEN_FILE"),
        }
    }
}

/// The credentials tried, in order: the ones the environment configures, then the managed
/// identity, then the developer tools.
pub fn chain_plan(env: EntraEnv) -> Vec<ChainLink> {
    let mut links = Vec::new();
    if env.tenant_id && env.client_id && env.client_secret {
        links.push(ChainLink::ClientSecret);
    }
    if env.tenant_id && env.client_id && env.federated_token_file {
        links.push(ChainLink::WorkloadIdentity);
    }
    links.push(ChainLink::ManagedIdentity);
    links.push(ChainLink::DeveloperTools);
    links
}

/// Credentials tried in order until one gives a token; the one that did is asked first from then
/// on. When none does, the error names each and why it failed.
pub struct CredentialChain {
    links: Vec<(&'static str, Arc<dyn TokenCredential>)>,
    last_good: AtomicUsize,
}

impl CredentialChain {
    /// A chain of named credentials, tried in the order given.
    pub fn new(links: Vec<(&'static str, Arc<dyn TokenCredential>)>) -> Self {
        Self {
            links,
            last_good: AtomicUsize::new(0),
        }
    }
}

impl TokenCredential for CredentialChain {
    fn get_token<'a>(&'a self, scopes: &'a [&'a str]) -> TokenFuture<'a> {
        Box::pin(async move {
            let first = self.last_good.load(Ordering::Relaxed).min(self.links.len());
            let order = (first..self.links.len()).chain(0..first);
            let mut failures = Vec::new();
            for i in order {
                let (name, link) = &self.links[i];
                match link.get_token(scopes).await {
                    Ok(token) => {
                        self.last_good.store(i, Ordering::Relaxed);
                        return Ok(token);
                    }
                    Err(e) => failures.push(format!("{name}: {}", e.message())),
                }
            }
            Err(CosmosError::new(
                ErrorKind::Credential,
                format!(
                    "no Entra ID credential gave a token ({}); sign in with `az login`, set \
                     AZURE_TENANT_ID/AZURE_CLIENT_ID/AZURE_CLIENT_SECRET, or run where a managed \
                     identity is assigned",
                    failures.join("; ")
                ),
            ))
        })
    }
}

#[cfg(feature = "entra")]
fn entra_credential() -> Result<Credential, String> {
    use cosmos_driver::auth::AzureCoreCredential;

    let wrap =
        |e: azure_core::Error, link: ChainLink| format!("cannot set up {}: {e}", link.name());
    let mut links: Vec<(&'static str, Arc<dyn TokenCredential>)> = Vec::new();
    for link in chain_plan(EntraEnv::from_process()) {
        let azure: Arc<dyn azure_core::credentials::TokenCredential> = match link {
            ChainLink::ClientSecret => {
                let var = |n: &str| std::env::var(n).unwrap_or_default();
                azure_identity::ClientSecretCredential::new(
                    &var("AZURE_TENANT_ID"),
                    var("AZURE_CLIENT_ID"),
                    var("AZURE_CLIENT_SECRET").into(),
                    None,
                )
                .map_err(|e| wrap(e, link))?
            }
            ChainLink::WorkloadIdentity => {
                azure_identity::WorkloadIdentityCredential::new(None).map_err(|e| wrap(e, link))?
            }
            ChainLink::ManagedIdentity => {
                let options = std::env::var("AZURE_CLIENT_ID")
                    .ok()
                    .filter(|id| !id.is_empty())
                    .map(|id| azure_identity::ManagedIdentityCredentialOptions {
                        user_assigned_id: Some(azure_identity::UserAssignedId::ClientId(id)),
                        ..Default::default()
                    });
                azure_identity::ManagedIdentityCredential::new(options)
                    .map_err(|e| wrap(e, link))?
            }
            ChainLink::DeveloperTools => {
                azure_identity::DeveloperToolsCredential::new(None).map_err(|e| wrap(e, link))?
            }
        };
        links.push((link.name(), Arc::new(AzureCoreCredential::new(azure))));
    }
    Ok(Credential::token_credential(Arc::new(
        CredentialChain::new(links),
    )))
}

#[cfg(not(feature = "entra"))]
fn entra_credential() -> Result<Credential, String> {
    Err(
        "this `cosmos` was built without Entra ID support; build it with the `entra` feature: \
         cargo install --path crates/cosmos-cli --features entra"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmos_driver::AccessToken;
    use std::sync::atomic::AtomicU32;
    use std::time::{Duration, SystemTime};

    #[test]
    fn the_chain_follows_the_environment() {
        use ChainLink::*;
        let env = |t, c, s, f| EntraEnv {
            tenant_id: t,
            client_id: c,
            client_secret: s,
            federated_token_file: f,
        };
        for (given, want) in [
            (
                env(false, false, false, false),
                vec![ManagedIdentity, DeveloperTools],
            ),
            (
                env(true, true, true, false),
                vec![ClientSecret, ManagedIdentity, DeveloperTools],
            ),
            (
                env(true, false, true, false),
                vec![ManagedIdentity, DeveloperTools],
            ),
            (
                env(true, true, false, true),
                vec![WorkloadIdentity, ManagedIdentity, DeveloperTools],
            ),
            (
                env(true, true, true, true),
                vec![
                    ClientSecret,
                    WorkloadIdentity,
                    ManagedIdentity,
                    DeveloperTools,
                ],
            ),
            (
                env(false, true, false, true),
                vec![ManagedIdentity, DeveloperTools],
            ),
        ] {
            assert_eq!(chain_plan(given), want, "{given:?}");
        }
    }

    struct Fake {
        works: bool,
        calls: AtomicU32,
    }

    impl TokenCredential for Fake {
        fn get_token<'a>(&'a self, _scopes: &'a [&'a str]) -> TokenFuture<'a> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let works = self.works;
            Box::pin(async move {
                if works {
                    Ok(AccessToken::new(
                        "tok",
                        SystemTime::now() + Duration::from_secs(3600),
                    ))
                } else {
                    Err(CosmosError::new(ErrorKind::Credential, "not signed in"))
                }
            })
        }
    }

    fn fake(works: bool) -> Arc<Fake> {
        Arc::new(Fake {
            works,
            calls: AtomicU32::new(0),
        })
    }

    #[tokio::test]
    async fn the_first_credential_that_works_answers_and_is_asked_first_next_time() {
        let (a, b, c) = (fake(false), fake(true), fake(true));
        let chain = CredentialChain::new(vec![
            ("a", a.clone() as Arc<dyn TokenCredential>),
            ("b", b.clone()),
            ("c", c.clone()),
        ]);
        assert_eq!(chain.get_token(&["s"]).await.unwrap().secret(), "tok");
        chain.get_token(&["s"]).await.unwrap();
        let calls = |f: &Fake| f.calls.load(Ordering::Relaxed);
        assert_eq!((calls(&a), calls(&b), calls(&c)), (1, 2, 0));
    }

    #[tokio::test]
    async fn a_chain_where_nothing_works_names_every_failure() {
        let chain = CredentialChain::new(vec![
            ("managed identity", fake(false) as Arc<dyn TokenCredential>),
            ("developer tools", fake(false)),
        ]);
        let e = chain.get_token(&["s"]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Credential);
        assert!(
            e.message().contains("managed identity: not signed in")
                && e.message().contains("developer tools: not signed in"),
            "{}",
            e.message()
        );
    }

    #[cfg(not(feature = "entra"))]
    #[test]
    fn without_the_feature_entra_says_how_to_get_it() {
        let t = TargetArgs {
            auth: crate::args::target::AuthMode::Entra,
            ..Default::default()
        };
        let Err(e) = credential(&t) else {
            panic!("an Entra ID credential without the entra feature must be refused")
        };
        assert!(e.contains("--features entra"), "{e}");
    }
}
