//! The aggregate stage: aggregates, GROUP BY, the blocking stage that reads every range before
//! its first value, and the shaping of results (DISTINCT, OFFSET/LIMIT/TOP).

pub(crate) mod aggregates;
pub(crate) mod blocking_stage;
pub(crate) mod group_by;
pub(crate) mod result_shaping;
