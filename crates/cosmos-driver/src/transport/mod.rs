//! One HTTP attempt: endpoints, the pooled client, headers, signing, send and parse.

mod endpoint;

pub use endpoint::Endpoint;
