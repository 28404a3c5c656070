//! Which account a command talks to: `--endpoint`, `--key`, `--preferred-regions`.

use std::fmt;

use clap::Args;

/// The account flags. The key is never shown: `Debug` redacts it and errors never quote it.
#[derive(Args, Clone, Default, PartialEq, Eq)]
pub struct TargetArgs {
    /// Account endpoint, e.g. https://myaccount.documents.azure.com:443/.
    // The text is the flag's --help line, where a bare URL reads best.
    #[allow(rustdoc::bare_urls)]
    #[arg(long, env = "COSMOS_ENDPOINT", global = true)]
    pub endpoint: Option<String>,
    /// Account key (base64).
    #[arg(long, env = "COSMOS_KEY", hide_env_values = true, global = true)]
    pub key: Option<String>,
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
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("preferred_regions", &self.preferred_regions)
            .field("diagnostics", &self.diagnostics)
            .finish()
    }
}

impl TargetArgs {
    /// The endpoint and key, or an error saying which is missing.
    pub fn endpoint_and_key(&self) -> Result<(&str, &str), String> {
        let endpoint = self
            .endpoint
            .as_deref()
            .filter(|e| !e.trim().is_empty())
            .ok_or("no account endpoint: pass --endpoint URL or set COSMOS_ENDPOINT")?;
        let key = self
            .key
            .as_deref()
            .filter(|k| !k.trim().is_empty())
            .ok_or("no account key: pass --key KEY or set COSMOS_KEY")?;
        Ok((endpoint, key))
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
    }

    #[test]
    fn missing_parts_are_named() {
        let none = TargetArgs::default();
        assert!(none.endpoint_and_key().unwrap_err().contains("--endpoint"));
        let no_key = TargetArgs {
            endpoint: Some("http://127.0.0.1:8081/".into()),
            ..Default::default()
        };
        let e = no_key.endpoint_and_key().unwrap_err();
        assert!(e.contains("--key") && e.contains("COSMOS_KEY"), "{e}");
        let both = TargetArgs {
            key: Some("k".into()),
            ..no_key
        };
        assert_eq!(both.endpoint_and_key(), Ok(("http://127.0.0.1:8081/", "k")));
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
