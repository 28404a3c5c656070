//! Which account a command talks to and how it signs in: `--endpoint`, `--auth`, `--key`,
//! `--key-file`, `--key-stdin`, `--allow-insecure-http`, `--preferred-regions`.
//!
//! Each flag may come from an environment variable instead; the help names the variable in the
//! flag's text and never prints its value (nor an empty `[env: ...=]` when it is unset).

use std::fmt;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

/// How the command signs its requests.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// The account key (`--key`, `--key-file`, `--key-stdin` or `COSMOS_KEY`).
    #[default]
    Key,
    /// Entra ID tokens from the default credential chain: a client secret or a workload identity
    /// given by `AZURE_TENANT_ID`/`AZURE_CLIENT_ID`/`AZURE_CLIENT_SECRET`/`AZURE_FEDERATED_TOKEN_FILE`,
    /// then the managed identity, then the Azure CLI and the Azure Developer CLI.
    Entra,
}

/// The account flags. The key is never shown: `Debug` redacts it and errors never quote it.
#[derive(Args, Clone, Default, PartialEq, Eq)]
pub struct TargetArgs {
    /// Account endpoint, e.g. https://myaccount.documents.azure.com:443/ (or COSMOS_ENDPOINT).
    // The text is the flag's --help line, where a bare URL reads best.
    #[allow(rustdoc::bare_urls)]
    #[arg(long, env = "COSMOS_ENDPOINT", hide_env = true, global = true)]
    pub endpoint: Option<String>,
    /// How to sign in: `key` (the default) or `entra` (or COSMOS_AUTH).
    #[arg(
        long,
        value_enum,
        env = "COSMOS_AUTH",
        hide_env = true,
        default_value = "key",
        hide_default_value = true,
        global = true
    )]
    pub auth: AuthMode,
    /// Account key, base64 (or COSMOS_KEY); `-` reads it from standard input. Prefer --key-file
    /// or --key-stdin: a key given here shows in the process list.
    #[arg(long, env = "COSMOS_KEY", hide_env = true, global = true)]
    pub key: Option<String>,
    /// Read the account key from this file (surrounding whitespace is ignored); takes precedence
    /// over --key and COSMOS_KEY.
    #[arg(long, value_name = "PATH", global = true)]
    pub key_file: Option<PathBuf>,
    /// Read the account key from standard input; takes precedence over --key and COSMOS_KEY.
    #[arg(long, global = true, conflicts_with = "key_file")]
    pub key_stdin: bool,
    /// Allow a plain `http://` endpoint on a host that is not loopback (or
    /// COSMOS_ALLOW_INSECURE_HTTP=true); requests and keys then cross the network unencrypted.
    #[arg(
        long,
        env = "COSMOS_ALLOW_INSECURE_HTTP",
        hide_env = true,
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue,
        global = true
    )]
    pub allow_insecure_http: bool,
    /// A connection string, `AccountEndpoint=...;AccountKey=...;` (or COSMOS_CONNECTION_STRING):
    /// the endpoint and the key in one; an endpoint or key given apart wins over it.
    #[arg(long, env = "COSMOS_CONNECTION_STRING", hide_env = true, global = true)]
    pub connection_string: Option<String>,
    /// Regions to prefer, in order, comma-separated, e.g. "West US,East US".
    #[arg(long, value_delimiter = ',', global = true)]
    pub preferred_regions: Vec<String>,
    /// Add the diagnostics of the operation (every request it sent) to the output.
    #[arg(long, global = true)]
    pub diagnostics: bool,
}

impl fmt::Debug for TargetArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TargetArgs")
            .field("endpoint", &self.endpoint)
            .field("auth", &self.auth)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field(
                "connection_string",
                &self.connection_string.as_ref().map(|_| "<redacted>"),
            )
            .field("key_file", &self.key_file)
            .field("key_stdin", &self.key_stdin)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("preferred_regions", &self.preferred_regions)
            .field("diagnostics", &self.diagnostics)
            .finish()
    }
}

/// Where the account key comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum KeySource<'a> {
    /// Given on the command line or in `COSMOS_KEY`.
    Inline(&'a str),
    /// Read from this file.
    File(&'a Path),
    /// Read from standard input.
    Stdin,
}

impl fmt::Debug for KeySource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Inline(_) => f.write_str("Inline(<redacted>)"),
            KeySource::File(p) => f.debug_tuple("File").field(p).finish(),
            KeySource::Stdin => f.write_str("Stdin"),
        }
    }
}

/// How the command signs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthPlan<'a> {
    /// With the account key from this source.
    Key(KeySource<'a>),
    /// With Entra ID tokens.
    Entra,
}

impl TargetArgs {
    /// Whether a key is given apart from a connection string (flag, file, standard input or
    /// `COSMOS_KEY`), or Entra ID is asked for.
    pub fn signs_in_apart(&self) -> bool {
        self.key.is_some()
            || self.key_file.is_some()
            || self.key_stdin
            || self.auth == AuthMode::Entra
    }

    /// The endpoint, or an error saying how to give it.
    pub fn endpoint(&self) -> Result<&str, String> {
        self.endpoint
            .as_deref()
            .filter(|e| !e.trim().is_empty())
            .ok_or_else(|| "no account endpoint: pass --endpoint URL or set COSMOS_ENDPOINT".into())
    }

    /// How to sign in, decided from the flags alone (nothing is read yet): `--key-stdin` (or
    /// `--key -`) before `--key-file` before `--key`/`COSMOS_KEY`; `--auth entra` needs no key and
    /// refuses a key file or standard input, which it would ignore.
    pub fn auth_plan(&self) -> Result<AuthPlan<'_>, String> {
        let stdin = self.key_stdin || self.key.as_deref() == Some("-");
        if self.auth == AuthMode::Entra {
            if self.key_stdin || self.key_file.is_some() {
                return Err(
                    "--auth entra signs in with Entra ID tokens; drop --key-file/--key-stdin"
                        .into(),
                );
            }
            return Ok(AuthPlan::Entra);
        }
        if stdin {
            return Ok(AuthPlan::Key(KeySource::Stdin));
        }
        if let Some(path) = &self.key_file {
            return Ok(AuthPlan::Key(KeySource::File(path)));
        }
        self.key
            .as_deref()
            .filter(|k| !k.trim().is_empty())
            .map(|k| AuthPlan::Key(KeySource::Inline(k)))
            .ok_or_else(|| {
                "no account key: pass --key-file PATH, --key-stdin, --key KEY or set COSMOS_KEY \
                 (or sign in with --auth entra)"
                    .into()
            })
    }

    /// Whether the account key is read from standard input (which `--body -` then cannot use).
    pub fn key_reads_stdin(&self) -> bool {
        matches!(self.auth_plan(), Ok(AuthPlan::Key(KeySource::Stdin)))
    }

    /// Preferred regions with blanks dropped.
    pub fn regions(&self) -> Vec<String> {
        self.preferred_regions
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect()
    }
}

/// The key text from a file or standard input: surrounding whitespace (the final newline) dropped;
/// empty text is refused. The key itself never appears in the error.
pub fn key_from_text(text: &str, from: &str) -> Result<String, String> {
    let key = text.trim();
    if key.is_empty() {
        return Err(format!("the account key read from {from} is empty"));
    }
    Ok(key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let t = TargetArgs {
            key: Some("c2VjcmV0LWtleQ==".into()),
            ..Default::default()
        };
        let shown = format!("{t:?}");
        assert!(!shown.contains("c2VjcmV0"), "{shown}");
        assert!(shown.contains("<redacted>"));
        let plan = format!("{:?}", t.auth_plan().unwrap());
        assert!(!plan.contains("c2VjcmV0"), "{plan}");
    }

    #[test]
    fn missing_endpoint_is_named() {
        let e = TargetArgs::default().endpoint().unwrap_err();
        assert!(
            e.contains("--endpoint") && e.contains("COSMOS_ENDPOINT"),
            "{e}"
        );
        let t = TargetArgs {
            endpoint: Some("http://127.0.0.1:8081/".into()),
            ..Default::default()
        };
        assert_eq!(t.endpoint(), Ok("http://127.0.0.1:8081/"));
    }

    #[test]
    fn auth_plans() {
        let file = PathBuf::from("/run/secrets/cosmos-key");
        let t = |key: Option<&str>, key_file: bool, key_stdin: bool, auth: AuthMode| TargetArgs {
            key: key.map(str::to_owned),
            key_file: key_file.then(|| file.clone()),
            key_stdin,
            auth,
            ..Default::default()
        };
        use AuthMode::{Entra, Key};
        let cases: [(TargetArgs, Result<AuthPlan<'_>, &str>); 10] = [
            (
                t(Some("k"), false, false, Key),
                Ok(AuthPlan::Key(KeySource::Inline("k"))),
            ),
            (
                t(Some("-"), false, false, Key),
                Ok(AuthPlan::Key(KeySource::Stdin)),
            ),
            (
                t(None, false, true, Key),
                Ok(AuthPlan::Key(KeySource::Stdin)),
            ),
            (
                t(Some("k"), false, true, Key),
                Ok(AuthPlan::Key(KeySource::Stdin)),
            ),
            (
                t(None, true, false, Key),
                Ok(AuthPlan::Key(KeySource::File(&file))),
            ),
            (
                t(Some("k"), true, false, Key),
                Ok(AuthPlan::Key(KeySource::File(&file))),
            ),
            (t(None, false, false, Key), Err("no account key")),
            (t(Some("  "), false, false, Key), Err("--key-file PATH")),
            (t(Some("k"), false, false, Entra), Ok(AuthPlan::Entra)),
            (t(None, true, false, Entra), Err("drop --key-file")),
        ];
        for (args, want) in &cases {
            let got = args.auth_plan();
            match (want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(w, g, "{args:?}"),
                (Err(needle), Err(e)) => assert!(e.contains(needle), "{args:?}: {e}"),
                _ => panic!("{args:?}: wanted {want:?}, got {got:?}"),
            }
        }
        assert!(cases[1].0.key_reads_stdin() && !cases[4].0.key_reads_stdin());
    }

    #[test]
    fn keys_read_from_text_are_trimmed_and_never_quoted() {
        assert_eq!(key_from_text("c2VjcmV0\n", "stdin").unwrap(), "c2VjcmV0");
        let e = key_from_text(" \n", "/run/key").unwrap_err();
        assert!(e.contains("/run/key") && e.contains("empty"), "{e}");
    }

    #[test]
    fn blank_regions_are_dropped() {
        let t = TargetArgs {
            preferred_regions: vec![" West US".into(), "".into(), "East US ".into()],
            ..Default::default()
        };
        assert_eq!(t.regions(), ["West US", "East US"]);
    }
}
