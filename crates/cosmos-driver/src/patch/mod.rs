//! PATCH: partial updates of one item, carried out as a client-side Read-Modify-Write loop.
//!
//! - [`instructions`]: the wire format (`{"operations":[...]}`) and its builder.
//! - [`ops`]: RFC 6901 pointers and the all-or-nothing application of operations to a document.
//! - [`preflight`]: the refusals made before any request goes out.

pub mod instructions;
pub mod ops;
pub mod preflight;

pub use instructions::{CosmosNumber, PatchInstructions, PatchOpKind, PatchOperation};
pub use ops::{apply_patch_ops, JsonPointer, PatchError, PatchFailure};
pub use preflight::PatchRefusal;
