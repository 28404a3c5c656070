//! Queries over an account's metadata feeds: POST `/dbs`, `/dbs/{db}/colls` and `/offers` with
//! `x-ms-documentdb-isquery: True` (or `Content-Type: application/query+json`), what the SDKs send
//! for `query_databases`, `query_containers`, a filtered `list`, and their throughput reads
//! (`SELECT * FROM c WHERE c.offerResourceId = @rid`, `... r.resource = @link`). The query runs
//! over the feed's resources as the SQL engine runs it over items, under the same page work and
//! time budget ([`crate::sql::run::run_whole`]), and the answer is one page of the feed
//! (`Databases`, `DocumentCollections`, `Offers`).

use bytes::Bytes;
use serde_json::Value;

use super::feed_body;
use super::query_request::read_request;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};

/// Runs the request's query over `resources` (their JSON bodies) and answers the feed page
/// `{"_rid": rid, "<name>": [...], "_count": n}`.
pub(super) fn answer(
    ctx: &RequestCtx<'_>,
    rid: &str,
    name: &str,
    resources: &[Bytes],
) -> Result<Reply, ApiError> {
    let request = read_request(ctx)?;
    let docs = resources
        .iter()
        .map(|b| serde_json::from_slice::<Value>(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::new(500, format!("A stored resource is not JSON: {e}")))?;
    let rows = crate::sql::run::run_whole(
        &request.query,
        &docs,
        &request.params,
        &ctx.shared.query_limits,
    )?;
    let bodies: Vec<Bytes> = rows
        .iter()
        .map(|row| Bytes::from(row.to_string()))
        .collect();
    let refs: Vec<&Bytes> = bodies.iter().collect();
    Ok(
        Reply::json(200, feed_body(rid, name, &refs), charge::metadata())
            .header(headers::ITEM_COUNT, refs.len().to_string()),
    )
}
