//! The machinery every operation kind runs through, naming no kind: whatever a kind issues (a
//! point operation, each page of a feed, each read and write of a PATCH, each batch of a bulk run)
//! enters the same pipeline entry, so it is retried, routed and hedged like a point read. The
//! kinds themselves own their folders above this one: [`crate::patch`], [`crate::query`],
//! [`crate::change_feed`], [`crate::read_many`], [`crate::bulk`] (and a throughput's offer, in
//! the client).
//!
//! - `dispatch`: one plain operation carried out by its kind ([`run`]): one request, or one page
//!   of a feed; read-modify-write (PATCH) is dispatched by the driver, above the kinds.
//! - `operation_kind`: which kind an operation is (a pure function, table-tested).
//! - `pipeline_entry`: the one door into the request pipeline ([`PipelineEntry`]).
//! - `pager`: a paged feed, one page per call ([`Pager`]), and the one paging loop of a listing
//!   read whole (`read_whole`); `partition_key_ranges`: a container's ranges through it, kept
//!   until a range is found gone.
//! - `page_guard`: the rules every paging loop follows (a repeated or cycling continuation, a run
//!   of empty pages), and `feed_body`: reading a feed page's array of resources; one place for
//!   both, used by every pager (read feed, queries, the change feed, read many, range listings).
//! - `partition_key_paths`: a container's partition key paths, read once through the pipeline and
//!   kept (PATCH's pre-flight and read many use them).
//! - `replan`: whether, and after what wait, a compound operation plans again after a range was
//!   found gone: one budget and one decision ([`Replans::after`]) for the query pager, the
//!   change feed, read many and bulk, and the one re-plan loop around it ([`Replanning`]) the
//!   query pager, the change feed and read many run their rounds through.

mod dispatch;
pub(crate) mod feed_body;
mod operation_kind;
pub(crate) mod page_guard;
mod pager;
pub(crate) mod partition_key_paths;
mod partition_key_ranges;
mod pipeline_entry;
mod replan;
#[cfg(test)]
mod test_entry;

pub(crate) use dispatch::run;
pub(crate) use operation_kind::OperationKind;
pub use pager::Pager;
pub(crate) use partition_key_paths::partition_key_paths;
pub(crate) use partition_key_ranges::partition_key_ranges;
pub(crate) use pipeline_entry::PipelineEntry;
#[cfg(test)]
pub(crate) use replan::MAX_REPLANS;
pub(crate) use replan::{Replanning, Replans, Round};
