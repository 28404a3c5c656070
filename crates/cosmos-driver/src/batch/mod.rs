//! Transactional batches: up to 100 operations on the items of one partition key, applied by the
//! service all or none in one request.
//!
//! - [`wire`]: the operations' JSON shape, the batch headers and the service's limits.
//! - `builder`: [`TransactionalBatch`], refusing operations past the limits as they are added.
//! - `results`: the response read into one [`BatchOperationResult`] per operation, and the error
//!   naming the operation whose failure rolled the batch back.
//! - `batch_response`: [`BatchResponse`], a committed batch's results with its charge and
//!   diagnostics.

mod batch_response;
#[cfg(test)]
mod batch_tests;
pub(crate) mod builder;
pub(crate) mod results;
pub mod wire;

pub use batch_response::BatchResponse;
pub use builder::TransactionalBatch;
pub use results::{BatchOperationResult, FAILED_DEPENDENCY};
pub use wire::BatchOperationKind;
