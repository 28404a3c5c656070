//! One HTTP attempt: endpoints, the pooled client, headers, signing, send and parse.

mod date;
pub(crate) mod failure_reason;
mod http_attempt;
mod http_client;

pub(crate) use http_attempt::{AttemptFailure, AttemptHeaders, AttemptRequest, Transport};
pub use http_attempt::{API_VERSION, USER_AGENT_VALUE};
pub(crate) use http_client::{HttpClient, RawResponse, SendFailure};
