//! The typed API on top of `execute`: a cheap container handle with typed item operations and
//! queries as streams. The operation values stay for those who want them.

mod change_feed_reader;
mod conflicts;
mod container_batch;
mod container_bulk;
mod container_client;
mod container_settings;
mod database_client;
mod if_not_exists;
mod item_options;
mod item_response;
mod offer_flow;
mod resource_feed;
mod scripts;
mod throughput_response;
mod users;

pub use change_feed_reader::ChangeFeed;
pub use container_batch::ContainerBatch;
pub use container_bulk::ContainerBulk;
pub use container_client::ContainerClient;
pub use container_settings::ContainerResponse;
pub use database_client::{DatabaseClient, DatabaseProperties};
pub use if_not_exists::IfNotExists;
pub use item_options::ItemOptions;
pub use item_response::ItemResponse;
pub use resource_feed::{ResourceFeed, ResourcePage};
pub use scripts::{ExecuteOptions, ScriptsClient, StoredProcedureResponse};
pub use throughput_response::ThroughputResponse;
pub use users::UserClient;
