//! A driver for the account the command line names.

use cosmos_driver::protocol::Endpoint;
use cosmos_driver::{CosmosDriver, DriverOptions};

use super::{sign_in, CommandError};
use crate::args::request_class::RequestClassArgs;
use crate::args::target::TargetArgs;

/// The endpoint, checked by the driver's own rule; a plain `http://` endpoint on a host that is
/// not loopback is refused with the way to allow it on this command line.
pub fn checked_endpoint(endpoint: &str, allow_insecure_http: bool) -> Result<(), String> {
    match Endpoint::parse(endpoint, allow_insecure_http) {
        Ok(_) => Ok(()),
        // Refused only for its scheme: the same text passes when plain http is allowed.
        Err(_) if !allow_insecure_http && Endpoint::parse(endpoint, true).is_ok() => Err(format!(
            "the endpoint {endpoint:?} uses plain http on a host that is not loopback; use \
             https, or pass --allow-insecure-http (or set COSMOS_ALLOW_INSECURE_HTTP=true) to send \
             requests unencrypted"
        )),
        Err(e) => Err(e.message().to_owned()),
    }
}

/// The driver options for `target`: endpoint, credential, preferred regions, plain http if allowed.
pub fn driver_options(target: &TargetArgs) -> Result<DriverOptions, String> {
    let from_string = target
        .connection_string
        .as_deref()
        .map(DriverOptions::from_connection_string)
        .transpose()
        .map_err(|e| format!("--connection-string: {}", e.message()))?;
    let endpoint = match (&from_string, target.endpoint.as_deref()) {
        (Some(o), None) => o.endpoint().to_owned(),
        _ => target.endpoint()?.to_owned(),
    };
    checked_endpoint(&endpoint, target.allow_insecure_http)?;
    let credential = match &from_string {
        Some(o) if !target.signs_in_apart() => o.credential().clone(),
        _ => sign_in::credential(target)?,
    };
    Ok(DriverOptions::new(endpoint, credential)
        .with_preferred_regions(target.regions())
        .with_allow_insecure_http(target.allow_insecure_http))
}

/// Connects to the account given by the target flags (or their environment variables).
pub async fn driver(target: &TargetArgs) -> Result<CosmosDriver, CommandError> {
    Ok(CosmosDriver::new(driver_options(target)?).await?)
}

/// Connects as [`driver`] does, every request of the driver carrying `class`'s priority and
/// throughput bucket.
pub async fn driver_of_class(
    target: &TargetArgs,
    class: &RequestClassArgs,
) -> Result<CosmosDriver, CommandError> {
    let options = driver_options(target)?;
    let defaults = class.apply(options.operation_defaults().clone());
    Ok(CosmosDriver::new(options.with_operation_defaults(defaults)).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_off_loopback_names_the_flag() {
        for (endpoint, allow, want) in [
            ("https://acct.documents.azure.com:443/", false, Ok(())),
            ("http://127.0.0.1:8081/", false, Ok(())),
            ("http://localhost:8081/", false, Ok(())),
            ("http://emulator:8081/", true, Ok(())),
            ("http://emulator:8081/", false, Err("--allow-insecure-http")),
            ("ftp://emulator/", true, Err("scheme")),
            ("https://acct/path", false, Err("path")),
        ] {
            let got = checked_endpoint(endpoint, allow);
            match (want, &got) {
                (Ok(()), Ok(())) => {}
                (Err(needle), Err(e)) => {
                    assert!(e.contains(needle), "{endpoint}: {e}");
                    assert!(!e.contains("allow_insecure_http"), "{e}");
                }
                _ => panic!("{endpoint} allow={allow}: {got:?}"),
            }
        }
    }
}
