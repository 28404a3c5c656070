//! Where a change feed starts, what it covers, and which changes it reports.

use std::time::SystemTime;

use super::feed_range::FeedRange;
use crate::protocol::PartitionKey;

/// Where a change feed starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeFeedStart {
    /// From the first change the container still holds (latest-version mode only).
    Beginning,
    /// Only changes made after each range is first read.
    Now,
    /// Changes committed at or after this time (second precision; latest-version mode only).
    PointInTime(SystemTime),
    /// Where a previous feed left off: the string its `continuation()` returned. It carries its
    /// own scope and mode; the scope and mode given beside it must match.
    Continuation(String),
}

/// What a change feed covers.
#[derive(Clone, Debug, PartialEq)]
pub enum FeedScope {
    /// Every partition key range of the container.
    Container,
    /// One feed range (from `ContainerClient::feed_ranges`, or part of one).
    FeedRange(FeedRange),
    /// The changes of one partition key.
    PartitionKey(PartitionKey),
}

/// Which changes a feed reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangeFeedMode {
    /// Each changed item once, at its latest version (`A-IM: Incremental feed`). Deletes are not
    /// reported.
    #[default]
    LatestVersion,
    /// Every create, replace and delete, each with its metadata (`A-IM: Full-Fidelity Feed`);
    /// items are [`super::ChangeFeedItem`]. Starts `Now` or from a continuation.
    AllVersionsAndDeletes,
}
