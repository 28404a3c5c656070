//! `cosmos sproc|trigger|udf create|read|replace|delete|list` and `cosmos sproc execute`.

use std::io::Read;

use cosmos_driver::{
    ExecuteOptions, ItemResponse, ResourceFeed, ScriptsClient, StoredProcedureProperties,
    TriggerOperation, TriggerProperties, TriggerType, UserDefinedFunctionProperties,
};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{json, Value};

use super::partition_key::from_flags;
use super::printing::{body_json, print, print_charge, success};
use super::{connect, CommandError};
use crate::args::target::TargetArgs;
use crate::cli::{
    ExecuteArgs, ScriptAt, ScriptSource, SprocAction, SprocExtra, TriggerAction, TriggerKindArgs,
    UdfAction,
};

/// The largest script body read from a file or standard input.
const MAX_SCRIPT_BYTES: u64 = 2 * 1024 * 1024;

/// The JavaScript of `--body`: the text itself, `@PATH` to read a file, or `-` for standard input.
pub fn read_source(source: &ScriptSource) -> Result<String, String> {
    let text = if source.body == "-" {
        let mut s = String::new();
        std::io::stdin()
            .take(MAX_SCRIPT_BYTES)
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the script from standard input: {e}"))?;
        s
    } else if let Some(path) = source.body.strip_prefix('@') {
        let file = std::fs::File::open(path)
            .map_err(|e| format!("cannot read the script from {path}: {e}"))?;
        let mut s = String::new();
        file.take(MAX_SCRIPT_BYTES)
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the script from {path}: {e}"))?;
        s
    } else {
        source.body.clone()
    };
    if text.trim().is_empty() {
        return Err("the script body is empty".into());
    }
    Ok(text)
}

/// The script source of a create or replace, read before the key (which may also want standard
/// input: then the source may not come from there).
fn pre_read(
    target: &TargetArgs,
    source: Option<&ScriptSource>,
) -> Result<Option<String>, CommandError> {
    let Some(source) = source else {
        return Ok(None);
    };
    if source.body == "-" && target.key_reads_stdin() {
        return Err(
            "the key and the script cannot both come from standard input: pass the key \
                    with --key-file or COSMOS_KEY, or the script with --body @PATH"
                .into(),
        );
    }
    read_source(source).map(Some).map_err(CommandError::Input)
}

fn scripts(driver: &cosmos_driver::CosmosDriver, db: &str, container: &str) -> ScriptsClient {
    driver.container(db, container).scripts()
}

fn trigger(at: &ScriptAt, body: String, kind: &TriggerKindArgs) -> TriggerProperties {
    TriggerProperties::new(
        at.id.clone(),
        body,
        kind.trigger_type.into(),
        kind.operation.into(),
    )
}

/// Prints a resource response: its body, with `--diagnostics` the status, charge and diagnostics.
fn print_response<T>(response: &ItemResponse<T>, result: Value, diagnostics: bool) {
    print(&success(result, response.response(), diagnostics));
    print_charge(response.request_charge());
}

async fn list<T: Serialize + serde::de::DeserializeOwned + Send + 'static>(
    mut feed: ResourceFeed<T>,
) -> Result<(), CommandError> {
    let mut all = Vec::new();
    while let Some(item) = feed.next().await {
        all.push(serde_json::to_value(item?).map_err(|e| format!("cannot print a script: {e}"))?);
    }
    print(&Value::Array(all));
    print_charge(feed.request_charge_so_far());
    Ok(())
}

/// Runs `cosmos sproc ...`.
pub async fn run_sproc(target: &TargetArgs, action: &SprocAction) -> Result<(), CommandError> {
    let body = pre_read(
        target,
        match action {
            SprocAction::Create { source, .. } | SprocAction::Replace { source, .. } => {
                Some(source)
            }
            _ => None,
        },
    )?;
    // An execution's request carries its `--priority` and `--throughput-bucket`.
    let driver = match action {
        SprocAction::Kind(SprocExtra::Execute(args)) => {
            connect::driver_of_class(target, &args.class).await?
        }
        _ => connect::driver(target).await?,
    };
    let d = target.diagnostics;
    match action {
        SprocAction::Create { at, .. } => {
            let props =
                StoredProcedureProperties::new(at.id.clone(), body.clone().unwrap_or_default());
            let r = scripts(&driver, &at.db, &at.container)
                .create_stored_procedure(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        SprocAction::Replace { at, .. } => {
            let props =
                StoredProcedureProperties::new(at.id.clone(), body.clone().unwrap_or_default());
            let r = scripts(&driver, &at.db, &at.container)
                .replace_stored_procedure(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        SprocAction::Read { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .read_stored_procedure(&at.id)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        SprocAction::Delete { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .delete_stored_procedure(&at.id)
                .await?;
            print_response(&r, json!({ "deleted": at.id }), d);
        }
        SprocAction::List { db, container } => {
            return list(scripts(&driver, db, container).stored_procedures()).await
        }
        SprocAction::Kind(SprocExtra::Execute(args)) => return execute(&driver, args, d).await,
    }
    Ok(())
}

async fn execute(
    driver: &cosmos_driver::CosmosDriver,
    args: &ExecuteArgs,
    diagnostics: bool,
) -> Result<(), CommandError> {
    let pk = from_flags(&args.at).map_err(CommandError::Input)?.ok_or(
        "executing a stored procedure needs a partition key: pass --pk VALUE or --pk-json JSON",
    )?;
    let params: Value = serde_json::from_str(&args.params)
        .map_err(|e| CommandError::Input(format!("--params is not valid JSON: {e}")))?;
    if !params.is_array() {
        return Err(CommandError::Input(
            "--params must be a JSON array, one element per argument of the procedure".into(),
        ));
    }
    let options = ExecuteOptions::new().with_script_logging(args.log);
    let r = scripts(driver, &args.at.db, &args.at.container)
        .execute_stored_procedure_with::<Value>(&args.id, pk, &params, &options)
        .await?;
    print(&success(r.result().clone(), r.response(), diagnostics));
    if let Some(log) = r.script_log() {
        eprintln!("{}", json!({ "script_log": log }));
    }
    print_charge(r.request_charge());
    Ok(())
}

/// Runs `cosmos trigger ...`.
pub async fn run_trigger(target: &TargetArgs, action: &TriggerAction) -> Result<(), CommandError> {
    let body = pre_read(
        target,
        match action {
            TriggerAction::Create { source, .. } | TriggerAction::Replace { source, .. } => {
                Some(source)
            }
            _ => None,
        },
    )?;
    let driver = connect::driver(target).await?;
    let d = target.diagnostics;
    match action {
        TriggerAction::Create {
            at,
            definition: kind,
            ..
        } => {
            let props = trigger(at, body.clone().unwrap_or_default(), kind);
            let r = scripts(&driver, &at.db, &at.container)
                .create_trigger(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        TriggerAction::Replace {
            at,
            definition: kind,
            ..
        } => {
            let props = trigger(at, body.clone().unwrap_or_default(), kind);
            let r = scripts(&driver, &at.db, &at.container)
                .replace_trigger(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        TriggerAction::Read { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .read_trigger(&at.id)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        TriggerAction::Delete { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .delete_trigger(&at.id)
                .await?;
            print_response(&r, json!({ "deleted": at.id }), d);
        }
        TriggerAction::List { db, container } => {
            return list(scripts(&driver, db, container).triggers()).await
        }
        TriggerAction::Kind(none) => match *none {},
    }
    Ok(())
}

/// Runs `cosmos udf ...`.
pub async fn run_udf(target: &TargetArgs, action: &UdfAction) -> Result<(), CommandError> {
    let body = pre_read(
        target,
        match action {
            UdfAction::Create { source, .. } | UdfAction::Replace { source, .. } => Some(source),
            _ => None,
        },
    )?;
    let driver = connect::driver(target).await?;
    let d = target.diagnostics;
    match action {
        UdfAction::Create { at, .. } => {
            let props =
                UserDefinedFunctionProperties::new(at.id.clone(), body.clone().unwrap_or_default());
            let r = scripts(&driver, &at.db, &at.container)
                .create_user_defined_function(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        UdfAction::Replace { at, .. } => {
            let props =
                UserDefinedFunctionProperties::new(at.id.clone(), body.clone().unwrap_or_default());
            let r = scripts(&driver, &at.db, &at.container)
                .replace_user_defined_function(&props)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        UdfAction::Read { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .read_user_defined_function(&at.id)
                .await?;
            print_response(&r, body_json(r.response().body()), d);
        }
        UdfAction::Delete { at } => {
            let r = scripts(&driver, &at.db, &at.container)
                .delete_user_defined_function(&at.id)
                .await?;
            print_response(&r, json!({ "deleted": at.id }), d);
        }
        UdfAction::List { db, container } => {
            return list(scripts(&driver, db, container).user_defined_functions()).await
        }
        UdfAction::Kind(none) => match *none {},
    }
    Ok(())
}

impl From<crate::cli::TriggerTypeArg> for TriggerType {
    fn from(t: crate::cli::TriggerTypeArg) -> Self {
        match t {
            crate::cli::TriggerTypeArg::Pre => TriggerType::Pre,
            crate::cli::TriggerTypeArg::Post => TriggerType::Post,
        }
    }
}

impl From<crate::cli::TriggerOperationArg> for TriggerOperation {
    fn from(o: crate::cli::TriggerOperationArg) -> Self {
        use crate::cli::TriggerOperationArg as A;
        match o {
            A::All => TriggerOperation::All,
            A::Create => TriggerOperation::Create,
            A::Replace => TriggerOperation::Replace,
            A::Delete => TriggerOperation::Delete,
            A::Update => TriggerOperation::Update,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_text_files_or_refused() {
        let s = |b: &str| ScriptSource { body: b.to_owned() };
        assert_eq!(
            read_source(&s("function f() {}")).unwrap(),
            "function f() {}"
        );
        assert!(read_source(&s("  ")).unwrap_err().contains("empty"));
        assert!(read_source(&s("@/nonexistent/x.js"))
            .unwrap_err()
            .contains("/nonexistent/x.js"));
    }
}
