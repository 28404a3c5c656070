//! Preparing an account for a benchmark: one driver per run, the database, the container, the
//! seeded items and the shared counter.

use std::sync::Arc;

use cosmos_driver::hedging::{
    AvailabilityStrategy, HedgeBudgetConfig, HedgeThreshold, HedgingStrategy,
};
use cosmos_driver::protocol::ProtocolError;
use cosmos_driver::resources::{
    DistanceFunction, VectorDataType, VectorEmbedding, VectorEmbeddingPolicy, VectorIndex,
    VectorIndexType,
};
use cosmos_driver::{
    ContainerProperties, ContainerReference, CosmosDriver, CosmosError, CosmosOperation,
    Credential, DatabaseReference, DriverOptions, IndexingPolicy, ItemReference, OperationOptions,
    PartitionKey, PartitionKeyDefinition,
};
use tokio::task::JoinSet;

use crate::args::hedging::HedgingChoice;
use crate::args::request_class::RequestClassArgs;
use crate::bench::items::{
    counter_body, item_body, item_id, vector_item_body, COUNTER_ID, EMBEDDING_PATH,
    PARTITION_KEY_PATH,
};

/// Where a benchmark runs. `Debug` never shows the key.
#[derive(Clone)]
pub struct BenchAccount {
    /// Account endpoint.
    pub endpoint: String,
    /// How requests are signed (an account key or Entra ID tokens).
    pub credential: Credential,
    /// Whether a plain `http://` endpoint off loopback is allowed.
    pub allow_insecure_http: bool,
    /// Speak HTTP/2 (ALPN over TLS, prior knowledge over plain HTTP) instead of HTTP/1.1.
    pub http2: bool,
    /// Preferred regions, most preferred first.
    pub regions: Vec<String>,
    /// Database id.
    pub database: String,
    /// Container id.
    pub container: String,
    /// The priority and throughput bucket of the measured operations.
    pub class: RequestClassArgs,
}

impl std::fmt::Debug for BenchAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchAccount")
            .field("endpoint", &self.endpoint)
            .field("credential", &self.credential)
            .field("regions", &self.regions)
            .field("database", &self.database)
            .field("container", &self.container)
            .finish()
    }
}

/// A driver error as one line: status, sub-status and message.
pub fn describe(e: &CosmosError) -> String {
    match (e.status(), e.sub_status()) {
        (Some(s), Some(sub)) if sub != 0 => format!("{s}/{sub}: {}", e.message()),
        (Some(s), _) => format!("{s}: {}", e.message()),
        _ => e.message().to_string(),
    }
}

impl BenchAccount {
    /// The container reference.
    pub fn container_ref(&self) -> Result<ContainerReference, String> {
        DatabaseReference::new(&self.database)
            .and_then(|db| db.container(&self.container))
            .map_err(|e| format!("bad database or container id: {}", e))
    }

    /// The same account without a request class (what setup and checks use).
    pub fn unclassed(&self) -> Self {
        Self {
            class: RequestClassArgs::default(),
            ..self.clone()
        }
    }

    /// A driver for this account with `hedging` as its availability strategy, bounded by `budget`;
    /// partitions marked unhealthy by hedge wins are probed after `probe_after` when given. Every
    /// request carries the account's request class.
    pub async fn driver(
        &self,
        hedging: HedgingChoice,
        budget: Option<HedgeBudgetConfig>,
        probe_after: Option<std::time::Duration>,
    ) -> Result<CosmosDriver, String> {
        let mut options = DriverOptions::new(self.endpoint.clone(), self.credential.clone())
            .with_preferred_regions(self.regions.clone())
            .with_allow_insecure_http(self.allow_insecure_http);
        if self.http2 {
            options = options.with_connection_pool(cosmos_driver::ConnectionPoolOptions {
                http_version: cosmos_driver::HttpVersion::Http2,
                ..cosmos_driver::ConnectionPoolOptions::default()
            });
        }
        options = match hedging {
            HedgingChoice::Off => {
                options.with_availability_strategy(AvailabilityStrategy::Disabled)
            }
            HedgingChoice::On => options.with_hedging_enabled(true),
            HedgingChoice::Threshold(t) => {
                let threshold =
                    HedgeThreshold::new(t).ok_or("a hedging threshold of zero is not allowed")?;
                options.with_availability_strategy(AvailabilityStrategy::Hedging(
                    HedgingStrategy::new(threshold),
                ))
            }
            HedgingChoice::Adaptive(a) => options.with_availability_strategy(
                AvailabilityStrategy::Hedging(HedgingStrategy::new(HedgeThreshold::from(a))),
            ),
        };
        if let Some(budget) = budget {
            options = options.with_hedge_budget(budget);
        }
        if let Some(period) = probe_after {
            options = options.with_hedge_win_unhealthy_for(period);
        }
        let defaults = self.class.apply(options.operation_defaults().clone());
        options = options.with_operation_defaults(defaults);
        CosmosDriver::new(options)
            .await
            .map_err(|e| format!("cannot connect to {}: {}", self.endpoint, describe(&e)))
    }
}

/// Every seeded item's reference and partition key, built once so operations only clone them.
#[derive(Clone)]
pub struct SeededItems(Arc<[(ItemReference, PartitionKey)]>);

impl SeededItems {
    /// References to items `0..count` of `container`.
    pub fn new(container: &ContainerReference, count: u64) -> Result<Self, String> {
        let refs: Result<Vec<_>, ProtocolError> = (0..count.max(1))
            .map(|i| {
                let id = item_id(i);
                container
                    .item(&id)
                    .map(|item| (item, PartitionKey::from(id.as_str())))
            })
            .collect();
        refs.map(|v| Self(v.into()))
            .map_err(|e| format!("bad item id: {}", e))
    }

    /// How many items there are.
    pub fn len(&self) -> u64 {
        self.0.len() as u64
    }

    /// True when there are none (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Item `index` (wrapped into range).
    pub fn get(&self, index: u64) -> &(ItemReference, PartitionKey) {
        let i = (index % self.len().max(1)) as usize;
        &self.0[i.min(self.0.len() - 1)]
    }
}

/// Creates the database when it is missing (409 is fine).
async fn ensure_database(
    driver: &CosmosDriver,
    container: &ContainerReference,
) -> Result<(), String> {
    let db = CosmosOperation::create_database(container.database().clone());
    match driver.execute(db, &OperationOptions::default()).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_conflict() => Ok(()),
        Err(e) => Err(format!(
            "cannot create database {}: {}",
            container.database().id(),
            describe(&e)
        )),
    }
}

/// Creates the database and the container when they are missing (409 is fine).
pub async fn ensure_container(
    driver: &CosmosDriver,
    container: &ContainerReference,
) -> Result<(), String> {
    let options = OperationOptions::default();
    ensure_database(driver, container).await?;
    let pk = PartitionKeyDefinition::new(PARTITION_KEY_PATH).map_err(|e| e.to_string())?;
    let coll = CosmosOperation::create_container(container.clone(), pk);
    match driver.execute(coll, &options).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_conflict() => Ok(()),
        Err(e) => Err(format!(
            "cannot create container {}: {}",
            container.id(),
            describe(&e)
        )),
    }
}

/// The container definition of the `vector` workload: partition key `/pk`, a cosine float32
/// embedding of `dimensions` numbers at [`EMBEDDING_PATH`] and a `quantizedFlat` index on it.
pub fn vector_container(id: &str, dimensions: u32) -> Result<ContainerProperties, String> {
    let pk = PartitionKeyDefinition::new(PARTITION_KEY_PATH).map_err(|e| e.to_string())?;
    Ok(ContainerProperties::new(id, &pk)
        .with_vector_embedding_policy(VectorEmbeddingPolicy {
            vector_embeddings: vec![VectorEmbedding {
                path: EMBEDDING_PATH.into(),
                data_type: VectorDataType::Float32,
                distance_function: DistanceFunction::Cosine,
                dimensions,
            }],
        })
        .with_indexing_policy(IndexingPolicy {
            vector_indexes: vec![VectorIndex {
                path: EMBEDDING_PATH.into(),
                kind: VectorIndexType::QuantizedFlat,
                other: serde_json::Map::new(),
            }],
            ..IndexingPolicy::default()
        }))
}

/// Why an existing container cannot serve the `vector` workload, if it cannot: it must hold
/// embeddings of `dimensions` numbers at [`EMBEDDING_PATH`].
pub fn vector_policy_mismatch(existing: &ContainerProperties, dimensions: u32) -> Option<String> {
    let embedding = existing
        .vector_embedding_policy
        .iter()
        .flat_map(|p| &p.vector_embeddings)
        .find(|e| e.path == EMBEDDING_PATH);
    match embedding {
        Some(e) if e.dimensions == dimensions => None,
        Some(e) => Some(format!(
            "container {} holds embeddings of {} dimensions at {EMBEDDING_PATH}, not {dimensions}: \
             pass --dimensions {} or another --container",
            existing.id, e.dimensions, e.dimensions
        )),
        None => Some(format!(
            "container {} exists without a vector embedding policy for {EMBEDDING_PATH}: pass \
             another --container (the vector workload creates it with the policy)",
            existing.id
        )),
    }
}

/// Creates the database and the `vector` workload's container when they are missing; an existing
/// container must have the embedding policy the workload needs.
pub async fn ensure_vector_container(
    driver: &CosmosDriver,
    container: &ContainerReference,
    dimensions: u32,
) -> Result<(), String> {
    ensure_database(driver, container).await?;
    let database = driver.database(container.database().id());
    let properties = vector_container(container.id(), dimensions)?;
    match database.create_container(&properties, None).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_conflict() => {
            let existing = driver
                .container(container.database().id(), container.id())
                .read_properties()
                .await
                .map_err(|e| {
                    format!("cannot read container {}: {}", container.id(), describe(&e))
                })?;
            match vector_policy_mismatch(existing.properties(), dimensions) {
                None => Ok(()),
                Some(why) => Err(why),
            }
        }
        Err(e) => Err(format!(
            "cannot create container {}: {}",
            container.id(),
            describe(&e)
        )),
    }
}

/// Upserts items `0..count` (32 at a time) and returns their references.
pub async fn seed_items(
    driver: &CosmosDriver,
    container: &ContainerReference,
    count: u64,
) -> Result<SeededItems, String> {
    seed_bodies(driver, container, count, item_body).await
}

/// Upserts the `vector` workload's items `0..count`, with embeddings of `dimensions` numbers.
pub async fn seed_vectors(
    driver: &CosmosDriver,
    container: &ContainerReference,
    count: u64,
    dimensions: u32,
) -> Result<SeededItems, String> {
    seed_bodies(driver, container, count, |i| {
        vector_item_body(i, dimensions)
    })
    .await
}

/// Upserts `body(i)` for items `0..count` (32 at a time) and returns their references.
async fn seed_bodies(
    driver: &CosmosDriver,
    container: &ContainerReference,
    count: u64,
    body: impl Fn(u64) -> serde_json::Value,
) -> Result<SeededItems, String> {
    let items = SeededItems::new(container, count)?;
    let mut tasks = JoinSet::new();
    let mut next = 0u64;
    let mut failures = Vec::new();
    loop {
        while tasks.len() < 32 && next < count {
            let driver = driver.clone();
            let op = CosmosOperation::upsert_item(container.clone())
                .with_partition_key(item_id(next))
                .with_json_body(&body(next));
            next += 1;
            tasks.spawn(async move {
                let op = op.map_err(|e| describe(&e))?;
                driver
                    .execute(op, &OperationOptions::default())
                    .await
                    .map(|_| ())
                    .map_err(|e| describe(&e))
            });
        }
        match tasks.join_next().await {
            None => break,
            Some(Ok(Ok(()))) => {}
            Some(Ok(Err(e))) => failures.push(e),
            Some(Err(e)) => failures.push(format!("seeding task failed: {e}")),
        }
    }
    match failures.first() {
        None => Ok(items),
        Some(first) => Err(format!(
            "{} of {count} items could not be seeded; first error: {first}",
            failures.len()
        )),
    }
}

/// Writes the shared counter item with `n` = 0 and returns its reference.
pub async fn reset_counter(
    driver: &CosmosDriver,
    container: &ContainerReference,
) -> Result<(ItemReference, PartitionKey), String> {
    let op = CosmosOperation::upsert_item(container.clone())
        .with_partition_key(COUNTER_ID)
        .with_json_body(&counter_body())
        .map_err(|e| describe(&e))?;
    driver
        .execute(op, &OperationOptions::default())
        .await
        .map_err(|e| format!("cannot write the counter item: {}", describe(&e)))?;
    let item = container.item(COUNTER_ID).map_err(|e| e.to_string())?;
    Ok((item, PartitionKey::from(COUNTER_ID)))
}

/// The counter's value read back (`None` when it cannot be read).
pub async fn read_counter(
    driver: &CosmosDriver,
    item: &ItemReference,
    pk: &PartitionKey,
) -> Option<i64> {
    let op = CosmosOperation::read_item(item.clone()).with_partition_key(pk.clone());
    let response = driver
        .execute(op, &OperationOptions::default())
        .await
        .ok()?;
    let doc: serde_json::Value = response.json().ok()?;
    doc.get("n")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vector_container_carries_its_policy_and_index() {
        let p = vector_container("v", 128).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&p.to_json().unwrap()).unwrap();
        assert_eq!(v["partitionKey"]["paths"][0], "/pk");
        let e = &v["vectorEmbeddingPolicy"]["vectorEmbeddings"][0];
        assert_eq!(
            (
                &e["path"],
                &e["dataType"],
                &e["distanceFunction"],
                &e["dimensions"]
            ),
            (
                &"/embedding".into(),
                &"float32".into(),
                &"cosine".into(),
                &128.into()
            )
        );
        assert_eq!(
            v["indexingPolicy"]["vectorIndexes"][0]["type"],
            "quantizedFlat"
        );
        assert_eq!(
            v["indexingPolicy"]["vectorIndexes"][0]["path"],
            "/embedding"
        );
    }

    #[test]
    fn existing_containers_are_checked_for_the_embedding() {
        assert_eq!(
            vector_policy_mismatch(&vector_container("v", 64).unwrap(), 64),
            None
        );
        let other_dims = vector_policy_mismatch(&vector_container("v", 64).unwrap(), 128).unwrap();
        assert!(
            other_dims.contains("64 dimensions") && other_dims.contains("--dimensions 64"),
            "{other_dims}"
        );
        let pk = PartitionKeyDefinition::new("/pk").unwrap();
        let plain = vector_policy_mismatch(&ContainerProperties::new("items", &pk), 64).unwrap();
        assert!(
            plain.contains("items exists without a vector embedding policy"),
            "{plain}"
        );
    }
}
