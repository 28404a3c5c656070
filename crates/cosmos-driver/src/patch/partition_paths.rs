//! The partition key paths of the containers PATCH has worked on, for the pre-flight check that
//! refuses operations on them.
//!
//! The paths come from the container's own metadata (`partitionKey.paths`), read once per
//! container and driver and then kept; a container deleted through the driver is forgotten.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::{self, DriverCore};
use crate::protocol::ContainerReference;

/// Partition key paths per container link.
#[derive(Debug, Default)]
pub(crate) struct PartitionKeyPaths {
    by_container: RwLock<HashMap<Arc<str>, Arc<[String]>>>,
}

impl PartitionKeyPaths {
    /// The known paths of `container`.
    pub(crate) fn get(&self, container: &str) -> Option<Arc<[String]>> {
        self.by_container.read().ok()?.get(container).cloned()
    }

    /// Remembers the paths of `container`.
    pub(crate) fn insert(&self, container: Arc<str>, paths: Arc<[String]>) {
        if let Ok(mut map) = self.by_container.write() {
            map.insert(container, paths);
        }
    }

    /// Forgets `container` (it was deleted; a new one of the same name may be keyed differently).
    pub(crate) fn forget(&self, container: &str) {
        if let Ok(mut map) = self.by_container.write() {
            map.remove(container);
        }
    }
}

/// The partition key paths of `container`: from the cache, or from one read of the container's
/// metadata (with the caller's excluded regions and remaining time budget).
pub(crate) async fn partition_key_paths(
    core: &DriverCore,
    container: &ContainerReference,
    caller: &OperationOptions,
) -> Result<Arc<[String]>, CosmosError> {
    if let Some(paths) = core.patch_partition_paths.get(container.link()) {
        return Ok(paths);
    }
    let options = OperationOptions {
        excluded_regions: caller.excluded_regions.clone(),
        end_to_end_timeout: caller.end_to_end_timeout,
        ..OperationOptions::default()
    };
    let read = CosmosOperation::read_container(container.clone());
    let response = pipeline::execute(core, &read, &options).await?;
    let paths: Arc<[String]> = parse_paths(response.body())
        .map_err(|why| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the metadata of container {:?} has no readable partition key definition: {why}", container.link()),
            )
            .with_diagnostics(response.diagnostics().clone())
        })?
        .into();
    core.patch_partition_paths
        .insert(container.link_arc().clone(), paths.clone());
    Ok(paths)
}

/// `partitionKey.paths` of a container document; a container without a partition key definition
/// has none.
fn parse_paths(body: &[u8]) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Container {
        #[serde(rename = "partitionKey")]
        partition_key: Option<Definition>,
    }
    #[derive(serde::Deserialize)]
    struct Definition {
        #[serde(default)]
        paths: Vec<String>,
    }
    let container: Container = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    Ok(container.partition_key.map(|d| d.paths).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_paths_of_a_container_document() {
        let body = br#"{"id":"c","partitionKey":{"paths":["/tenant","/user"],"kind":"MultiHash","version":2},"_rid":"x"}"#;
        assert_eq!(
            parse_paths(body).unwrap(),
            vec!["/tenant".to_owned(), "/user".to_owned()]
        );
        assert_eq!(
            parse_paths(br#"{"id":"legacy"}"#).unwrap(),
            Vec::<String>::new()
        );
        assert!(parse_paths(br#"{"partitionKey":{"paths":"/pk"}}"#).is_err());
        assert!(parse_paths(b"not json").is_err());
    }

    #[test]
    fn cache_remembers_and_forgets() {
        let cache = PartitionKeyPaths::default();
        assert!(cache.get("dbs/d/colls/c").is_none());
        cache.insert(
            Arc::from("dbs/d/colls/c"),
            Arc::from(vec!["/pk".to_owned()]),
        );
        assert_eq!(
            cache.get("dbs/d/colls/c").as_deref(),
            Some(&["/pk".to_owned()][..])
        );
        cache.forget("dbs/d/colls/c");
        assert!(cache.get("dbs/d/colls/c").is_none());
    }
}
