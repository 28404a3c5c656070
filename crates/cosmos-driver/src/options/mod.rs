//! Options: per driver, per operation, from the environment, and their layered resolution.

mod driver_options;
mod effective;
mod environment;
mod operation_options;

pub use driver_options::{
    ConnectionPoolOptions, DriverOptions, DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD, DEFAULT_REQUEST_TIMEOUT,
};
pub use effective::EffectiveOptions;
pub use environment::{
    parse_lenient_bool, EnvironmentOptions, CONSECUTIVE_HEDGE_WIN_THRESHOLD_VAR, HEDGING_ENABLED_OVERRIDE_VAR,
    HEDGING_ENABLED_VAR,
};
pub use operation_options::{OperationOptions, DEFAULT_PATCH_MAX_ATTEMPTS};
