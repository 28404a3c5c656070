//! `cosmos item get|create|replace|upsert|delete|patch|list` (query, import and export have files
//! of their own).

use std::io::Read;
use std::num::NonZeroU8;

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosOperation, DatabaseReference, OperationOptions,
    PartitionKey, Precondition,
};
use serde_json::{json, Value};

use super::partition_key::{from_document, from_flags, paths_of_container};
use super::printing::{body_json, print, print_charge, success};
use super::{connect, CommandError};
use crate::args::patch_flags::{instructions_json, PatchFlag};
use crate::args::request_class::RequestClassArgs;
use crate::args::target::TargetArgs;
use crate::cli::{BodyArg, ItemAction, ItemLocation};

/// The document given by `--body`: JSON text, `@PATH`, or `-` for standard input. It must be an
/// object with a string `id`.
pub fn read_body(arg: &BodyArg) -> Result<Value, String> {
    let doc = read_document(arg)?;
    require_id(&doc)?;
    Ok(doc)
}

/// The `id` a written document must carry.
fn require_id(doc: &Value) -> Result<(), String> {
    if !doc.get("id").is_some_and(Value::is_string) {
        return Err("--body needs a string \"id\"".into());
    }
    Ok(())
}

/// The `--body` document, a JSON object, id or not.
fn read_document(arg: &BodyArg) -> Result<Value, String> {
    let text = if arg.body == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the body from stdin: {e}"))?;
        s
    } else if let Some(path) = arg.body.strip_prefix('@') {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the body from {path}: {e}"))?
    } else {
        arg.body.clone()
    };
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("--body is not valid JSON: {e}"))?;
    if !doc.is_object() {
        return Err("--body must be a JSON object".into());
    }
    Ok(doc)
}

fn container_ref(at: &ItemLocation) -> Result<ContainerReference, CommandError> {
    Ok(DatabaseReference::new(&at.db)?.container(&at.container)?)
}

/// The key from the flags, or else from the document under the container's partition key paths.
async fn key_for(
    driver: &CosmosDriver,
    at: &ItemLocation,
    container: &ContainerReference,
    doc: Option<&Value>,
) -> Result<PartitionKey, CommandError> {
    if let Some(pk) = from_flags(at).map_err(CommandError::Input)? {
        return Ok(pk);
    }
    let Some(doc) = doc else {
        return Err("the partition key is needed: pass --pk VALUE or --pk-json JSON".into());
    };
    let response = driver
        .execute(
            CosmosOperation::read_container(container.clone()),
            &OperationOptions::default(),
        )
        .await?;
    let paths = paths_of_container(&body_json(response.body()))?;
    from_document(doc, &paths).map_err(CommandError::Input)
}

/// Runs an item subcommand and prints its result. `patch_flags` are the PATCH flags in command-line
/// order (empty for other subcommands).
pub async fn run(
    target: &TargetArgs,
    class: &RequestClassArgs,
    action: &ItemAction,
    patch_flags: &[(PatchFlag, String)],
) -> Result<(), CommandError> {
    if target.key_reads_stdin() && body_of(action).is_some_and(|b| b.body == "-") {
        return Err(
            "the key and the body cannot both come from standard input: pass the key \
                    with --key-file or COSMOS_KEY, or the body with --body @PATH"
                .into(),
        );
    }
    let driver = connect::driver_of_class(target, class).await?;
    let mut options = OperationOptions::default();
    let op = match action {
        ItemAction::List { db, container, max } => {
            return list(&driver, target, db, container, *max).await
        }
        ItemAction::Query(args) => {
            return super::item_query::run(&driver, args, target.diagnostics).await
        }
        ItemAction::Import(args) => return super::item_import::run(&driver, args).await,
        ItemAction::Export(args) => return super::item_export::run(&driver, args).await,
        ItemAction::Get { at, id } => {
            let c = container_ref(at)?;
            let pk = key_for(&driver, at, &c, None).await?;
            CosmosOperation::read_item(c.item(id)?).with_partition_key(pk)
        }
        ItemAction::Delete { at, all: true, .. } => {
            let c = container_ref(at)?;
            let pk = from_flags(at).map_err(CommandError::Input)?.ok_or(
                "--all deletes every item of one partition key: pass --partition-key VALUE \
                 or --pk-json JSON",
            )?;
            CosmosOperation::delete_all_items_by_partition_key(c).with_partition_key(pk)
        }
        ItemAction::Delete {
            at, id, if_match, ..
        } => {
            let c = container_ref(at)?;
            let pk = key_for(&driver, at, &c, None).await?;
            let id = id
                .as_deref()
                .ok_or("give the item id, or --all to delete every item of the partition key")?;
            let mut op = CosmosOperation::delete_item(c.item(id)?).with_partition_key(pk);
            if let Some(etag) = if_match {
                op = op.with_precondition(Precondition::IfMatch(etag.clone()));
            }
            op
        }
        ItemAction::Create { at, body }
        | ItemAction::Upsert { at, body }
        | ItemAction::Replace { at, body, .. } => {
            let mut doc = read_document(body).map_err(CommandError::Input)?;
            match action {
                ItemAction::Replace { id: Some(id), .. } => {
                    with_id(&mut doc, id).map_err(CommandError::Input)?
                }
                ItemAction::Replace { id: None, .. } if doc.get("id").is_none() => {
                    return Err(CommandError::Input(
                        "give the item id (`item replace ... ID`) or an \"id\" in the body".into(),
                    ))
                }
                _ => {}
            }
            require_id(&doc).map_err(CommandError::Input)?;
            let c = container_ref(at)?;
            let pk = key_for(&driver, at, &c, Some(&doc)).await?;
            let op = match action {
                ItemAction::Create { .. } => CosmosOperation::create_item(c),
                ItemAction::Upsert { .. } => CosmosOperation::upsert_item(c),
                _ => {
                    let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
                    CosmosOperation::replace_item(c.item(id)?)
                }
            };
            let mut op = op.with_partition_key(pk).with_json_body(&doc)?;
            if let ItemAction::Replace {
                if_match: Some(etag),
                ..
            } = action
            {
                op = op.with_precondition(Precondition::IfMatch(etag.clone()));
            }
            op
        }
        ItemAction::Patch(p) => {
            let instructions =
                instructions_json(p.ops.as_deref(), patch_flags).map_err(CommandError::Input)?;
            let instructions: PatchInstructions = serde_json::from_value(instructions)
                .map_err(|e| CommandError::Input(format!("bad patch operation: {e}")))?;
            let attempts =
                NonZeroU8::new(p.max_attempts).ok_or("--max-attempts must be at least 1")?;
            options = options.with_patch_max_attempts(attempts);
            let c = container_ref(&p.at)?;
            let pk = key_for(&driver, &p.at, &c, None).await?;
            CosmosOperation::patch_item(c.item(&p.id)?)
                .with_partition_key(pk)
                .with_json_body(&instructions)?
        }
    };
    let response = driver.execute(op, &options).await?;
    let result = match action {
        ItemAction::Delete { all: true, at, .. } => {
            json!({ "deleted_partition_key": at.pk_json.clone().or_else(|| at.pk.clone()) })
        }
        ItemAction::Delete { id, .. } => json!({ "deleted": id }),
        _ => body_json(response.body()),
    };
    print(&success(result, &response, target.diagnostics));
    print_charge(response.request_charge());
    Ok(())
}

/// The document flag of a write subcommand.
fn body_of(action: &ItemAction) -> Option<&BodyArg> {
    match action {
        ItemAction::Create { body, .. }
        | ItemAction::Upsert { body, .. }
        | ItemAction::Replace { body, .. } => Some(body),
        _ => None,
    }
}

/// Gives `doc` the item id `id` of `item replace ID`: a body without an id takes it; a body with
/// another id is refused (the service would refuse it too, after the request).
fn with_id(doc: &mut Value, id: &str) -> Result<(), String> {
    let Some(fields) = doc.as_object_mut() else {
        return Err("the document is not a JSON object".into());
    };
    match fields.get("id") {
        None => {
            fields.insert("id".into(), Value::String(id.to_owned()));
            Ok(())
        }
        Some(Value::String(body_id)) if body_id == id => Ok(()),
        Some(other) => Err(format!(
            "the body's id {other} is not the item id {id:?} given to replace"
        )),
    }
}

/// The documents of one read-feed page; a page without them is an error, never an empty list.
fn page_documents(response: &cosmos_driver::CosmosResponse) -> Result<Vec<Value>, CommandError> {
    match body_json(response.body())
        .get_mut("Documents")
        .map(Value::take)
    {
        Some(Value::Array(docs)) => Ok(docs),
        _ => Err(CommandError::Failed(
            "the read-feed page has no \"Documents\" array".into(),
        )),
    }
}

/// Reads the container's feed page by page until `max` items, and says on stderr when it
/// stopped there with more left.
async fn list(
    driver: &CosmosDriver,
    target: &TargetArgs,
    db: &str,
    container: &str,
    max: u64,
) -> Result<(), CommandError> {
    let c = DatabaseReference::new(db)?.container(container)?;
    let options = OperationOptions::default();
    let mut items: Vec<Value> = Vec::new();
    let mut charge = 0.0;
    let wanted = usize::try_from(max).unwrap_or(usize::MAX);
    let page_size = u32::try_from(max.min(1000)).unwrap_or(1000);
    let feed = CosmosOperation::read_all_items(c.clone()).with_max_item_count(page_size);
    let mut pager = driver.pages(feed, options);
    // Whether items past `max` were left out of the last page read.
    let mut dropped = false;
    while items.len() < wanted {
        let Some(response) = pager.next_page().await else {
            break;
        };
        let response = response?;
        charge += response.request_charge();
        let docs = page_documents(&response)?;
        let remaining = wanted - items.len();
        dropped = docs.len() > remaining;
        items.extend(docs.into_iter().take(remaining));
    }
    // At `max` with nothing left out, a page to come may still be empty: read it to tell.
    let mut stopped_at_max = dropped;
    if !dropped && items.len() >= wanted {
        if let Some(response) = pager.next_page().await {
            let response = response?;
            charge += response.request_charge();
            stopped_at_max = !page_documents(&response)?.is_empty();
        }
    }
    let result = Value::Array(items);
    if stopped_at_max {
        eprintln!(
            "{}",
            json!({ "stopped_at_max": max, "more_items": true, "hint": "raise --max, or use `item export` for every item" })
        );
    }
    print_charge(charge);
    if target.diagnostics {
        print(&json!({ "request_charge": super::printing::charge(charge), "result": result }));
    } else {
        print(&result);
    }
    Ok(())
}

#[cfg(test)]
mod replace_id_tests {
    use super::*;

    #[test]
    fn the_id_given_to_replace_and_the_bodys_agree() {
        let cases: Vec<(Value, Result<Value, &str>)> = vec![
            (json!({"n": 1}), Ok(json!({"n": 1, "id": "o1"}))),
            (json!({"id": "o1", "n": 1}), Ok(json!({"id": "o1", "n": 1}))),
            (
                json!({"id": "o2"}),
                Err("the body's id \"o2\" is not the item id \"o1\" given to replace"),
            ),
            (
                json!({"id": 7}),
                Err("the body's id 7 is not the item id \"o1\" given to replace"),
            ),
            (json!([1]), Err("the document is not a JSON object")),
        ];
        for (mut doc, want) in cases {
            let got = with_id(&mut doc, "o1").map(|()| doc);
            assert_eq!(got, want.map_err(str::to_owned));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_must_be_objects_with_ids() {
        let arg = |s: &str| BodyArg { body: s.to_owned() };
        assert_eq!(
            read_body(&arg(r#"{"id":"a","pk":"p"}"#)).unwrap()["pk"],
            "p"
        );
        assert!(read_body(&arg("{")).unwrap_err().contains("not valid JSON"));
        assert!(read_body(&arg("[1]")).unwrap_err().contains("JSON object"));
        assert!(read_body(&arg(r#"{"id":5}"#))
            .unwrap_err()
            .contains("string \"id\""));
        assert!(read_body(&arg("@/nonexistent/file.json"))
            .unwrap_err()
            .contains("/nonexistent/file.json"));
    }
}
