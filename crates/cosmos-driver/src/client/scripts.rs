//! `container.scripts()`: the container's stored procedures, triggers and user-defined functions
//! (create, read, replace, delete, list) and stored procedure execution.
//!
//! Executing a stored procedure is a write: a `Create` on the procedure's path, so it is never
//! hedged and is retried only where any other non-idempotent write would be (before it was sent,
//! or on answers that say it was not applied).

use http::HeaderValue;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::container_client::ContainerClient;
use super::item_response::ItemResponse;
use super::resource_feed::ResourceFeed;
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::{CosmosOperation, OperationTarget};
use crate::protocol::PartitionKey;
use crate::protocol::{header_names as h, validate_id, OperationType, ScriptKind, ScriptReference};
use crate::resources::{
    decode_script_log, StoredProcedureProperties, TriggerProperties, UserDefinedFunctionProperties,
};
use crate::response::CosmosResponse;

/// The scripts of one container. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ScriptsClient {
    container: ContainerClient,
}

/// Options of one stored procedure execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecuteOptions {
    /// Ask the service for the script's `console.log` output (`x-ms-documentdb-script-enable-logging`).
    pub enable_script_logging: bool,
}

impl ExecuteOptions {
    /// No logging.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask for the script's log.
    pub fn with_script_logging(mut self, on: bool) -> Self {
        self.enable_script_logging = on;
        self
    }
}

/// The answer of a stored procedure: what it set with `getContext().getResponse().setBody(...)`,
/// read as `T`, with its log, charge and diagnostics.
#[derive(Debug)]
pub struct StoredProcedureResponse<T> {
    response: CosmosResponse,
    result: T,
    script_log: Option<String>,
}

impl<T> StoredProcedureResponse<T> {
    /// What the procedure answered.
    pub fn result(&self) -> &T {
        &self.result
    }

    /// What the procedure answered, owned.
    pub fn into_result(self) -> T {
        self.result
    }

    /// What the script wrote with `console.log`, when logging was asked for and the service sent it.
    pub fn script_log(&self) -> Option<&str> {
        self.script_log.as_deref()
    }

    /// The request units of the execution (the work the script did included).
    pub fn request_charge(&self) -> f64 {
        self.response.request_charge()
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.response.status()
    }

    /// Every request the execution sent.
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        self.response.diagnostics()
    }

    /// The whole response.
    pub fn response(&self) -> &CosmosResponse {
        &self.response
    }
}

/// The typed response of `response` with the body read as `T`; an empty body reads as JSON `null`
/// (a procedure that set no body). A body that is not `T` is an error naming the procedure.
fn typed_result<T: DeserializeOwned>(
    response: CosmosResponse,
    id: &str,
) -> Result<StoredProcedureResponse<T>, CosmosError> {
    let body: &[u8] = if response.body().is_empty() {
        b"null"
    } else {
        response.body()
    };
    let result = serde_json::from_slice(body).map_err(|e| {
        CosmosError::new(
            ErrorKind::Deserialization,
            format!("the result of stored procedure {id:?} is not the type asked for: {e}"),
        )
    })?;
    let script_log = response
        .headers()
        .get(h::SCRIPT_LOG_RESULTS.as_str())
        .map(decode_script_log);
    Ok(StoredProcedureResponse {
        response,
        result,
        script_log,
    })
}

/// The operation that executes stored procedure `sproc` in `partition_key` with `params` (the
/// JSON array the procedure's arguments are taken from).
pub(crate) fn execute_operation<P: Serialize + ?Sized>(
    sproc: ScriptReference,
    partition_key: PartitionKey,
    params: &P,
    options: &ExecuteOptions,
) -> Result<CosmosOperation, CosmosError> {
    if sproc.kind() != ScriptKind::StoredProcedure {
        return Err(CosmosError::invalid_input(format!(
            "only a stored procedure can be executed, not the {} {:?}",
            sproc.kind().what(),
            sproc.id()
        )));
    }
    let params = serde_json::to_value(params).map_err(|e| {
        CosmosError::invalid_input(format!("the stored procedure parameters are not JSON: {e}"))
    })?;
    if !params.is_array() {
        return Err(CosmosError::invalid_input(
            "the stored procedure parameters must be a JSON array (one element per argument)",
        ));
    }
    let mut op = CosmosOperation::new(OperationType::Create, OperationTarget::Script(sproc))
        .with_partition_key(partition_key)
        .with_json_body(&params)?;
    if options.enable_script_logging {
        op = op.with_header(h::SCRIPT_ENABLE_LOGGING, HeaderValue::from_static("true"));
    }
    Ok(op)
}

impl ContainerClient {
    /// The container's stored procedures, triggers and user-defined functions.
    pub fn scripts(&self) -> ScriptsClient {
        ScriptsClient {
            container: self.clone(),
        }
    }
}

impl ScriptsClient {
    fn script(&self, kind: ScriptKind, id: &str) -> Result<ScriptReference, CosmosError> {
        Ok(ScriptReference::new(
            self.container.reference()?.clone(),
            kind,
            id,
        )?)
    }

    async fn send<T>(&self, op: CosmosOperation) -> Result<ItemResponse<T>, CosmosError> {
        let response = self
            .container
            .driver
            .execute(op, &self.container.options)
            .await?;
        Ok(ItemResponse::new(response))
    }

    async fn create<T: Serialize>(
        &self,
        kind: ScriptKind,
        id: &str,
        properties: &T,
    ) -> Result<ItemResponse<T>, CosmosError> {
        validate_id(kind.what(), id)?;
        let c = self.container.reference()?.clone();
        let op = CosmosOperation::new(OperationType::Create, OperationTarget::Scripts(c, kind))
            .with_json_body(properties)?;
        self.send(op).await
    }

    async fn read<T>(&self, kind: ScriptKind, id: &str) -> Result<ItemResponse<T>, CosmosError> {
        let target = OperationTarget::Script(self.script(kind, id)?);
        self.send(CosmosOperation::new(OperationType::Read, target))
            .await
    }

    async fn replace<T: Serialize>(
        &self,
        kind: ScriptKind,
        id: &str,
        properties: &T,
    ) -> Result<ItemResponse<T>, CosmosError> {
        let target = OperationTarget::Script(self.script(kind, id)?);
        let op = CosmosOperation::new(OperationType::Replace, target).with_json_body(properties)?;
        self.send(op).await
    }

    async fn delete(&self, kind: ScriptKind, id: &str) -> Result<ItemResponse<()>, CosmosError> {
        let target = OperationTarget::Script(self.script(kind, id)?);
        self.send(CosmosOperation::new(OperationType::Delete, target))
            .await
    }

    fn list<T: DeserializeOwned + Send + 'static>(&self, kind: ScriptKind) -> ResourceFeed<T> {
        match self.container.reference() {
            Ok(c) => {
                let op = CosmosOperation::read_feed(OperationTarget::Scripts(c.clone(), kind));
                ResourceFeed::new(
                    self.container
                        .driver
                        .pages(op, self.container.options.clone()),
                    kind.feed_field(),
                )
            }
            Err(e) => ResourceFeed::failed(e),
        }
    }

    /// Creates a stored procedure (409 when its id is taken).
    pub async fn create_stored_procedure(
        &self,
        properties: &StoredProcedureProperties,
    ) -> Result<ItemResponse<StoredProcedureProperties>, CosmosError> {
        self.create(ScriptKind::StoredProcedure, &properties.id, properties)
            .await
    }

    /// Reads stored procedure `id` (404 when there is none).
    pub async fn read_stored_procedure(
        &self,
        id: &str,
    ) -> Result<ItemResponse<StoredProcedureProperties>, CosmosError> {
        self.read(ScriptKind::StoredProcedure, id).await
    }

    /// Replaces the stored procedure `properties.id`.
    pub async fn replace_stored_procedure(
        &self,
        properties: &StoredProcedureProperties,
    ) -> Result<ItemResponse<StoredProcedureProperties>, CosmosError> {
        self.replace(ScriptKind::StoredProcedure, &properties.id, properties)
            .await
    }

    /// Deletes stored procedure `id`.
    pub async fn delete_stored_procedure(&self, id: &str) -> Result<ItemResponse<()>, CosmosError> {
        self.delete(ScriptKind::StoredProcedure, id).await
    }

    /// The container's stored procedures, read page by page as the stream is polled.
    pub fn stored_procedures(&self) -> ResourceFeed<StoredProcedureProperties> {
        self.list(ScriptKind::StoredProcedure)
    }

    /// Creates a trigger (409 when its id is taken).
    pub async fn create_trigger(
        &self,
        properties: &TriggerProperties,
    ) -> Result<ItemResponse<TriggerProperties>, CosmosError> {
        self.create(ScriptKind::Trigger, &properties.id, properties)
            .await
    }

    /// Reads trigger `id`.
    pub async fn read_trigger(
        &self,
        id: &str,
    ) -> Result<ItemResponse<TriggerProperties>, CosmosError> {
        self.read(ScriptKind::Trigger, id).await
    }

    /// Replaces the trigger `properties.id`.
    pub async fn replace_trigger(
        &self,
        properties: &TriggerProperties,
    ) -> Result<ItemResponse<TriggerProperties>, CosmosError> {
        self.replace(ScriptKind::Trigger, &properties.id, properties)
            .await
    }

    /// Deletes trigger `id`.
    pub async fn delete_trigger(&self, id: &str) -> Result<ItemResponse<()>, CosmosError> {
        self.delete(ScriptKind::Trigger, id).await
    }

    /// The container's triggers, read page by page as the stream is polled.
    pub fn triggers(&self) -> ResourceFeed<TriggerProperties> {
        self.list(ScriptKind::Trigger)
    }

    /// Creates a user-defined function (409 when its id is taken).
    pub async fn create_user_defined_function(
        &self,
        properties: &UserDefinedFunctionProperties,
    ) -> Result<ItemResponse<UserDefinedFunctionProperties>, CosmosError> {
        self.create(ScriptKind::UserDefinedFunction, &properties.id, properties)
            .await
    }

    /// Reads user-defined function `id`.
    pub async fn read_user_defined_function(
        &self,
        id: &str,
    ) -> Result<ItemResponse<UserDefinedFunctionProperties>, CosmosError> {
        self.read(ScriptKind::UserDefinedFunction, id).await
    }

    /// Replaces the user-defined function `properties.id`.
    pub async fn replace_user_defined_function(
        &self,
        properties: &UserDefinedFunctionProperties,
    ) -> Result<ItemResponse<UserDefinedFunctionProperties>, CosmosError> {
        self.replace(ScriptKind::UserDefinedFunction, &properties.id, properties)
            .await
    }

    /// Deletes user-defined function `id`.
    pub async fn delete_user_defined_function(
        &self,
        id: &str,
    ) -> Result<ItemResponse<()>, CosmosError> {
        self.delete(ScriptKind::UserDefinedFunction, id).await
    }

    /// The container's user-defined functions, read page by page as the stream is polled.
    pub fn user_defined_functions(&self) -> ResourceFeed<UserDefinedFunctionProperties> {
        self.list(ScriptKind::UserDefinedFunction)
    }

    /// Executes stored procedure `id` in `partition_key` with `params` (a value that serializes
    /// to a JSON array, one element per argument), reading its answer as `T`.
    pub async fn execute_stored_procedure<T: DeserializeOwned>(
        &self,
        id: &str,
        partition_key: impl Into<PartitionKey>,
        params: &(impl Serialize + ?Sized),
    ) -> Result<StoredProcedureResponse<T>, CosmosError> {
        self.execute_stored_procedure_with(id, partition_key, params, &ExecuteOptions::new())
            .await
    }

    /// [`ScriptsClient::execute_stored_procedure`] with `options` (script logging).
    pub async fn execute_stored_procedure_with<T: DeserializeOwned>(
        &self,
        id: &str,
        partition_key: impl Into<PartitionKey>,
        params: &(impl Serialize + ?Sized),
        options: &ExecuteOptions,
    ) -> Result<StoredProcedureResponse<T>, CosmosError> {
        let sproc = self.script(ScriptKind::StoredProcedure, id)?;
        let op = execute_operation(sproc, partition_key.into(), params, options)?;
        let response = self
            .container
            .driver
            .execute(op, &self.container.options)
            .await?;
        typed_result(response, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DatabaseReference;
    use crate::protocol::ResourceType;
    use serde_json::json;

    fn sproc(kind: ScriptKind, id: &str) -> ScriptReference {
        let c = DatabaseReference::new("db")
            .unwrap()
            .container("c")
            .unwrap();
        ScriptReference::new(c, kind, id).unwrap()
    }

    #[test]
    fn execution_is_a_keyed_create_on_the_procedure() {
        let op = execute_operation(
            sproc(ScriptKind::StoredProcedure, "bulk import"),
            PartitionKey::from("p1"),
            &json!([[{"id": "a"}], 5]),
            &ExecuteOptions::new().with_script_logging(true),
        )
        .unwrap();
        assert_eq!(op.operation_type(), OperationType::Create);
        assert_eq!(op.resource_type(), ResourceType::StoredProcedure);
        assert_eq!(&op.path()[..], b"/dbs/db/colls/c/sprocs/bulk%20import");
        assert_eq!(
            op.target().signing_link(),
            "dbs/db/colls/c/sprocs/bulk import"
        );
        assert!(op.partition_key().is_some());
        assert_eq!(
            op.body().map(|b| b.as_ref()),
            Some(&br#"[[{"id":"a"}],5]"#[..])
        );
        assert!(op
            .extra_headers()
            .iter()
            .any(|(n, v)| *n == h::SCRIPT_ENABLE_LOGGING && v == "true"));
        assert!(
            !op.operation_type().is_idempotent(),
            "never retried as if it were"
        );
    }

    #[test]
    fn bad_executions_are_refused_before_sending() {
        let pk = || PartitionKey::from("p");
        let e = execute_operation(
            sproc(ScriptKind::StoredProcedure, "s"),
            pk(),
            &json!({"a": 1}),
            &ExecuteOptions::new(),
        )
        .unwrap_err();
        assert!(e.message().contains("JSON array"), "{}", e.message());
        let e = execute_operation(
            sproc(ScriptKind::Trigger, "t"),
            pk(),
            &json!([]),
            &ExecuteOptions::new(),
        )
        .unwrap_err();
        assert!(
            e.message().contains("only a stored procedure"),
            "{}",
            e.message()
        );
        assert!(ScriptReference::new(
            DatabaseReference::new("db")
                .unwrap()
                .container("c")
                .unwrap(),
            ScriptKind::UserDefinedFunction,
            "a/b"
        )
        .is_err());
    }

    #[test]
    fn script_feeds_and_links() {
        let c = DatabaseReference::new("db")
            .unwrap()
            .container("c")
            .unwrap();
        for (kind, path, rt) in [
            (
                ScriptKind::StoredProcedure,
                "/dbs/db/colls/c/sprocs",
                ResourceType::StoredProcedure,
            ),
            (
                ScriptKind::Trigger,
                "/dbs/db/colls/c/triggers",
                ResourceType::Trigger,
            ),
            (
                ScriptKind::UserDefinedFunction,
                "/dbs/db/colls/c/udfs",
                ResourceType::UserDefinedFunction,
            ),
        ] {
            let op = CosmosOperation::read_feed(OperationTarget::Scripts(c.clone(), kind));
            assert_eq!(
                (
                    &op.path()[..],
                    op.target().signing_link(),
                    op.resource_type()
                ),
                (path.as_bytes(), "dbs/db/colls/c", rt)
            );
            let one = CosmosOperation::new(
                OperationType::Read,
                OperationTarget::Script(sproc(kind, "x")),
            );
            assert_eq!(&one.path()[..], format!("{path}/x").as_bytes());
            assert_eq!(
                one.target().signing_link(),
                format!("dbs/db/colls/c/{}/x", kind.path_segment())
            );
        }
    }
}
