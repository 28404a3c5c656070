//! What the driver knows of each container's metadata, read once and kept: today the partition key
//! paths (PATCH's pre-flight needs them); the partition key range map joins it when operations fan
//! out over ranges. A container deleted through the driver is forgotten (a new one of the same
//! name may be keyed differently).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Container metadata per container link, shared by every operation of one driver.
#[derive(Debug, Default)]
pub struct ContainerMetadata {
    partition_key_paths: RwLock<HashMap<Arc<str>, Arc<[String]>>>,
}

impl ContainerMetadata {
    /// The known partition key paths of the container at `link`.
    pub fn partition_key_paths(&self, link: &str) -> Option<Arc<[String]>> {
        self.partition_key_paths.read().ok()?.get(link).cloned()
    }

    /// Remembers the partition key paths of the container at `link`.
    pub fn remember_partition_key_paths(&self, link: Arc<str>, paths: Arc<[String]>) {
        if let Ok(mut map) = self.partition_key_paths.write() {
            map.insert(link, paths);
        }
    }

    /// Forgets everything known of the container at `link` (it was deleted).
    pub fn forget(&self, link: &str) {
        if let Ok(mut map) = self.partition_key_paths.write() {
            map.remove(link);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_forgets_partition_key_paths() {
        let cache = ContainerMetadata::default();
        assert!(cache.partition_key_paths("dbs/d/colls/c").is_none());
        cache.remember_partition_key_paths(
            Arc::from("dbs/d/colls/c"),
            Arc::from(vec!["/pk".to_owned()]),
        );
        assert_eq!(
            cache.partition_key_paths("dbs/d/colls/c").as_deref(),
            Some(&["/pk".to_owned()][..])
        );
        assert!(cache.partition_key_paths("dbs/d/colls/other").is_none());
        cache.forget("dbs/d/colls/c");
        assert!(cache.partition_key_paths("dbs/d/colls/c").is_none());
    }
}
