//! A driver for the account the command line names.

use cosmos_driver::{CosmosDriver, Credential, DriverOptions};

use super::CommandError;
use crate::args::target::TargetArgs;

/// Connects to the account given by `--endpoint`/`--key` (or `COSMOS_ENDPOINT`/`COSMOS_KEY`).
pub async fn driver(target: &TargetArgs) -> Result<CosmosDriver, CommandError> {
    let (endpoint, key) = target.endpoint_and_key()?;
    // The key's text never reaches an error message: a bad key is reported without it.
    let credential = Credential::master_key(key)
        .map_err(|_| "the account key is not valid base64".to_string())?;
    let options = DriverOptions::new(endpoint.to_owned(), credential)
        .with_preferred_regions(target.regions());
    Ok(CosmosDriver::new(options).await?)
}
