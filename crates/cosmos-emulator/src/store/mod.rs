//! The emulator's data: regions, databases, containers, partitions and their replicas.

mod catalog;
pub(crate) mod computed_properties;
pub(crate) mod conflict_policy;
pub(crate) mod conflicts;
mod container;
mod container_definition;
pub(crate) mod creation_order;
pub(crate) mod document;
pub(crate) mod embeddings;
mod history;
mod indexing_policy;
pub(crate) mod item_limits;
pub(crate) mod item_log;
mod item_rid;
mod lag;
mod local_writes;
pub(crate) mod offer_splits;
mod offer_table;
mod partition;
mod partition_sizing;
mod replica_log;
mod restore;
pub(crate) mod ru_meter;
pub(crate) mod search_policy;
mod split;
mod stored_doc;
pub(crate) mod throughput_buckets;
mod topology;
pub(crate) mod ttl;
pub(crate) mod unique_keys;
mod unique_writes;
pub(crate) mod users;

pub(crate) use catalog::{Catalog, Database};
pub(crate) use container::{Container, PARTITION_KEY_MISMATCH};
pub(crate) use container_definition::Definition;
pub(crate) use history::{HistoryEntry, RETENTION_CHANGES, RETENTION_SECONDS};
pub use lag::ReplicationLag;
pub(crate) use offer_table::{Offer, Offers, Throughput};
pub(crate) use partition::Partition;
pub(crate) use partition_sizing::PartitionSizing;
pub(crate) use restore::{ContainerImage, DatabaseImage, KeptDoc};
pub(crate) use ru_meter::{Lane, Priority, RuMeter};
pub(crate) use split::live;
pub(crate) use stored_doc::{DocKey, StoredDoc};
pub(crate) use topology::{RegionInfo, Topology};

use std::sync::RwLock;
use std::time::Duration;

/// Everything the request handlers share.
pub(crate) struct Store {
    pub topology: Topology,
    pub catalog: Catalog,
    /// Per region (same order as the topology), the lag of writes reaching it.
    pub lags: RwLock<Vec<ReplicationLag>>,
    /// Throughput offers of databases and containers.
    pub offers: Offers,
    /// Set when each partition key range is held to its share of the provisioned RU/s.
    pub ru_meter: Option<RuMeter>,
    /// How often a container's throughput bucket settings may change.
    pub bucket_change_interval: std::time::Duration,
    /// Users of each database and their permissions.
    pub users: users::Users,
    /// How many physical partitions a new container gets.
    pub partition_sizing: PartitionSizing,
}

impl Store {
    /// Samples each region's lag for one write.
    pub(crate) fn sample_lags(&self) -> Vec<Duration> {
        let regions = self.topology.regions().len();
        let Ok(lags) = self.lags.read() else {
            return vec![Duration::ZERO; regions];
        };
        if lags.iter().all(ReplicationLag::is_zero) {
            return vec![Duration::ZERO; lags.len()];
        }
        let mut rng = rand::rng();
        lags.iter().map(|l| l.sample(&mut rng)).collect()
    }

    /// Sets region `name`'s replication lag for writes from now on; returns its index.
    pub(crate) fn set_lag(&self, name: &str, lag: ReplicationLag) -> Result<usize, String> {
        let index = self
            .topology
            .index_of(name)
            .ok_or_else(|| format!("unknown region {name:?}"))?;
        let mut lags = self
            .lags
            .write()
            .map_err(|_| "the lag lock was poisoned".to_owned())?;
        if let Some(slot) = lags.get_mut(index) {
            *slot = lag;
        }
        Ok(index)
    }

    /// Makes `region` the write (hub) region and brings its replicas up to date, atomically with
    /// respect to writes: every partition is locked before the switch and released after it, and
    /// writers check the write region while holding their partition's lock, so no write accepted by
    /// the old hub commits after the switch.
    pub(crate) fn failover(&self, region: &str) -> Result<usize, String> {
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

    /// Deletes the items whose time to live has passed at `unix_now` (see [`ttl`]), in the write
    /// region, in every container that has expiry on. Returns how many went.
    pub(crate) fn expire_items(&self, unix_now: u64) -> usize {
        let mut expired = 0;
        for db in self.catalog.databases() {
            for container in db.containers() {
                if container.default_ttl().is_none() {
                    continue;
                }
                let is_expired = |doc: &StoredDoc| container.expired(&doc.body, unix_now);
                for partition in container.partitions() {
                    // Read under the read lock, checked after it is released (each item's text
                    // is read), and each re-checked under the write lock (a write in between
                    // renews an item).
                    let items = match partition.read() {
                        Ok(p) => p.scan(p.committed_lsn(), None, None, usize::MAX),
                        Err(_) => continue,
                    };
                    let candidates: Vec<DocKey> = items
                        .into_iter()
                        .filter(|(_, doc)| is_expired(doc))
                        .map(|(key, _)| key)
                        .collect();
                    if candidates.is_empty() {
                        continue;
                    }
                    let Ok(mut p) = partition.write() else {
                        continue;
                    };
                    let lags = self.sample_lags();
                    for key in candidates {
                        if p.latest(&key).is_some_and(|doc| is_expired(doc)) {
                            p.commit(
                                key,
                                None,
                                self.topology.hub(),
                                tokio::time::Instant::now(),
                                &lags,
                            );
                            expired += 1;
                        }
                    }
                }
            }
        }
        expired
    }

    /// Cleans up every partition that is not busy (see [`Partition::clean_up`]).
    pub(crate) fn clean_up(&self, now: tokio::time::Instant) {
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use serde_json::json;
    use tokio::time::Instant;

    use super::*;

    fn two_region_store() -> Store {
        let regions = ["East US", "West US"].map(|name| RegionInfo {
            name: name.into(),
            endpoint: String::new(),
        });
        let store = Store {
            topology: Topology::new(regions.to_vec(), vec![0], false),
            catalog: Catalog::default(),
            lags: RwLock::new(vec![ReplicationLag::default(); 2]),
            offers: Offers::default(),
            ru_meter: None,
            bucket_change_interval: throughput_buckets::DEFAULT_CHANGE_INTERVAL,
            partition_sizing: PartitionSizing::Fixed(1),
            users: Default::default(),
        };
        let db = store
            .catalog
            .create_database(Default::default(), "db".into())
            .unwrap();
        let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        let serde_json::Value::Object(map) = body else {
            unreachable!()
        };
        db.add_container("c", |ordinal| {
            Container::create(map, "c".into(), db.rid_bytes, ordinal, 1, 2)
        })
        .unwrap();
        store
    }

    #[test]
    fn failover_waits_for_a_write_that_holds_its_partition() {
        let store = Arc::new(two_region_store());
        let container = store.catalog.container("db", "c").unwrap();
        let writer = container.partition(0).unwrap().write().unwrap();
        assert!(
            store.topology.can_write(0),
            "the writer checked under the lock"
        );
        let started = Arc::new(AtomicBool::new(false));
        let failover = {
            let (store, started) = (store.clone(), started.clone());
            std::thread::spawn(move || {
                started.store(true, Ordering::SeqCst);
                store.failover("West US")
            })
        };
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        // However long the write takes, the region it checked stays the write region until it
        // releases its partition.
        assert!(store.topology.can_write(0) && !store.topology.can_write(1));
        drop(writer);
        assert_eq!(failover.join().unwrap(), Ok(1));
        assert!(store.topology.can_write(1) && !store.topology.can_write(0));
    }

    #[tokio::test(start_paused = true)]
    async fn the_sweep_deletes_what_has_expired_and_nothing_else() {
        let store = two_region_store();
        let db = store.catalog.database("db").unwrap();
        let body = json!({"id": "t", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 60});
        let serde_json::Value::Object(map) = body else {
            unreachable!()
        };
        db.add_container("t", |ordinal| {
            Container::create(map, "t".into(), db.rid_bytes, ordinal, 1, 2)
        })
        .unwrap();
        let put = |container: &str, id: &str, doc: serde_json::Value| {
            let c = store.catalog.container("db", container).unwrap();
            let mut p = c.partition(0).unwrap().write().unwrap();
            let key = DocKey {
                epk: 1u128.into(),
                id: id.into(),
            };
            let doc = Arc::new(StoredDoc {
                body: doc.to_string().into(),
                etag: "e".into(),
                rid: [0; 16],
                unique: Box::default(),
                vectors: Default::default(),
                indexed: true,
            });
            p.commit(key, Some(doc), 0, Instant::now(), &[Duration::ZERO; 2]);
        };
        put("t", "default", json!({"id": "default", "_ts": 1000}));
        put("t", "short", json!({"id": "short", "_ts": 1000, "ttl": 10}));
        put("t", "never", json!({"id": "never", "_ts": 1000, "ttl": -1}));
        put("c", "off", json!({"id": "off", "_ts": 1000, "ttl": 1}));
        let present = |container: &str, id: &str| {
            let c = store.catalog.container("db", container).unwrap();
            let p = c.partition(0).unwrap().read().unwrap();
            p.latest(&DocKey {
                epk: 1u128.into(),
                id: id.into(),
            })
            .is_some()
        };
        assert_eq!(store.expire_items(1009), 0);
        assert_eq!(store.expire_items(1010), 1);
        assert!(!present("t", "short") && present("t", "default"));
        assert_eq!(store.expire_items(1059), 0);
        assert_eq!(store.expire_items(1060), 1);
        assert!(!present("t", "default"));
        assert_eq!(store.expire_items(1_000_000), 0);
        assert!(present("t", "never"), "ttl -1 never expires");
        assert!(present("c", "off"), "no defaultTtl: expiry is off");
    }

    #[tokio::test(start_paused = true)]
    async fn the_cleanup_pass_reaches_every_partition() {
        let store = two_region_store();
        let container = store.catalog.container("db", "c").unwrap();
        let key = DocKey {
            epk: 1u128.into(),
            id: "a".into(),
        };
        let t0 = Instant::now();
        let lags = [Duration::ZERO, Duration::from_millis(100)];
        {
            let mut p = container.partition(0).unwrap().write().unwrap();
            p.commit(key.clone(), None, 0, t0, &lags);
            assert!(p.has_pending());
        }
        store.clean_up(t0 + Duration::from_millis(200));
        let p = container.partition(0).unwrap().read().unwrap();
        assert!(!p.has_pending());
        assert_eq!(p.key_count(), 0);
    }
}
