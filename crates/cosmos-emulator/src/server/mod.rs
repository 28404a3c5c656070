//! The HTTP server: listeners and the per-request pipeline.

mod body;
mod connection_cap;
mod durable;
mod listener;
mod offer_splits;
pub(crate) mod operator;
mod pipeline;
mod port;
pub(crate) mod tls;

pub(crate) use connection_cap::{ConnectionCap, DEFAULT_MAX_CONNECTIONS};
pub(crate) use listener::spawn;
pub(crate) use port::Port;
