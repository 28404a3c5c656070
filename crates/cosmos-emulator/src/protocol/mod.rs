//! The service's wire vocabulary: header names, routes, errors, session tokens, charges, ids.

pub(crate) mod change_feed_request;
pub(crate) mod charge;
pub mod cosmos_binary;
mod error;
pub(crate) mod headers;
pub(crate) mod ids;
pub(crate) mod indexing_directive;
pub(crate) mod percent;
pub(crate) mod route;
mod script_kind;
pub(crate) mod session_token;

pub(crate) use error::{sub_status, ApiError};
pub(crate) use route::{Resource, Route, RouteError};
pub(crate) use script_kind::ScriptKind;
