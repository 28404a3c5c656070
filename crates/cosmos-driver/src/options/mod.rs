//! Options: per driver, per operation, and their layered resolution.

mod client_layer;
mod connection_pool;
mod connection_string;
mod driver_options;
mod effective;
mod operation_options;
mod patch_strategy;
mod request_setters;
mod retry_options;

pub(crate) use client_layer::{ClientLayer, RegionChange};
pub use connection_pool::{ConnectionPoolOptions, HttpVersion};
pub use driver_options::{DriverOptions, DEFAULT_REQUEST_TIMEOUT};
pub use effective::EffectiveOptions;
pub use operation_options::{OperationOptions, DEFAULT_PATCH_MAX_ATTEMPTS};
pub use patch_strategy::{PatchStrategy, UnknownPatchStrategy};
pub(crate) use request_setters::request_setters;
pub use retry_options::{
    RetryOptions, DEFAULT_END_TO_END_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_READ_ATTEMPT_TIMEOUT,
};
