//! The HTTP server: listeners and the per-request pipeline.

mod body;
mod listener;
mod pipeline;
mod port;

pub use body::MAX_BODY_BYTES;
pub use listener::spawn;
pub use port::Port;
