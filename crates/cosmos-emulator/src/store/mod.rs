//! The emulator's data: regions, databases, containers, partitions and their replicas.

mod catalog;
mod container;
pub mod document;
pub mod item_limits;
mod lag;
mod partition;
mod replica_log;
mod topology;

pub use catalog::{Catalog, Database};
pub use container::Container;
pub use lag::ReplicationLag;
pub use partition::{DocKey, Partition, StoredDoc};
pub use replica_log::ReplicaLog;
pub use topology::{RegionInfo, Topology};

use std::time::Duration;

/// Everything the request handlers share.
pub struct Store {
    pub topology: Topology,
    pub catalog: Catalog,
    /// Per region (same order as the topology), the lag of writes reaching it.
    pub lags: Vec<ReplicationLag>,
    /// Physical partitions per new container.
    pub partitions_per_container: usize,
}

impl Store {
    /// Samples each region's lag for one write.
    pub fn sample_lags(&self) -> Vec<Duration> {
        if self.lags.iter().all(ReplicationLag::is_zero) {
            return vec![Duration::ZERO; self.lags.len()];
        }
        let mut rng = rand::rng();
        self.lags.iter().map(|l| l.sample(&mut rng)).collect()
    }

    /// Makes `region` the write (hub) region and brings its replicas up to date, atomically with
    /// respect to writes: every partition is locked before the switch and released after it, and
    /// writers check the write region while holding their partition's lock, so no write accepted by
    /// the old hub commits after the switch.
    pub fn failover(&self, region: &str) -> Result<usize, String> {
        let containers: Vec<_> = self
            .catalog
            .databases()
            .iter()
            .flat_map(|db| db.containers())
            .collect();
        let mut locked = Vec::new();
        for container in &containers {
            for partition in container.partitions() {
                locked.push(
                    partition
                        .write()
                        .map_err(|_| "a partition lock was poisoned".to_owned())?,
                );
            }
        }
        let index = self.topology.failover(region)?;
        for partition in &mut locked {
            partition.catch_up(index);
        }
        Ok(index)
    }

    /// Cleans up every partition that is not busy (see [`Partition::clean_up`]).
    pub fn clean_up(&self, now: tokio::time::Instant) {
        for db in self.catalog.databases() {
            for container in db.containers() {
                for partition in container.partitions() {
                    if let Ok(mut p) = partition.try_write() {
                        if p.has_pending() {
                            p.clean_up(now);
                        }
                    }
                }
            }
        }
    }
}
