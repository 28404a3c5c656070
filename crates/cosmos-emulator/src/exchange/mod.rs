//! What a request and its answer are, below both the server pipeline and the handlers: the
//! per-request context, the shared state it points to, the reply a handler returns and its HTTP
//! form, and the request's classification.

mod account_switches;
mod context;
pub(crate) mod reply;
pub(crate) mod request_class;
pub(crate) mod serialization;
mod session_wait;

pub(crate) use account_switches::{AccountSwitches, SwitchUpdate, SwitchValues};
pub(crate) use context::{header_text, RequestCtx, Shared};
pub(crate) use reply::Reply;
pub use session_wait::SessionWait;
