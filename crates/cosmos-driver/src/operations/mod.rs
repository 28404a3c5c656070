//! How one operation is carried out: one dispatcher over a few kinds. Every request any kind
//! issues (a point operation, each page of a feed, each read and write of a PATCH, later each
//! partition of a fan-out) enters the same pipeline entry, so it is retried, routed and hedged like
//! a point read.
//!
//! - `operation_kind`: which kind an operation is (a pure function, table-tested).
//! - `pipeline_entry`: the one door into the request pipeline ([`PipelineEntry`]).
//! - `pager`: a paged feed, one page per call ([`Pager`]); read feed is its first user, queries and
//!   the change feed reuse it.
//! - `page_guard`: the rules every paging loop follows (a repeated or cycling continuation, a run
//!   of empty pages), and `feed_body`: reading a feed page's array of resources; one place for
//!   both, used by every pager (read feed, queries, the change feed, read many, range listings).
//! - `partition_key_paths`: a container's partition key paths, read once through the pipeline and
//!   kept (PATCH's pre-flight and read many use them).
//! - `replan`: how long a compound operation waits before it plans again after a range was
//!   found gone.
//! - read-modify-write is PATCH, in [`crate::patch`].

pub(crate) mod feed_body;
mod operation_kind;
pub(crate) mod page_guard;
mod pager;
mod partition_key_paths;
mod pipeline_entry;
mod replan;
#[cfg(test)]
mod test_entry;

pub use pager::Pager;
pub(crate) use partition_key_paths::{partition_key_definition, partition_key_paths};
pub(crate) use pipeline_entry::PipelineEntry;
pub(crate) use replan::MAX_REPLANS;
pub(crate) use replan::Replans;

use self::operation_kind::OperationKind;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::response::CosmosResponse;

/// Carries out `operation` (validated by the caller) by its kind.
pub(crate) async fn execute(
    core: &DriverCore,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    match OperationKind::of(&operation) {
        OperationKind::SingleRequest | OperationKind::Batch => core.send(&operation, options).await,
        OperationKind::PagedFeed => pager::page(core, &operation, options).await,
        // Boxed: the read-modify-write future holds two whole operations, and keeping it inline
        // would make every operation's future (and every move of it) that much larger.
        OperationKind::ReadModifyWrite => {
            Box::pin(crate::patch::execute_patch(core, operation, options)).await
        }
    }
}
