//! The typed API on top of `execute`: a cheap container handle with typed item operations and
//! queries as streams. The operation values stay for those who want them.

mod container_client;
mod container_settings;
mod database_client;
mod driver_page_source;
mod item_response;
mod offer_flow;
mod throughput_response;

pub use container_client::ContainerClient;
pub use container_settings::ContainerResponse;
pub use database_client::{DatabaseClient, DatabaseProperties};
pub use driver_page_source::DriverPageSource;
pub use item_response::ItemResponse;
pub use throughput_response::ThroughputResponse;
