//! The emulator's data: regions, databases, containers, partitions and their replicas.

mod catalog;
mod container;
pub mod document;
mod history;
mod lag;
mod partition;
mod replica_log;
mod topology;

pub use catalog::{Catalog, Database};
pub use container::Container;
pub use history::{HistoryEntry, RETENTION_CHANGES, RETENTION_SECONDS};
pub use lag::ReplicationLag;
pub use partition::{Change, DocKey, Partition, StoredDoc};
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

    /// Makes `region` the write (hub) region and brings its replicas up to date.
    pub fn failover(&self, region: &str) -> Result<usize, String> {
        let index = self.topology.failover(region)?;
        for db in self.catalog.databases() {
            for container in db.containers() {
                for partition in container.partitions() {
                    if let Ok(mut p) = partition.write() {
                        p.catch_up(index);
                    }
                }
            }
        }
        Ok(index)
    }
}
