//! POST .../docs with `x-ms-cosmos-is-query-plan-request: True`: the plan an SDK needs to run a
//! query across partition key ranges ([`crate::sql::run::plan_for`]).

use super::query_request::read_request;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, ApiError};
use crate::sql::run::{plan_for, prepare_search};

/// The header naming the query features a client can combine.
const SUPPORTED_QUERY_FEATURES: &str = "x-ms-cosmos-supported-query-features";

/// Answers the query plan.
pub(super) fn query_plan(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let mut request = read_request(ctx)?;
    prepare_search(&mut request, &container)?;
    let plan = plan_for(&request, &container, ctx.header(SUPPORTED_QUERY_FEATURES))?;
    let body = serde_json::to_vec(&plan)
        .map_err(|e| ApiError::new(500, format!("The plan could not be written: {e}")))?;
    Ok(Reply::json(200, body.into(), charge::metadata()))
}
