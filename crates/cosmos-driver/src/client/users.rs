//! `database.user("alice")`: the users of a database and their permissions, whose resource tokens
//! let a client act on one resource without the account key.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};

use super::database_client::DatabaseClient;
use super::resource_feed::ResourceFeed;
use crate::driver::CosmosDriver;
use crate::error::CosmosError;
use crate::operation::{CosmosOperation, OperationTarget};
use crate::options::OperationOptions;
use crate::protocol::{validate_id, OperationType, UserReference};
use crate::resources::{PermissionProperties, UserProperties};

/// The header that asks how long the resource token a permission answers with stays valid.
const EXPIRY_SECONDS: HeaderName = HeaderName::from_static("x-ms-documentdb-expiry-seconds");

/// A user of a database. Cheap to clone.
#[derive(Clone, Debug)]
pub struct UserClient {
    driver: CosmosDriver,
    user: Result<UserReference, Arc<str>>,
    options: OperationOptions,
}

impl DatabaseClient {
    /// A handle to user `id` of this database. The id is checked here; a bad id makes every
    /// operation of the handle fail with the reason.
    pub fn user(&self, id: &str) -> UserClient {
        let user = self
            .reference()
            .map_err(|e| Arc::from(e.message()))
            .and_then(|d| d.user(id).map_err(|e| Arc::from(e.message())));
        UserClient {
            driver: self.driver().clone(),
            user,
            options: self.options().clone(),
        }
    }

    /// Creates user `id` (409 when it exists).
    pub async fn create_user(&self, id: &str) -> Result<UserProperties, CosmosError> {
        validate_id("user", id)?;
        let database = self.reference()?.clone();
        let op = CosmosOperation::new(OperationType::Create, OperationTarget::Users(database))
            .with_json_body(&serde_json::json!({ "id": id }))?;
        self.driver().execute(op, self.options()).await?.json()
    }

    /// The database's users, read page by page as the stream is polled.
    pub fn users(&self) -> ResourceFeed<UserProperties> {
        match self.reference() {
            Ok(d) => {
                let op = CosmosOperation::read_feed(OperationTarget::Users(d.clone()));
                ResourceFeed::new(self.driver().pages(op, self.options().clone()), "Users")
            }
            Err(e) => ResourceFeed::failed(e),
        }
    }
}

impl UserClient {
    /// The user's reference, or why its id was refused.
    pub fn reference(&self) -> Result<&UserReference, CosmosError> {
        self.user
            .as_ref()
            .map_err(|m| CosmosError::invalid_input(m.to_string()))
    }

    async fn run<T: serde::de::DeserializeOwned>(
        &self,
        op: CosmosOperation,
    ) -> Result<T, CosmosError> {
        self.driver.execute(op, &self.options).await?.json()
    }

    /// Reads the user.
    pub async fn read(&self) -> Result<UserProperties, CosmosError> {
        let target = OperationTarget::User(self.reference()?.clone());
        self.run(CosmosOperation::new(OperationType::Read, target))
            .await
    }

    /// Deletes the user and its permissions (their tokens stop working).
    pub async fn delete(&self) -> Result<(), CosmosError> {
        let target = OperationTarget::User(self.reference()?.clone());
        let op = CosmosOperation::new(OperationType::Delete, target);
        self.driver.execute(op, &self.options).await.map(|_| ())
    }

    /// Creates a permission of the user (409 when its id is taken, or the user has one on the
    /// same resource). Its token stays valid `token_ttl` (the service's default, an hour, when
    /// `None`; the service accepts 10 seconds to 5 hours).
    pub async fn create_permission(
        &self,
        permission: &PermissionProperties,
        token_ttl: Option<Duration>,
    ) -> Result<PermissionProperties, CosmosError> {
        self.write_permission(OperationType::Create, permission, token_ttl)
            .await
    }

    /// Creates or replaces a permission of the user (see [`UserClient::create_permission`]).
    pub async fn upsert_permission(
        &self,
        permission: &PermissionProperties,
        token_ttl: Option<Duration>,
    ) -> Result<PermissionProperties, CosmosError> {
        self.write_permission(OperationType::Upsert, permission, token_ttl)
            .await
    }

    async fn write_permission(
        &self,
        kind: OperationType,
        permission: &PermissionProperties,
        token_ttl: Option<Duration>,
    ) -> Result<PermissionProperties, CosmosError> {
        validate_id("permission", &permission.id)?;
        let target = OperationTarget::Permissions(self.reference()?.clone());
        let op = CosmosOperation::new(kind, target).with_json_body(permission)?;
        self.run(with_token_ttl(op, token_ttl)).await
    }

    /// Reads permission `id` with a fresh token, valid `token_ttl` (see
    /// [`UserClient::create_permission`]).
    pub async fn read_permission(
        &self,
        id: &str,
        token_ttl: Option<Duration>,
    ) -> Result<PermissionProperties, CosmosError> {
        let target = OperationTarget::Permission(self.reference()?.permission(id)?);
        let op = CosmosOperation::new(OperationType::Read, target);
        self.run(with_token_ttl(op, token_ttl)).await
    }

    /// Deletes permission `id` (its tokens stop working).
    pub async fn delete_permission(&self, id: &str) -> Result<(), CosmosError> {
        let target = OperationTarget::Permission(self.reference()?.permission(id)?);
        let op = CosmosOperation::new(OperationType::Delete, target);
        self.driver.execute(op, &self.options).await.map(|_| ())
    }

    /// The user's permissions (with their tokens), read page by page as the stream is polled.
    pub fn permissions(&self) -> ResourceFeed<PermissionProperties> {
        match self.reference() {
            Ok(u) => {
                let op = CosmosOperation::read_feed(OperationTarget::Permissions(u.clone()));
                ResourceFeed::new(self.driver.pages(op, self.options.clone()), "Permissions")
            }
            Err(e) => ResourceFeed::failed(e),
        }
    }
}

/// `op` asking for tokens valid `ttl` (whole seconds, rounded up).
fn with_token_ttl(op: CosmosOperation, ttl: Option<Duration>) -> CosmosOperation {
    match ttl {
        Some(ttl) => {
            let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
            op.with_header(EXPIRY_SECONDS, HeaderValue::from(seconds))
        }
        None => op,
    }
}
