//! `cosmos container create|read|list|delete` (`throughput` has a file of its own).

use cosmos_driver::{CosmosOperation, DatabaseReference, OperationOptions, PartitionKeyDefinition};
use serde_json::json;

use super::printing::{body_json, print, success};
use super::{connect, CommandError};
use crate::args::target::TargetArgs;
use crate::cli::ContainerAction;

/// Runs a container subcommand and prints its result.
pub async fn run(target: &TargetArgs, action: &ContainerAction) -> Result<(), CommandError> {
    let driver = connect::driver(target).await?;
    let options = OperationOptions::default();
    let op = match action {
        ContainerAction::Create {
            db,
            id,
            partition_key,
        } => {
            let paths: Vec<String> = partition_key
                .iter()
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            let definition = PartitionKeyDefinition::hierarchical(paths)?;
            CosmosOperation::create_container(
                DatabaseReference::new(db)?.container(id)?,
                definition,
            )
        }
        ContainerAction::Read { db, id } => {
            CosmosOperation::read_container(DatabaseReference::new(db)?.container(id)?)
        }
        ContainerAction::List { db } => {
            CosmosOperation::list_containers(DatabaseReference::new(db)?)
        }
        ContainerAction::Delete { db, id } => {
            CosmosOperation::delete_container(DatabaseReference::new(db)?.container(id)?)
        }
        ContainerAction::Throughput {
            db,
            id,
            buckets,
            clear_buckets,
            default_bucket,
        } => {
            let at = (db.as_str(), id.as_str());
            let caps = super::container_throughput::Caps {
                buckets,
                default: *default_bucket,
                clear: *clear_buckets,
            };
            return super::container_throughput::run(&driver, target, at, caps).await;
        }
    };
    let response = driver.execute(op, &options).await?;
    let result = match action {
        ContainerAction::Delete { id, .. } => json!({ "deleted": id }),
        ContainerAction::List { .. } => body_json(response.body())
            .get("DocumentCollections")
            .cloned()
            .unwrap_or(json!([])),
        _ => body_json(response.body()),
    };
    print(&success(result, &response, target.diagnostics));
    Ok(())
}
