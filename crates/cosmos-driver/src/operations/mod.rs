//! How one operation is carried out: one dispatcher over a few kinds. Every request any kind
//! issues (a point operation, each page of a feed, each read and write of a PATCH, later each
//! partition of a fan-out) enters the same pipeline entry, so it is retried, routed and hedged like
//! a point read.
//!
//! - `dispatch`: one operation carried out by its kind ([`run`]).
//! - `operation_kind`: which kind an operation is (a pure function, table-tested).
//! - `pipeline_entry`: the one door into the request pipeline ([`PipelineEntry`]).
//! - `pager`: a paged feed, one page per call ([`Pager`]), and the one paging loop of a listing
//!   read whole (`read_whole`); `partition_key_ranges`: a container's ranges through it, kept
//!   until a range is found gone.
//! - the compound kinds, each request through the dispatcher: `query_source` (a query's plan,
//!   ranges and pages, for [`crate::query::QueryPager`]), `change_feed` (a change feed page by
//!   page), `read_many`, `bulk_target` (a bulk run's batches) and `offer_flow` (a database's or
//!   container's throughput through its offer).
//! - `page_guard`: the rules every paging loop follows (a repeated or cycling continuation, a run
//!   of empty pages), and `feed_body`: reading a feed page's array of resources; one place for
//!   both, used by every pager (read feed, queries, the change feed, read many, range listings).
//! - `partition_key_paths`: a container's partition key paths, read once through the pipeline and
//!   kept (PATCH's pre-flight and read many use them).
//! - `replan`: whether, and after what wait, a compound operation plans again after a range was
//!   found gone: one budget and one decision ([`Replans::after`]) for the query pager, the
//!   change feed, read many and bulk, and the one re-plan loop around it ([`Replanning`]) the
//!   query pager, the change feed and read many run their rounds through.
//! - read-modify-write is PATCH, in [`crate::patch`].

mod bulk_target;
mod change_feed;
mod dispatch;
pub(crate) mod feed_body;
pub(crate) mod offer_flow;
mod operation_kind;
pub(crate) mod page_guard;
mod pager;
mod partition_key_paths;
mod partition_key_ranges;
mod pipeline_entry;
mod query_source;
mod read_many;
mod replan;
#[cfg(test)]
mod test_entry;

pub(crate) use bulk_target::DriverBulkTarget;
pub(crate) use change_feed::ChangeFeedReader;
pub(crate) use dispatch::run;
pub use pager::Pager;
pub(crate) use partition_key_paths::partition_key_paths;
pub(crate) use partition_key_ranges::partition_key_ranges;
pub(crate) use pipeline_entry::PipelineEntry;
pub(crate) use query_source::DriverPageSource;
pub(crate) use read_many::read_many;
#[cfg(test)]
pub(crate) use replan::MAX_REPLANS;
pub(crate) use replan::{Replanning, Replans, Round};
