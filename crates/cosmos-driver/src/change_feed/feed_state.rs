//! Where a change feed stands, and which range its next page request reads: a pure state machine
//! over the continuation's ranges and the container's current partition key ranges.
//!
//! Ranges are read round-robin, one page at a time. A range the container has since split is
//! replaced by its parts in the children, each continuing from the parent's position (the
//! service keeps a partition's log sequence across a split, so the parent's etag is a position
//! in each child). A poll ends when every range has answered "nothing new" since the last change.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::continuation::{ContinuationData, RangePosition, UnreadStart};
use super::feed_range::FeedRange;
use super::start_and_scope::{ChangeFeedMode, ChangeFeedStart, FeedScope};
use crate::error::CosmosError;
use crate::protocol::{ContainerReference, PartitionKey};
use crate::routing::TargetRange;

/// The most ranges one continuation may hold.
pub(crate) const MAX_FEED_RANGES: usize = 10_000;

/// Where the next page request starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PageStart {
    /// After the position an earlier page returned (`If-None-Match: <etag>`).
    After(String),
    /// From the first change held (no `If-None-Match`).
    Beginning,
    /// From now (`If-None-Match: *`).
    Now,
    /// From changes committed at or after this time (`If-Modified-Since`).
    Since(SystemTime),
}

/// What the next page request reads.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NextRequest {
    /// One partition key range, the whole of it or the feed range part of it.
    Range {
        /// The partition key range id.
        range_id: String,
        /// The part of the range to read; `None` for the whole range.
        part: Option<FeedRange>,
        /// Where to start.
        start: PageStart,
    },
    /// The feed's partition key.
    PartitionKey {
        /// The key.
        partition_key: PartitionKey,
        /// Where to start.
        start: PageStart,
    },
}

/// A change feed's position over all its ranges.
#[derive(Clone, Debug)]
pub(crate) struct FeedState {
    data: ContinuationData,
    /// The partition key of a partition-key scope (also in `data`, as header JSON).
    partition_key: Option<PartitionKey>,
    /// Ranges that answered "nothing new" in a row.
    quiet: usize,
}

impl FeedState {
    /// The state of a new feed on `container`.
    pub(crate) fn new(
        container: &ContainerReference,
        start: ChangeFeedStart,
        scope: FeedScope,
        mode: ChangeFeedMode,
    ) -> Result<Self, CosmosError> {
        let all_versions = mode == ChangeFeedMode::AllVersionsAndDeletes;
        let unread = match start {
            ChangeFeedStart::Continuation(token) => {
                return Self::resume(container, &token, scope, mode)
            }
            ChangeFeedStart::Beginning => UnreadStart::Beginning,
            ChangeFeedStart::Now => UnreadStart::Now,
            ChangeFeedStart::PointInTime(t) => {
                let secs = t
                    .duration_since(UNIX_EPOCH)
                    .map_err(|_| {
                        CosmosError::invalid_input("a change feed cannot start before 1970")
                    })?
                    .as_secs();
                UnreadStart::Since(secs)
            }
        };
        if all_versions && unread != UnreadStart::Now {
            return Err(CosmosError::invalid_input(
                "an all-versions-and-deletes change feed starts Now or from a continuation",
            ));
        }
        let (partition_key, range) = match scope {
            FeedScope::Container => (None, FeedRange::full()),
            FeedScope::FeedRange(r) => (None, r),
            FeedScope::PartitionKey(pk) => (Some(pk), FeedRange::full()),
        };
        let data = ContinuationData::new(
            container.link().to_owned(),
            all_versions,
            partition_key.as_ref().map(|pk| pk.as_json().to_owned()),
            unread,
            vec![RangePosition {
                min: range.min().to_owned(),
                max: range.max().to_owned(),
                etag: None,
            }],
        );
        Ok(FeedState {
            data,
            partition_key,
            quiet: 0,
        })
    }

    fn resume(
        container: &ContainerReference,
        token: &str,
        scope: FeedScope,
        mode: ChangeFeedMode,
    ) -> Result<Self, CosmosError> {
        let data = ContinuationData::decode(token, MAX_FEED_RANGES)?;
        let mismatch = |what: &str| {
            CosmosError::invalid_input(format!("the change feed continuation was made for {what}"))
        };
        if data.container != container.link() {
            return Err(mismatch("another container"));
        }
        if data.all_versions != (mode == ChangeFeedMode::AllVersionsAndDeletes) {
            return Err(mismatch("the other change feed mode"));
        }
        let span_min = data.ranges.iter().map(|r| r.min.as_str()).min();
        let span_max = data.ranges.iter().map(|r| r.max.as_str()).max();
        let scope_ok = match &scope {
            FeedScope::PartitionKey(pk) => {
                data.partition_key.as_deref() == Some(pk.as_json()) && data.ranges.len() == 1
            }
            FeedScope::Container => {
                data.partition_key.is_none()
                    && span_min == Some("")
                    && span_max == Some(crate::protocol::EPK_MAX)
            }
            FeedScope::FeedRange(r) => {
                data.partition_key.is_none()
                    && span_min == Some(r.min())
                    && span_max == Some(r.max())
            }
        };
        if !scope_ok {
            return Err(mismatch("another scope"));
        }
        let partition_key = match &scope {
            FeedScope::PartitionKey(pk) => Some(pk.clone()),
            _ => None,
        };
        Ok(FeedState {
            data,
            partition_key,
            quiet: 0,
        })
    }

    /// The continuation: one string covering every range of the feed.
    pub(crate) fn continuation(&self) -> String {
        self.data.encode()
    }

    /// Whether the feed reads one partition key (and needs no range listing).
    pub(crate) fn is_partition_key_scope(&self) -> bool {
        self.partition_key.is_some()
    }

    /// Whether the feed is in all-versions-and-deletes mode.
    pub(crate) fn is_all_versions(&self) -> bool {
        self.data.all_versions
    }

    #[cfg(test)]
    /// How many ranges the feed tracks now.
    pub(crate) fn range_count(&self) -> usize {
        self.data.ranges.len()
    }

    /// Whether every range has answered "nothing new" since the last change: the poll is over.
    pub(crate) fn poll_finished(&self) -> bool {
        self.quiet >= self.data.ranges.len()
    }

    /// Starts a new poll (after one finished).
    pub(crate) fn start_poll(&mut self) {
        self.quiet = 0;
    }

    fn page_start(&self, etag: Option<&String>) -> PageStart {
        match (etag, self.data.start) {
            (Some(e), _) => PageStart::After(e.clone()),
            (None, UnreadStart::Beginning) => PageStart::Beginning,
            (None, UnreadStart::Now) => PageStart::Now,
            (None, UnreadStart::Since(s)) => PageStart::Since(UNIX_EPOCH + Duration::from_secs(s)),
        }
    }

    /// The request for the front range, given the container's current `ranges` (sorted, leaves
    /// only; ignored for a partition-key scope). A front range that now spans several partition
    /// key ranges (a split) is first replaced by its parts, each keeping its position.
    pub(crate) fn next_request(
        &mut self,
        ranges: &[TargetRange],
    ) -> Result<NextRequest, CosmosError> {
        let front = self.data.ranges[0].clone();
        if let Some(pk) = &self.partition_key {
            return Ok(NextRequest::PartitionKey {
                partition_key: pk.clone(),
                start: self.page_start(front.etag.as_ref()),
            });
        }
        let wanted = FeedRange::from_bounds(&front.min, &front.max);
        let overlapping: Vec<(&TargetRange, FeedRange)> = ranges
            .iter()
            .filter_map(|t| {
                FeedRange::from_bounds(&t.min, &t.max)
                    .intersect(&wanted)
                    .map(|part| (t, part))
            })
            .collect();
        let covered = overlapping.first().map(|(_, p)| p.min()) == Some(wanted.min())
            && overlapping.last().map(|(_, p)| p.max()) == Some(wanted.max())
            && overlapping.windows(2).all(|w| w[0].1.max() == w[1].1.min());
        if !covered {
            return Err(CosmosError::new(
                crate::error::ErrorKind::Service,
                format!(
                    "the container's partition key ranges do not cover the feed range [{:?}, {:?})",
                    front.min, front.max
                ),
            ));
        }
        if overlapping.len() > 1 {
            if self.data.ranges.len() - 1 + overlapping.len() > MAX_FEED_RANGES {
                return Err(CosmosError::invalid_input(format!(
                    "the change feed would track more than {MAX_FEED_RANGES} ranges"
                )));
            }
            let parts = overlapping.iter().map(|(_, p)| RangePosition {
                min: p.min().to_owned(),
                max: p.max().to_owned(),
                etag: front.etag.clone(),
            });
            self.data.ranges.splice(0..1, parts);
        }
        let (target, part) = &overlapping[0];
        let whole = part.min() == target.min && part.max() == target.max;
        Ok(NextRequest::Range {
            range_id: target.id.clone(),
            part: (!whole).then(|| part.clone()),
            start: self.page_start(self.data.ranges[0].etag.as_ref()),
        })
    }

    /// Records the front range's answer: the position it returned (`etag`) and whether it held
    /// changes. The range moves to the back (ranges are read round-robin).
    /// A point-in-time start's first answer is only the position the time names (the service
    /// sends no changes with it), so it does not count as quiet.
    pub(crate) fn record_page(&mut self, etag: Option<&str>, had_changes: bool) {
        let positioned = self.data.ranges[0].etag.is_none()
            && matches!(self.data.start, UnreadStart::Since(_))
            && etag.is_some_and(|e| !e.is_empty());
        if let Some(e) = etag.filter(|e| !e.is_empty()) {
            self.data.ranges[0].etag = Some(e.to_owned());
        }
        self.quiet = match (had_changes, positioned) {
            (true, _) => 0,
            (false, true) => self.quiet,
            (false, false) => self.quiet + 1,
        };
        self.data.ranges.rotate_left(1);
    }
}

#[cfg(test)]
#[path = "feed_state_tests.rs"]
mod tests;
