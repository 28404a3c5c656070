//! Provisioned throughput: manual RU/s or an autoscale maximum, as sent when a database or
//! container is created (a header) and as held in its offer (`content`).

use http::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ThroughputBucketLimit;
use crate::error::{CosmosError, ErrorKind};

const OFFER_THROUGHPUT: HeaderName = HeaderName::from_static("x-ms-offer-throughput");
const OFFER_AUTOPILOT: HeaderName = HeaderName::from_static("x-ms-cosmos-offer-autopilot-settings");

/// The throughput of a database or container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThroughputProperties {
    /// A fixed number of RU/s (the service takes multiples of 100 from 400).
    Manual(u64),
    /// Scales between a tenth of `max` and `max` RU/s (the service takes multiples of 1000 from
    /// 1000).
    Autoscale {
        /// The most RU/s the resource scales to.
        max: u64,
    },
}

impl ThroughputProperties {
    /// `ru_per_second` RU/s, fixed.
    pub fn manual(ru_per_second: u64) -> Self {
        Self::Manual(ru_per_second)
    }

    /// Autoscale up to `max_ru_per_second` RU/s.
    pub fn autoscale(max_ru_per_second: u64) -> Self {
        Self::Autoscale {
            max: max_ru_per_second,
        }
    }

    /// The manual RU/s, when manual.
    pub fn manual_throughput(&self) -> Option<u64> {
        match self {
            Self::Manual(n) => Some(*n),
            Self::Autoscale { .. } => None,
        }
    }

    /// The autoscale maximum, when autoscale.
    pub fn autoscale_max_throughput(&self) -> Option<u64> {
        match self {
            Self::Manual(_) => None,
            Self::Autoscale { max } => Some(*max),
        }
    }

    /// The header a create request carries to provision this throughput.
    pub fn create_header(&self) -> (HeaderName, HeaderValue) {
        match self {
            Self::Manual(n) => (OFFER_THROUGHPUT, HeaderValue::from(*n)),
            Self::Autoscale { max } => {
                let json = serde_json::json!({ "maxThroughput": max }).to_string();
                // JSON of one number only holds header-safe characters.
                let value =
                    HeaderValue::from_str(&json).unwrap_or_else(|_| HeaderValue::from_static("{}"));
                (OFFER_AUTOPILOT, value)
            }
        }
    }
}

/// An offer document, as read from `/offers`: the fields the driver uses, and every other field
/// kept as it came so that a replace sends them back unchanged.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct OfferDocument {
    /// The offer's id (a resource id).
    pub id: String,
    /// The offer's content: its throughput.
    pub content: OfferContent,
    /// The other fields (`resource`, `offerResourceId`, `_etag`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// An offer's `content`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OfferContent {
    /// The RU/s now (for autoscale, what it currently scales from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer_throughput: Option<u64>,
    /// Present on autoscale offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer_autopilot_settings: Option<AutopilotSettings>,
    /// The throughput buckets' caps (`throughputBuckets`; empty: none configured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throughput_buckets: Vec<ThroughputBucketLimit>,
    /// Other content fields, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// An autoscale offer's settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AutopilotSettings {
    /// The autoscale maximum.
    pub max_throughput: u64,
    /// Other settings, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl OfferDocument {
    /// Parses an offer document.
    pub fn from_json(body: &[u8]) -> Result<Self, CosmosError> {
        serde_json::from_slice(body).map_err(|e| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the offer document is not valid: {e}"),
            )
        })
    }

    /// The throughput the offer provisions.
    pub fn throughput(&self) -> Result<ThroughputProperties, CosmosError> {
        match (
            &self.content.offer_autopilot_settings,
            self.content.offer_throughput,
        ) {
            (Some(a), _) => Ok(ThroughputProperties::autoscale(a.max_throughput)),
            (None, Some(n)) => Ok(ThroughputProperties::manual(n)),
            (None, None) => Err(CosmosError::new(
                ErrorKind::Deserialization,
                format!(
                    "offer {} names neither offerThroughput nor offerAutopilotSettings",
                    self.id
                ),
            )),
        }
    }

    /// The RU/s the offer provides now (`offerThroughput`), when the service said.
    pub fn current_throughput(&self) -> Option<u64> {
        self.content.offer_throughput
    }

    /// The caps of the container's throughput buckets (empty: none configured).
    pub fn throughput_buckets(&self) -> &[ThroughputBucketLimit] {
        &self.content.throughput_buckets
    }

    /// The same offer with its bucket caps set to `buckets` (empty: none), its throughput kept.
    pub fn with_throughput_buckets(&self, buckets: Vec<ThroughputBucketLimit>) -> Self {
        let mut next = self.clone();
        next.content.throughput_buckets = buckets;
        next
    }

    /// The same offer set to `throughput`: manual sets `offerThroughput` and drops the autoscale
    /// settings; autoscale sets the maximum (keeping the other autoscale settings) and drops
    /// `offerThroughput`, which the service derives.
    pub fn with_throughput(&self, throughput: ThroughputProperties) -> Self {
        let mut next = self.clone();
        match throughput {
            ThroughputProperties::Manual(n) => {
                next.content.offer_throughput = Some(n);
                next.content.offer_autopilot_settings = None;
            }
            ThroughputProperties::Autoscale { max } => {
                next.content.offer_throughput = None;
                let other = self
                    .content
                    .offer_autopilot_settings
                    .as_ref()
                    .map(|a| a.other.clone())
                    .unwrap_or_default();
                next.content.offer_autopilot_settings = Some(AutopilotSettings {
                    max_throughput: max,
                    other,
                });
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(content: Value) -> OfferDocument {
        let v = json!({"id": "of1", "resource": "dbs/a/colls/b/", "_etag": "\"e\"",
                       "offerVersion": "V2", "content": content});
        OfferDocument::from_json(v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn offers_read_as_manual_or_autoscale() {
        let rows = [
            (
                json!({"offerThroughput": 400}),
                Ok(ThroughputProperties::manual(400)),
            ),
            (
                json!({"offerThroughput": 400, "offerAutopilotSettings": {"maxThroughput": 4000}}),
                Ok(ThroughputProperties::autoscale(4000)),
            ),
            (json!({}), Err("neither")),
        ];
        for (content, want) in rows {
            match (doc(content.clone()).throughput(), want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w),
                (Err(e), Err(needle)) => assert!(e.message().contains(needle)),
                (g, w) => panic!("{content}: {g:?} vs {w:?}"),
            }
        }
        assert!(OfferDocument::from_json(b"{\"id\": 1}").is_err());
    }

    #[test]
    fn a_replace_changes_the_throughput_and_keeps_everything_else() {
        let auto = doc(
            json!({"offerThroughput": 400, "offerIsRUPerMinuteThroughputEnabled": false,
            "offerAutopilotSettings": {"maxThroughput": 4000, "autoUpgradePolicy": {"x": 1}}}),
        );
        let raised =
            serde_json::to_value(auto.with_throughput(ThroughputProperties::autoscale(6000)))
                .unwrap();
        assert_eq!(
            raised["content"]["offerAutopilotSettings"]["maxThroughput"],
            6000
        );
        assert_eq!(
            raised["content"]["offerAutopilotSettings"]["autoUpgradePolicy"]["x"],
            1
        );
        assert!(raised["content"].get("offerThroughput").is_none());
        assert_eq!(
            raised["content"]["offerIsRUPerMinuteThroughputEnabled"],
            false
        );
        assert_eq!(raised["resource"], "dbs/a/colls/b/");
        assert_eq!(raised["_etag"], "\"e\"");
        let manual =
            serde_json::to_value(auto.with_throughput(ThroughputProperties::manual(700))).unwrap();
        assert_eq!(manual["content"]["offerThroughput"], 700);
        assert!(manual["content"].get("offerAutopilotSettings").is_none());
    }

    #[test]
    fn create_headers_name_the_kind() {
        let (n, v) = ThroughputProperties::manual(500).create_header();
        assert_eq!(
            (n.as_str(), v.to_str().unwrap()),
            ("x-ms-offer-throughput", "500")
        );
        let (n, v) = ThroughputProperties::autoscale(4000).create_header();
        assert_eq!(n.as_str(), "x-ms-cosmos-offer-autopilot-settings");
        assert_eq!(v.to_str().unwrap(), r#"{"maxThroughput":4000}"#);
        assert_eq!(
            ThroughputProperties::autoscale(4000).autoscale_max_throughput(),
            Some(4000)
        );
        assert_eq!(
            ThroughputProperties::manual(400).manual_throughput(),
            Some(400)
        );
    }
}
