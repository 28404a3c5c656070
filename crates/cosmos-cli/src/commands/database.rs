//! `cosmos db create|read|list|delete`.

use cosmos_driver::{CosmosOperation, DatabaseReference, OperationOptions};
use serde_json::json;

use super::printing::{body_json, print, success};
use super::{connect, CommandError};
use crate::args::target::TargetArgs;
use crate::cli::DbAction;

/// Runs a database subcommand and prints its result.
pub async fn run(target: &TargetArgs, action: &DbAction) -> Result<(), CommandError> {
    let driver = connect::driver(target).await?;
    let options = OperationOptions::default();
    let (op, deleted) = match action {
        DbAction::Create { id } => (
            CosmosOperation::create_database(DatabaseReference::new(id)?),
            None,
        ),
        DbAction::Read { id } => (
            CosmosOperation::read_database(DatabaseReference::new(id)?),
            None,
        ),
        DbAction::List => (CosmosOperation::list_databases(), None),
        DbAction::Delete { id } => (
            CosmosOperation::delete_database(DatabaseReference::new(id)?),
            Some(id),
        ),
    };
    let response = driver.execute(op, &options).await?;
    let result = match (action, deleted) {
        (_, Some(id)) => json!({ "deleted": id }),
        (DbAction::List, _) => body_json(response.body())
            .get("Databases")
            .cloned()
            .unwrap_or(json!([])),
        _ => body_json(response.body()),
    };
    print(&success(result, &response, target.diagnostics));
    Ok(())
}
