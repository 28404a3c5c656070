//! The service's wire vocabulary: header names, routes, errors, session tokens, charges, ids.

pub mod change_feed_request;
pub mod charge;
pub mod cosmos_binary;
mod error;
pub mod headers;
pub mod ids;
pub mod percent;
pub mod route;
mod script_kind;
pub mod session_token;

pub use error::{code_for, sub_status, ApiError};
pub use route::{Resource, Route, RouteError};
pub use script_kind::ScriptKind;
