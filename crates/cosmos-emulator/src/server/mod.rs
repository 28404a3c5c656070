//! The HTTP server: listeners, the per-request pipeline, and response building.

mod body;
mod listener;
pub mod op_kind;
mod pipeline;
pub mod reply;
mod shared;

pub use body::MAX_BODY_BYTES;
pub use listener::spawn;
pub use reply::Reply;
pub use shared::{Port, RequestCtx, Shared};
