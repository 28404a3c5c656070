//! The database account document (`GET /`): regions, their endpoints and the write configuration.

use serde::Deserialize;

use crate::error::{CosmosError, ErrorKind};
use crate::protocol::Endpoint;
use crate::protocol::{ConsistencyLevel, Region};

/// An applicable read region and the endpoint that serves it, as the routing layer knows them.
pub(crate) trait RegionalEndpoint {
    /// The routing layer's endpoint identity (URL, endpoint key).
    type Endpoint: PartialEq + Clone;
    /// The region.
    fn region(&self) -> &Region;
    /// The endpoint serving the region.
    fn endpoint(&self) -> &Self::Endpoint;
}

/// A region and the endpoint that serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionEndpoint {
    /// The region.
    pub region: Region,
    /// Its endpoint.
    pub endpoint: Endpoint,
}

impl RegionalEndpoint for RegionEndpoint {
    type Endpoint = Endpoint;
    fn region(&self) -> &Region {
        &self.region
    }
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

/// What the driver knows about the account.
#[derive(Clone, Debug, PartialEq)]
pub struct AccountProperties {
    /// Regions that take writes, the hub (current write region) first.
    pub write_regions: Vec<RegionEndpoint>,
    /// Regions that serve reads, in the account's order.
    pub read_regions: Vec<RegionEndpoint>,
    /// Whether every write region takes writes (multi-write); otherwise only the first does.
    pub multi_write: bool,
    /// The account's default consistency level.
    pub default_consistency: ConsistencyLevel,
    /// The operator's kill switch for cross-region hedging (`disableCrossRegionalHedging`):
    /// `Some(true)` turns every hedge off, whatever the operation, the client or the environment
    /// ask for (the rule and its sources: `hedging::strategy_resolution`); `Some(false)` or `None`
    /// (not carried, or something other than a boolean) leaves the configured hedging in force.
    pub disable_cross_regional_hedging: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    name: String,
    database_account_endpoint: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConsistencyPolicy {
    default_consistency_level: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccountDocument {
    #[serde(default)]
    writable_locations: Vec<Location>,
    #[serde(default)]
    readable_locations: Vec<Location>,
    #[serde(default)]
    enable_multiple_write_locations: bool,
    user_consistency_policy: Option<ConsistencyPolicy>,
    #[serde(default)]
    disable_cross_regional_hedging: Option<serde_json::Value>,
}

/// The switch's value: a boolean, or the strings `"true"` / `"false"` (which the Node.js SDK also
/// accepts); anything else is read as absent rather than failing the whole document.
fn switch_value(value: Option<&serde_json::Value>) -> Option<bool> {
    match value? {
        serde_json::Value::Bool(b) => Some(*b),
        serde_json::Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        serde_json::Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// The region name used when the account lists no locations (a single-endpoint server).
pub(crate) const GLOBAL_REGION_NAME: &str = "global";

impl AccountProperties {
    /// Parses the account document. Locations whose endpoint is not a valid (or allowed) URL are
    /// skipped with a warning; an account without usable locations is served by `global`.
    pub fn parse(
        body: &[u8],
        global: &Endpoint,
        allow_insecure_http: bool,
    ) -> Result<Self, CosmosError> {
        let doc: AccountDocument = serde_json::from_slice(body).map_err(|e| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the database account document is not valid: {e}"),
            )
            .with_source(e)
        })?;
        let convert = |locations: &[Location]| -> Vec<RegionEndpoint> {
            let mut out: Vec<RegionEndpoint> = Vec::with_capacity(locations.len());
            for l in locations {
                match Endpoint::parse(&l.database_account_endpoint, allow_insecure_http) {
                    Ok(endpoint) => {
                        let region = Region::new(&l.name);
                        if !out.iter().any(|r| r.region == region) {
                            out.push(RegionEndpoint { region, endpoint });
                        }
                    }
                    Err(e) => {
                        tracing::warn!(region = %l.name, error = %e, "skipping an account location")
                    }
                }
            }
            out
        };
        let mut write_regions = convert(&doc.writable_locations);
        let mut read_regions = convert(&doc.readable_locations);
        let fallback = || {
            vec![RegionEndpoint {
                region: Region::new(GLOBAL_REGION_NAME),
                endpoint: global.clone(),
            }]
        };
        if write_regions.is_empty() && read_regions.is_empty() {
            write_regions = fallback();
            read_regions = fallback();
        } else if write_regions.is_empty() {
            write_regions = read_regions[..1].to_vec();
        } else if read_regions.is_empty() {
            read_regions = write_regions.clone();
        }
        let default_consistency = doc
            .user_consistency_policy
            .and_then(|p| p.default_consistency_level)
            .and_then(|l| ConsistencyLevel::parse(&l))
            .unwrap_or(ConsistencyLevel::Session);
        Ok(Self {
            write_regions,
            read_regions,
            multi_write: doc.enable_multiple_write_locations,
            default_consistency,
            disable_cross_regional_hedging: switch_value(
                doc.disable_cross_regional_hedging.as_ref(),
            ),
        })
    }

    /// The preferred regions the account does not have, in the order given (none for a server
    /// that lists no locations: it is served by its one endpoint).
    pub(crate) fn unknown_regions<'a>(&self, preferred: &'a [Region]) -> Vec<&'a Region> {
        if self.read_regions.len() == 1
            && self.read_regions[0].region.as_str() == GLOBAL_REGION_NAME
        {
            return Vec::new();
        }
        preferred
            .iter()
            .filter(|p| !self.all_regions().any(|r| r == *p))
            .collect()
    }

    /// The hub: the region that takes writes on a single-write account.
    pub fn hub(&self) -> &RegionEndpoint {
        // `parse` guarantees at least one write region.
        &self.write_regions[0]
    }

    /// Every region the account has (read regions, then write-only regions).
    pub fn all_regions(&self) -> impl Iterator<Item = &Region> {
        self.read_regions.iter().map(|r| &r.region).chain(
            self.write_regions
                .iter()
                .map(|r| &r.region)
                .filter(|w| !self.read_regions.iter().any(|r| &r.region == *w)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global() -> Endpoint {
        Endpoint::parse("https://acct.example/", false).unwrap()
    }

    #[test]
    fn parses_regions_and_write_configuration() {
        let body = br#"{
            "writableLocations": [{"name": "East US", "databaseAccountEndpoint": "https://acct-eastus.example:443/"}],
            "readableLocations": [
                {"name": "East US", "databaseAccountEndpoint": "https://acct-eastus.example:443/"},
                {"name": "West US", "databaseAccountEndpoint": "https://acct-westus.example:443/"},
                {"name": "Bad", "databaseAccountEndpoint": "http://insecure.example/"}
            ],
            "enableMultipleWriteLocations": false,
            "userConsistencyPolicy": {"defaultConsistencyLevel": "Session"}
        }"#;
        let a = AccountProperties::parse(body, &global(), false).unwrap();
        assert_eq!(a.hub().region, Region::new("eastus"));
        assert_eq!(
            a.read_regions.len(),
            2,
            "the plain-http location is skipped"
        );
        assert!(!a.multi_write);
        assert_eq!(a.default_consistency, ConsistencyLevel::Session);
        assert_eq!(a.all_regions().count(), 2);
    }

    #[test]
    fn no_locations_means_the_global_endpoint() {
        let a = AccountProperties::parse(b"{}", &global(), false).unwrap();
        assert_eq!(a.hub().endpoint, global());
        assert_eq!(a.read_regions[0].region.as_str(), GLOBAL_REGION_NAME);
    }

    #[test]
    fn the_hedging_kill_switch_is_read_and_anything_else_is_absent() {
        let table: &[(&str, Option<bool>)] = &[
            (r#"{}"#, None),
            (r#"{"disableCrossRegionalHedging": true}"#, Some(true)),
            (r#"{"disableCrossRegionalHedging": false}"#, Some(false)),
            (r#"{"disableCrossRegionalHedging": "True"}"#, Some(true)),
            (r#"{"disableCrossRegionalHedging": "false"}"#, Some(false)),
            (r#"{"disableCrossRegionalHedging": null}"#, None),
            (r#"{"disableCrossRegionalHedging": 0}"#, None),
            (r#"{"disableCrossRegionalHedging": "off"}"#, None),
            (r#"{"disableCrossRegionalHedging": {"a": 1}}"#, None),
            // The per-partition failover property is not the hedging switch.
            (r#"{"enablePerPartitionFailoverBehavior": false}"#, None),
        ];
        for (body, want) in table {
            let a = AccountProperties::parse(body.as_bytes(), &global(), false).unwrap();
            assert_eq!(a.disable_cross_regional_hedging, *want, "{body}");
        }
    }

    #[test]
    fn malformed_documents_are_errors() {
        let e = AccountProperties::parse(b"[1,2]", &global(), false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Deserialization);
    }

    #[test]
    fn preferred_regions_the_account_lacks_are_named() {
        let body = br#"{
            "writableLocations": [{"name": "East US", "databaseAccountEndpoint": "https://acct-eastus.example:443/"}],
            "readableLocations": [
                {"name": "East US", "databaseAccountEndpoint": "https://acct-eastus.example:443/"},
                {"name": "West US", "databaseAccountEndpoint": "https://acct-westus.example:443/"}
            ]
        }"#;
        let a = AccountProperties::parse(body, &global(), false).unwrap();
        let preferred = [
            Region::new("west-us"),
            Region::new("Mars North"),
            Region::new("eastus"),
        ];
        let unknown: Vec<&str> = a
            .unknown_regions(&preferred)
            .iter()
            .map(|r| r.as_str())
            .collect();
        assert_eq!(unknown, ["Mars North"]);
        let single = AccountProperties::parse(b"{}", &global(), false).unwrap();
        assert!(single.unknown_regions(&preferred).is_empty());
    }
}
