//! The HTTP server: listeners and the per-request pipeline.

mod body;
mod connection_cap;
mod durable;
mod listener;
mod pipeline;
mod port;

pub use body::MAX_BODY_BYTES;
pub use connection_cap::{ConnectionCap, DEFAULT_MAX_CONNECTIONS};
pub use listener::spawn;
pub use port::Port;
