//! Read many: fetch many items by (partition key, id) at once. The pure part lives here: group
//! the items by the partition key range their key hashes into, chunk big groups into queries the
//! service accepts, write each query, and put the answers back in the caller's order.
//! `read_many_run` sends one request per group (a point read for a single item,
//! else a query on id and partition key) through the driver's pipeline, several groups at once.

mod read_many_plan;
mod read_many_response;
mod read_many_run;

pub use read_many_plan::{DEFAULT_READ_MANY_CONCURRENCY, MAX_ITEMS_PER_QUERY, MAX_READ_MANY_ITEMS};
pub use read_many_response::{ReadManyOptions, ReadManyResponse};
pub(crate) use read_many_run::read_many;
