//! The lease container: every lease document write goes through here, each conditional on the
//! etag read before it (If-Match), so a lease taken by another instance fails the write (412).
//! The first leases are created by one instance only: the one that creates the lock document
//! (create-if-absent); the others wait for the `.info` marker it writes when done.

use std::time::{Duration, SystemTime};

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lease::{info_id, lease_prefix, lock_id, Lease};
use crate::change_feed::FeedRange;
use crate::client::{ContainerClient, ItemOptions};
use crate::error::CosmosError;

/// The marker and lock documents.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    id: String,
    timestamp: String,
    #[serde(rename = "_etag", default, skip_serializing)]
    etag: Option<String>,
}

/// A write that found the lease changed (412) or gone (404): another instance owns it now.
pub(crate) fn is_lost(e: &CosmosError) -> bool {
    e.is_precondition_failed() || e.is_not_found()
}

/// The lease container of one processor.
#[derive(Clone, Debug)]
pub(crate) struct LeaseStore {
    leases: ContainerClient,
    name: String,
}

impl LeaseStore {
    pub(crate) fn new(leases: ContainerClient, name: &str) -> Self {
        LeaseStore {
            leases,
            name: name.to_owned(),
        }
    }

    /// Every lease of the processor, and the documents under its prefix that are no lease (not
    /// of the lease's shape, or a `FeedRange` that is no range: id, why), which are left alone.
    pub(crate) async fn list(&self) -> Result<(Vec<Lease>, Vec<(String, String)>), CosmosError> {
        let prefix = lease_prefix(&self.name);
        let docs: Vec<Value> = self.leases.read_all_items::<Value>().try_collect().await?;
        let mut leases = Vec::new();
        let mut malformed = Vec::new();
        for doc in docs {
            let Some(id) = doc["id"].as_str().filter(|id| id.starts_with(&prefix)) else {
                continue;
            };
            let id = id.to_owned();
            let lease = serde_json::from_value::<Lease>(doc)
                .map_err(|e| e.to_string())
                .and_then(|l| match l.range() {
                    Ok(_) => Ok(l),
                    Err(e) => Err(format!("its FeedRange: {}", e.message())),
                });
            match lease {
                Ok(lease) => leases.push(lease),
                Err(e) => malformed.push((id, format!("a lease document is malformed: {e}"))),
            }
        }
        Ok((leases, malformed))
    }

    /// Creates `lease`; `None` when a lease of that id exists already.
    pub(crate) async fn create(&self, lease: &Lease) -> Result<Option<Lease>, CosmosError> {
        match self
            .leases
            .create_item(lease.id.as_str(), lease, None)
            .await
        {
            Ok(r) => Ok(Some(with_etag(lease.clone(), r.etag()))),
            Err(e) if e.is_conflict() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes `lease` over the stored one if it still has `lease.etag`; answers it with its new
    /// etag. A 412 or 404 ([`is_lost`]) says another instance has it.
    pub(crate) async fn replace(&self, lease: &Lease) -> Result<Lease, CosmosError> {
        let options = lease
            .etag
            .as_ref()
            .map(|e| ItemOptions::new().with_if_match(e.clone()));
        let r = self
            .leases
            .replace_item(lease.id.as_str(), &lease.id, lease, options)
            .await?;
        Ok(with_etag(lease.clone(), r.etag()))
    }

    /// Deletes `lease` if it still has `lease.etag` (a 404 counts as done).
    pub(crate) async fn delete(&self, lease: &Lease) -> Result<(), CosmosError> {
        let options = lease
            .etag
            .as_ref()
            .map(|e| ItemOptions::new().with_if_match(e.clone()));
        match self
            .leases
            .delete_item(lease.id.as_str(), &lease.id, options)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Makes sure a lease exists for every range of `ranges` (id, range), created by one instance
    /// only. An instance that finds the lock taken waits for the marker; a lock older than
    /// `stale_after` (its creator died) is removed and the work done again.
    pub(crate) async fn initialize(
        &self,
        ranges: &[(String, FeedRange)],
        stale_after: Duration,
        wait: Duration,
    ) -> Result<Vec<Lease>, CosmosError> {
        let info = info_id(&self.name);
        let lock = lock_id(&self.name);
        // Bounded: each round waits `wait`; a dead creator's lock is stale after `stale_after`.
        let rounds = (stale_after.as_millis() / wait.as_millis().max(1)) as usize * 3 + 10;
        for _ in 0..rounds {
            if self.read_marker(&info).await?.is_some() {
                return Ok(Vec::new());
            }
            let now = SystemTime::now();
            let marker = Marker {
                id: lock.clone(),
                timestamp: super::lease::format_timestamp(now),
                etag: None,
            };
            match self.leases.create_item(lock.as_str(), &marker, None).await {
                Ok(_) => {
                    let mut created = Vec::new();
                    for (token, range) in ranges {
                        let lease = Lease::new(&self.name, token, range, None, None, now);
                        if let Some(l) = self.create(&lease).await? {
                            created.push(l);
                        }
                    }
                    let done = Marker {
                        id: info.clone(),
                        timestamp: super::lease::format_timestamp(SystemTime::now()),
                        etag: None,
                    };
                    match self.leases.create_item(info.as_str(), &done, None).await {
                        Ok(_) => {}
                        Err(e) if e.is_conflict() => {}
                        Err(e) => return Err(e),
                    }
                    let _ = self.leases.delete_item(lock.as_str(), &lock, None).await;
                    return Ok(created);
                }
                Err(e) if e.is_conflict() => {
                    if let Some(held) = self.read_marker(&lock).await? {
                        let at = super::lease::parse_timestamp(&held.timestamp)
                            .unwrap_or(std::time::UNIX_EPOCH);
                        let old = now.duration_since(at).is_ok_and(|age| age > stale_after);
                        if old {
                            let options = held.etag.map(|e| ItemOptions::new().with_if_match(e));
                            let _ = self.leases.delete_item(lock.as_str(), &lock, options).await;
                            continue;
                        }
                    }
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(CosmosError::invalid_input(format!(
            "the lease store of processor {:?} was not initialized in time (lock {lock:?} held)",
            self.name
        )))
    }

    async fn read_marker(&self, id: &str) -> Result<Option<Marker>, CosmosError> {
        match self.leases.read_item::<Marker>(id, id, None).await {
            Ok(r) => {
                let etag = r.etag().map(str::to_owned);
                let mut m = r.into_item()?;
                m.etag = m.etag.or(etag);
                Ok(Some(m))
            }
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn with_etag(mut lease: Lease, etag: Option<&str>) -> Lease {
    lease.etag = etag.map(str::to_owned);
    lease
}
