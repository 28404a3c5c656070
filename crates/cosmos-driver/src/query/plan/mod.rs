//! The plan stage: the gateway's query plan, the features the driver serves and checks a plan
//! against, and one query page as an operation value.

pub(crate) mod query_features;
pub(crate) mod query_operation;
pub(crate) mod query_plan;
