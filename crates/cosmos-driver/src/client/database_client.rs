//! `driver.database("shop")`: a database handle with its throughput, its containers as a typed
//! stream, and container creation with settings and throughput; `driver.databases()` lists the
//! account's databases.

use std::sync::Arc;

use serde::Deserialize;

use super::container_client::ContainerClient;
use super::container_settings::ContainerResponse;
use super::if_not_exists::{read_or_create, IfNotExists};
use super::offer_flow::{self, OfferOwner};
use super::resource_feed::ResourceFeed;
use super::throughput_response::ThroughputResponse;
use crate::driver::CosmosDriver;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::protocol::DatabaseReference;
use crate::resources::{ContainerProperties, ThroughputProperties};

/// A database of one account. Cheap to clone.
#[derive(Clone, Debug)]
pub struct DatabaseClient {
    driver: CosmosDriver,
    database: Result<DatabaseReference, Arc<str>>,
    options: OperationOptions,
}

/// A database as the service describes it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct DatabaseProperties {
    /// The database's id.
    pub id: String,
    /// Its resource id.
    #[serde(rename = "_rid", default)]
    pub resource_id: String,
    /// Its etag.
    #[serde(rename = "_etag", default)]
    pub etag: String,
}

impl CosmosDriver {
    /// A handle to database `database`. The id is checked here; a bad id makes every operation of
    /// the handle fail with the reason.
    pub fn database(&self, database: &str) -> DatabaseClient {
        DatabaseClient {
            driver: self.clone(),
            database: DatabaseReference::new(database).map_err(|e| Arc::from(e.message())),
            options: OperationOptions::default(),
        }
    }

    /// Creates database `id`, with shared throughput when `throughput` is given (409 when it
    /// exists), and answers a handle to it.
    pub async fn create_database(
        &self,
        id: &str,
        throughput: Option<ThroughputProperties>,
    ) -> Result<DatabaseClient, CosmosError> {
        let database = self.database(id);
        database.create(throughput).await?;
        Ok(database)
    }

    /// Database `id` as it is, or created (with shared throughput when `throughput` is given) when
    /// it does not exist; [`IfNotExists::created`] says which. An existing database is answered
    /// as it is: `throughput` applies only to a database this call creates.
    pub async fn create_database_if_not_exists(
        &self,
        id: &str,
        throughput: Option<ThroughputProperties>,
    ) -> Result<IfNotExists<DatabaseProperties>, CosmosError> {
        let database = self.database(id);
        database.reference()?;
        read_or_create(|| database.read(), || database.create(throughput)).await
    }

    /// The account's databases, read page by page as the stream is polled.
    pub fn databases(&self) -> ResourceFeed<DatabaseProperties> {
        let pager = self.pages(
            CosmosOperation::list_databases(),
            OperationOptions::default(),
        );
        ResourceFeed::new(pager, "Databases")
    }
}

impl DatabaseClient {
    /// The same handle with `options` applied to each of its operations.
    pub fn with_options(mut self, options: OperationOptions) -> Self {
        self.options = options;
        self
    }

    /// The database's reference, or why its id was refused.
    pub fn reference(&self) -> Result<&DatabaseReference, CosmosError> {
        self.database
            .as_ref()
            .map_err(|m| CosmosError::invalid_input(m.to_string()))
    }

    pub(super) fn driver(&self) -> &CosmosDriver {
        &self.driver
    }

    pub(super) fn options(&self) -> &OperationOptions {
        &self.options
    }

    /// A handle to container `container` of this database.
    pub fn container(&self, container: &str) -> ContainerClient {
        let id = self
            .reference()
            .map(|d| d.id().to_owned())
            .unwrap_or_default();
        self.driver
            .container(&id, container)
            .with_options(self.options.clone())
    }

    /// Creates this database, with shared throughput when `throughput` is given (409 when it
    /// exists).
    pub async fn create(
        &self,
        throughput: Option<ThroughputProperties>,
    ) -> Result<DatabaseProperties, CosmosError> {
        let mut op = CosmosOperation::create_database(self.reference()?.clone());
        if let Some(t) = throughput {
            let (name, value) = t.create_header();
            op = op.with_header(name, value);
        }
        self.driver.execute(op, &self.options).await?.json()
    }

    /// Deletes this database and everything in it.
    pub async fn delete(&self) -> Result<(), CosmosError> {
        let op = CosmosOperation::delete_database(self.reference()?.clone());
        self.driver.execute(op, &self.options).await.map(|_| ())
    }

    /// Reads the database.
    pub async fn read(&self) -> Result<DatabaseProperties, CosmosError> {
        let op = CosmosOperation::read_database(self.reference()?.clone());
        self.driver.execute(op, &self.options).await?.json()
    }

    /// Creates a container from `properties`, provisioned with `throughput` when given (else the
    /// service's default, or none of its own in a database with shared throughput).
    pub async fn create_container(
        &self,
        properties: &ContainerProperties,
        throughput: Option<ThroughputProperties>,
    ) -> Result<ContainerResponse, CosmosError> {
        properties.validate()?;
        let reference = self.reference()?;
        let container = reference.container(&properties.id)?;
        let partition_key = crate::protocol::PartitionKeyDefinition::hierarchical(
            properties.partition_key.paths.iter().cloned(),
        )?;
        let mut op = CosmosOperation::create_container(container, partition_key)
            .with_body(properties.to_json()?);
        if let Some(t) = throughput {
            let (name, value) = t.create_header();
            op = op.with_header(name, value);
        }
        let response = self.driver.execute(op, &self.options).await?;
        ContainerResponse::from_response(response)
    }

    /// Container `properties.id` as it is, or created from `properties` (provisioned with
    /// `throughput` when given) when it does not exist; [`IfNotExists::created`] says which. An
    /// existing container is answered as it is, even when its definition differs from
    /// `properties`.
    pub async fn create_container_if_not_exists(
        &self,
        properties: &ContainerProperties,
        throughput: Option<ThroughputProperties>,
    ) -> Result<IfNotExists<ContainerResponse>, CosmosError> {
        properties.validate()?;
        self.reference()?.container(&properties.id)?;
        let container = self.container(&properties.id);
        read_or_create(
            || container.read_properties(),
            || self.create_container(properties, throughput),
        )
        .await
    }

    /// The database's containers, read page by page as the stream is polled.
    pub fn containers(&self) -> ResourceFeed<ContainerProperties> {
        match self.reference() {
            Ok(d) => {
                let op = CosmosOperation::list_containers(d.clone());
                ResourceFeed::new(
                    self.driver.pages(op, self.options.clone()),
                    "DocumentCollections",
                )
            }
            Err(e) => ResourceFeed::failed(e),
        }
    }

    /// The database's shared throughput (a 404 error when it has none).
    pub async fn read_throughput(&self) -> Result<ThroughputResponse, CosmosError> {
        let owner = OfferOwner::database(self.reference()?);
        offer_flow::read_throughput(self.driver.core(), owner, &self.options)
            .await
            .and_then(ThroughputResponse::from_response)
    }

    /// Sets the database's shared throughput (manual stays manual, autoscale stays autoscale).
    pub async fn replace_throughput(
        &self,
        throughput: ThroughputProperties,
    ) -> Result<ThroughputResponse, CosmosError> {
        let owner = OfferOwner::database(self.reference()?);
        offer_flow::replace_throughput(self.driver.core(), owner, throughput, &self.options)
            .await
            .and_then(ThroughputResponse::from_response)
    }
}
