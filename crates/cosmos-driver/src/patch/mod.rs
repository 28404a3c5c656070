//! PATCH: partial updates of one item, carried out as a client-side Read-Modify-Write loop.
//!
//! - `instructions`: the wire format (`{"operations":[...]}`) and its builder.
//! - `ops`: RFC 6901 pointers and the all-or-nothing application of operations to a document.
//! - `native`: the body of the service's PATCH verb (`PatchStrategy::Native`).
//! - `preflight`: the refusals made before any request goes out.
//! - `strategy_plan`: which way a PATCH goes (the verb, the loop, or refused), one pure decision.
//! - `handler`: the loop (Read, apply, Replace with If-Match, again on 412), with
//!   `session_thread` (the session token carried across attempts), `synthesis` (the response
//!   built from the sub-operations) and `settle` (whether a replace whose outcome is unknown landed, decided from the item read again).

mod handler;
mod instructions;
mod native;
mod ops;
mod preflight;
mod session_thread;
mod settle;
mod strategy_plan;
mod synthesis;

pub(crate) use handler::execute_patch;
pub use instructions::{CosmosNumber, PatchInstructions, PatchOpKind, PatchOperation};
pub use ops::{apply_patch_ops, JsonPointer, PatchError, PatchFailure};
pub use preflight::PatchRefusal;
