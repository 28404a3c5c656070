//! How far behind each lease is, without owning any: read one change from the lease's
//! continuation and compare its `_lsn` with the latest LSN the answer's session token carries
//! (`lag = session LSN - first change's LSN + 1`; 0 when nothing is new), as the .NET
//! estimator does. Each read is an ordinary change feed page request (retried, hedged).

use serde::Serialize;
use serde_json::Value;

use super::lease::Lease;
use super::options::ProcessorStart;
use super::store::LeaseStore;
use super::worker::first_start;
use crate::change_feed::{ChangeFeedOptions, ChangeFeedStart, FeedScope};
use crate::client::ContainerClient;
use crate::error::CosmosError;
use crate::protocol::SessionToken;

/// One lease's lag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeaseLag {
    /// The lease token.
    pub lease: String,
    /// Its owner, if any.
    pub owner: Option<String>,
    /// Changes not yet handled (LSNs behind the range's latest).
    pub lag: u64,
}

/// Reports each lease's lag of one processor.
#[derive(Clone, Debug)]
pub struct ChangeFeedEstimator {
    monitored: ContainerClient,
    store: LeaseStore,
    start: ProcessorStart,
}

impl ChangeFeedEstimator {
    /// The estimator of processor `name` over `monitored`, its leases in `leases`. A lease with
    /// no checkpoint yet counts from the beginning.
    pub fn new(monitored: ContainerClient, leases: ContainerClient, name: &str) -> Self {
        ChangeFeedEstimator {
            monitored,
            store: LeaseStore::new(leases, name),
            start: ProcessorStart::Beginning,
        }
    }

    /// Counts a lease with no checkpoint from `start` instead.
    pub fn with_start(mut self, start: ProcessorStart) -> Self {
        self.start = start;
        self
    }

    /// The lag of every lease, by lease token.
    pub async fn estimate(&self) -> Result<Vec<LeaseLag>, CosmosError> {
        // Documents under the prefix that are no lease are not counted.
        let (mut leases, _malformed) = self.store.list().await?;
        leases.sort_by(|a, b| a.lease_token.cmp(&b.lease_token));
        let mut out = Vec::with_capacity(leases.len());
        for lease in &leases {
            out.push(LeaseLag {
                lease: lease.lease_token.clone(),
                owner: lease.owner.clone(),
                lag: self.lag_of(lease).await?,
            });
        }
        Ok(out)
    }

    async fn lag_of(&self, lease: &Lease) -> Result<u64, CosmosError> {
        let start = match &lease.continuation {
            Some(c) => ChangeFeedStart::Continuation(c.clone()),
            None => first_start(self.start),
        };
        let mut feed = self.monitored.change_feed_with::<Value>(
            start,
            FeedScope::FeedRange(lease.range()?),
            ChangeFeedOptions::new().with_max_item_count(1),
        );
        let page = feed.next_page().await?;
        let Some(first) = page.items().first() else {
            return Ok(0);
        };
        let first_lsn = first["_lsn"].as_u64().ok_or_else(|| {
            CosmosError::invalid_input("a change feed item carries no _lsn to measure lag with")
        })?;
        let latest = page
            .session_token()
            .and_then(|t| SessionToken::parse(t).ok())
            .and_then(|t| t.partitions().map(|(_, p)| p.global_lsn()).max())
            .ok_or_else(|| {
                CosmosError::invalid_input("the change feed answer carries no session token")
            })?;
        Ok(session_lag(latest, first_lsn))
    }
}

/// LSNs from `first` to `latest`, both counted; 0 when `latest` is behind.
pub(crate) fn session_lag(latest: i64, first: u64) -> u64 {
    u64::try_from(latest)
        .unwrap_or(0)
        .saturating_sub(first)
        .saturating_add(u64::from(latest >= 0 && first <= latest as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_counts_both_ends() {
        for (latest, first, want) in [(10, 10, 1), (10, 4, 7), (3, 4, 0), (-1, 0, 0)] {
            assert_eq!(session_lag(latest, first), want, "{latest} {first}");
        }
    }
}
