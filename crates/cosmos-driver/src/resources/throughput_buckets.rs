//! A container's throughput bucket settings, as its offer holds them
//! (`content.throughputBuckets`): each bucket (1 to 5) may use at most a percentage of the
//! container's RU/s. Nothing is reserved for a bucket.

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
        })
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
    }
}
