//! The partition key paths of a container: PATCH's pre-flight check refuses operations on them,
//! and read many finds each document's key under them.
//!
//! The paths come from the container's own metadata (`partitionKey.paths`), read once per
//! container and driver through the pipeline and then kept in the routing layer's
//! [`crate::routing::ContainerMetadata`] cache.

use std::sync::Arc;

use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use super::pipeline_entry::PipelineEntry;
use crate::pipeline::DriverCore;
use crate::protocol::ContainerReference;

/// The partition key paths of `container`: from the cache, or from one read of the container's
/// metadata (with the caller's excluded regions and remaining time budget).
pub(crate) async fn partition_key_paths(
    core: &DriverCore,
    container: &ContainerReference,
    caller: &OperationOptions,
) -> Result<Arc<[String]>, CosmosError> {
    if let Some(paths) = core.containers.partition_key_paths(container.link()) {
        return Ok(paths);
    }
    let options = OperationOptions {
        excluded_regions: caller.excluded_regions.clone(),
        end_to_end_timeout: caller.end_to_end_timeout,
        ..OperationOptions::default()
    };
    let read = CosmosOperation::read_container(container.clone());
    let response = core.send(&read, &options).await?;
    let paths: Arc<[String]> = parse_paths(response.body())
        .map_err(|why| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!("the metadata of container {:?} has no readable partition key definition: {why}", container.link()),
            )
            .with_diagnostics(response.diagnostics().clone())
        })?
        .into();
    core.containers
        .remember_partition_key_paths(container.link_arc().clone(), paths.clone());
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
}
