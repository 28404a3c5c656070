//! The partition key paths of a container: PATCH's pre-flight check refuses operations on them,
//! and read many finds each document's key under them (and hashes keys into ranges with the
//! container's hash version).
//!
//! The paths and version come from the container's own metadata (`partitionKey.paths`,
//! `partitionKey.version`), read once per
//! container and driver through the pipeline and then kept in the routing layer's
//! [`crate::routing::ContainerMetadata`] cache.

use std::sync::Arc;

use super::pipeline_entry::PipelineEntry;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::{ContainerReference, HashVersion};

/// The partition key paths of `container`: from the cache, or from one read of the container's
/// metadata (with the caller's excluded regions and remaining time budget).
pub(crate) async fn partition_key_paths(
    core: &DriverCore,
    container: &ContainerReference,
    caller: &OperationOptions,
) -> Result<Arc<[String]>, CosmosError> {
    partition_key_definition(core, container, caller)
        .await
        .map(|(paths, _)| paths)
}

/// The partition key paths and hash version of `container`, as [`partition_key_paths`] reads
/// them.
pub(crate) async fn partition_key_definition(
    core: &DriverCore,
    container: &ContainerReference,
    caller: &OperationOptions,
) -> Result<(Arc<[String]>, HashVersion), CosmosError> {
    if let Some(known) = core.containers.partition_key_definition(container.link()) {
        return Ok(known);
    }
    let options = OperationOptions {
        excluded_regions: caller.excluded_regions.clone(),
        end_to_end_timeout: caller.end_to_end_timeout,
        ..OperationOptions::default()
    };
    let read = CosmosOperation::read_container(container.clone());
    let response = core.send(&read, &options).await?;
    let (paths, version) = parse_definition(response.body()).map_err(|why| {
        CosmosError::new(
            ErrorKind::Deserialization,
            format!(
                "the metadata of container {:?} has no readable partition key definition: {why}",
                container.link()
            ),
        )
        .with_diagnostics(response.diagnostics().clone())
    })?;
    let paths: Arc<[String]> = paths.into();
    core.containers.remember_partition_key_definition(
        container.link_arc().clone(),
        paths.clone(),
        version,
    );
    Ok((paths, version))
}

/// `partitionKey.paths` and the hashing `partitionKey.version` names of a container document; a
/// container without a partition key definition has no paths (and is hashed with V2).
fn parse_definition(body: &[u8]) -> Result<(Vec<String>, HashVersion), String> {
    #[derive(serde::Deserialize)]
    struct Container {
        #[serde(rename = "partitionKey")]
        partition_key: Option<Definition>,
    }
    #[derive(serde::Deserialize)]
    struct Definition {
        #[serde(default)]
        paths: Vec<String>,
        #[serde(default)]
        version: Option<u64>,
    }
    let container: Container = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let Some(definition) = container.partition_key else {
        return Ok((Vec::new(), HashVersion::V2));
    };
    let version = HashVersion::from_definition(definition.version).ok_or_else(|| {
        format!(
            "partitionKey.version {:?} is neither 1 nor 2",
            definition.version
        )
    })?;
    Ok((definition.paths, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_paths_of_a_container_document() {
        let body = br#"{"id":"c","partitionKey":{"paths":["/tenant","/user"],"kind":"MultiHash","version":2},"_rid":"x"}"#;
        assert_eq!(
            parse_definition(body).unwrap(),
            (
                vec!["/tenant".to_owned(), "/user".to_owned()],
                HashVersion::V2
            )
        );
        assert_eq!(
            parse_definition(br#"{"id":"legacy"}"#).unwrap(),
            (Vec::<String>::new(), HashVersion::V2)
        );
        let v1 = br#"{"partitionKey":{"paths":["/pk"],"kind":"Hash","version":1}}"#;
        assert_eq!(
            parse_definition(v1).unwrap(),
            (vec!["/pk".to_owned()], HashVersion::V1)
        );
        // Containers from before hash V2 carry no version.
        let old = br#"{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}"#;
        assert_eq!(parse_definition(old).unwrap().1, HashVersion::V1);
        assert!(parse_definition(br#"{"partitionKey":{"paths":["/pk"],"version":7}}"#).is_err());
        assert!(parse_definition(br#"{"partitionKey":{"paths":"/pk"}}"#).is_err());
        assert!(parse_definition(b"not json").is_err());
    }
}
