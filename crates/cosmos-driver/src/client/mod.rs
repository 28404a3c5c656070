//! The typed API on top of `execute`: a cheap container handle with typed item operations and
//! queries as streams. The operation values stay for those who want them.

mod container_client;
mod item_response;

pub use container_client::ContainerClient;
pub use item_response::ItemResponse;
