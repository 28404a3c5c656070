//! Throughput buckets: which of a container's buckets (1 to 5) a request counts against. A
//! container's throughput settings may cap each bucket at a percentage of its RU/s; past it the
//! service answers 429 with sub-status 3212. A request without a bucket, or naming one the
//! container does not configure, is not limited by buckets.

use http::HeaderValue;

use super::ProtocolError;

/// A throughput bucket id (`x-ms-cosmos-throughput-bucket`): 1 to 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThroughputBucket(u8);

impl ThroughputBucket {
    /// The lowest and highest bucket id the service accepts.
    pub const MIN: u8 = 1;
    /// See [`ThroughputBucket::MIN`].
    pub const MAX: u8 = 5;

    /// Bucket `id`; an error unless it is 1 to 5 (the service refuses any other).
    pub fn new(id: u8) -> Result<Self, ProtocolError> {
        if (Self::MIN..=Self::MAX).contains(&id) {
            Ok(Self(id))
        } else {
            Err(ProtocolError::new(format!(
                "a throughput bucket is 1 to 5, not {id}"
            )))
        }
    }

    /// The bucket's id.
    pub const fn id(self) -> u8 {
        self.0
    }

    /// The header value.
    pub fn header_value(self) -> HeaderValue {
        HeaderValue::from(u16::from(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_1_to_5_are_buckets() {
        let table: &[(u8, Option<&str>)] = &[
            (0, None),
            (1, Some("1")),
            (3, Some("3")),
            (5, Some("5")),
            (6, None),
            (255, None),
        ];
        for &(id, header) in table {
            let got = ThroughputBucket::new(id)
                .ok()
                .map(ThroughputBucket::header_value);
            assert_eq!(got.as_ref().and_then(|v| v.to_str().ok()), header, "{id}");
        }
    }
}
