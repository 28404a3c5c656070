//! A container's throughput bucket settings, as its offer holds them
//! (`content.throughputBuckets`): each bucket (1 to 5) may use at most a percentage of the
//! container's RU/s. Nothing is reserved for a bucket. One bucket may be the default
//! (`isDefaultBucket`): requests that name no bucket are counted in it.

use serde::{Deserialize, Serialize};

use crate::error::CosmosError;
use crate::protocol::ThroughputBucket;

/// One bucket's cap: bucket `id` may use at most `maxThroughputPercentage` percent of the
/// container's throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThroughputBucketLimit {
    id: u8,
    max_throughput_percentage: u8,
    #[serde(default, skip_serializing_if = "is_false")]
    is_default_bucket: bool,
}

/// Whether `flag` is false (a bucket that is not the default leaves the field out).
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl ThroughputBucketLimit {
    /// Bucket `id` (1 to 5) capped at `max_percent` (1 to 100) percent of the container's RU/s.
    pub fn new(id: u8, max_percent: u8) -> Result<Self, CosmosError> {
        let id = ThroughputBucket::new(id)?.id();
        if !(1..=100).contains(&max_percent) {
            return Err(CosmosError::invalid_input(format!(
                "a throughput bucket's maximum is 1 to 100 percent, not {max_percent}"
            )));
        }
        Ok(Self {
            id,
            max_throughput_percentage: max_percent,
            is_default_bucket: false,
        })
    }

    /// The same cap, marked as the container's default bucket: requests that name no bucket are
    /// counted in it. At most one bucket of a container may be the default (the service answers
    /// 400 otherwise).
    pub fn as_default(mut self) -> Self {
        self.is_default_bucket = true;
        self
    }

    /// Whether requests that name no bucket are counted in this one.
    pub fn is_default(&self) -> bool {
        self.is_default_bucket
    }

    /// The bucket's id.
    pub fn id(&self) -> u8 {
        self.id
    }

    /// The most of the container's throughput the bucket may use, in percent.
    pub fn max_throughput_percentage(&self) -> u8 {
        self.max_throughput_percentage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_and_spelled_as_the_service_spells_them() {
        let table: &[(u8, u8, bool)] = &[
            (1, 20, true),
            (5, 100, true),
            (0, 20, false),
            (6, 20, false),
            (1, 0, false),
            (1, 101, false),
        ];
        for &(id, percent, ok) in table {
            assert_eq!(
                ThroughputBucketLimit::new(id, percent).is_ok(),
                ok,
                "{id} {percent}"
            );
        }
        let limit = ThroughputBucketLimit::new(2, 35).unwrap();
        let json = serde_json::to_value(limit).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": 2, "maxThroughputPercentage": 35})
        );
        assert_eq!(
            serde_json::from_value::<ThroughputBucketLimit>(json).unwrap(),
            limit
        );
        assert!(!limit.is_default());
        let default = limit.as_default();
        assert!(default.is_default());
        let json = serde_json::to_value(default).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": 2, "maxThroughputPercentage": 35, "isDefaultBucket": true})
        );
        assert_eq!(
            serde_json::from_value::<ThroughputBucketLimit>(json).unwrap(),
            default
        );
        let not_default =
            serde_json::json!({"id": 2, "maxThroughputPercentage": 35, "isDefaultBucket": false});
        assert_eq!(
            serde_json::from_value::<ThroughputBucketLimit>(not_default).unwrap(),
            limit
        );
    }
}
