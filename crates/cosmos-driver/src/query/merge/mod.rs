//! The merge stage: per-range results merged in ORDER BY order (the range cursors), the order
//! values compare in, and the vector-search merge.

pub(crate) mod range_merge;
pub(crate) mod value_order;
pub(crate) mod vector_merge;
