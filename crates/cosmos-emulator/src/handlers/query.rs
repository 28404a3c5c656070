//! POST .../docs with `x-ms-documentdb-isquery: True`: a query over one partition key (header, or
//! a WHERE clause pinning it), one partition key range (`x-ms-documentdb-partitionkeyrangeid`,
//! what SDKs send after asking for a plan), or the whole container for the simple queries the
//! gateway serves itself. Anything else across partitions answers 400 with sub-status 1004, which
//! tells an SDK to ask for a query plan.

use std::cell::RefCell;
use std::sync::Arc;

use super::consistency::{read_lsn, session_token};
use super::query_request::read_request;
use super::replica_headers::{container_paths, replica_headers, replica_state, ReplicaState};
use crate::epk::EpkFilter;
use crate::exchange::request_class::flag;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::sql::run::{answer_page, gateway_serves, not_servable, pinned_filter, prepare_search};
use crate::sql::run::{index_utilization_header, query_metrics_header};
use crate::sql::run::{ItemPage, Page, QueryRequest, RangeReads, ReadScope as Scope};
use crate::store::{Container, Partition};

/// Default and largest page sizes, in items.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;
/// A page ends at about this many bytes of results.
const PAGE_BYTES: usize = 4 * 1024 * 1024;
/// What a query page read: each range's session token and the replication state of the last
/// range read (its headers, on a single-range page).
struct Reads<'r, 'c> {
    ctx: &'r RequestCtx<'c>,
    container: &'r Container,
    session_tokens: RefCell<Vec<String>>,
    replica: RefCell<Option<ReplicaState>>,
}

impl RangeReads for Reads<'_, '_> {
    fn read_point(&self, range: usize, partition: &Partition) -> Result<u64, ApiError> {
        let range_id = self.container.range_id(range);
        let lsn = read_lsn(self.ctx, partition, range_id)?;
        self.session_tokens
            .borrow_mut()
            .push(session_token(self.ctx, partition, range_id, lsn));
        *self.replica.borrow_mut() = Some(replica_state(self.ctx, partition, lsn, None));
        Ok(lsn)
    }
}

/// Serves one page of a query.
pub(super) fn query(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let mut request = read_request(ctx)?;
    prepare_search(&mut request, &container)?;
    // The container's user-defined functions, for `udf.name(...)` while this page runs.
    let _udfs = crate::sql::udf_hook::install(Box::new(crate::scripts::udf::Udfs::new(
        ctx.shared
            .scripts
            .list(&container, crate::protocol::ScriptKind::UserDefinedFunction),
        crate::scripts::engine::Bounds::default(),
        ctx.shared.scripts.isolation().clone(),
    )));
    let scope = scope_of(ctx, &container, &request)?;
    let token = match ctx
        .header(headers::CONTINUATION)
        .filter(|t| !t.trim().is_empty())
    {
        Some(t) => Some(crate::sql::run::continuation(t, &container, &scope)?),
        None => None,
    };
    let reads = Reads {
        ctx,
        container: &container,
        session_tokens: RefCell::new(Vec::new()),
        replica: RefCell::new(None),
    };
    let answered = answer_page(ItemPage {
        container: &container,
        request: &request,
        scope: &scope,
        region: ctx.region,
        state: &ctx.shared.queries,
        limits: ctx.shared.query_limits,
        max_items: page_size(ctx)?,
        max_bytes: PAGE_BYTES,
        reads: &reads,
        token,
        by_partition_key: ctx.header(headers::PARTITION_KEY).is_some(),
    })?;
    if answered.ranked {
        // Every sub-query page read the same ranges: one session token each.
        let mut seen = std::collections::HashSet::new();
        reads
            .session_tokens
            .borrow_mut()
            .retain(|t| seen.insert(t.clone()));
    }
    let (page, work, figures) = (answered.page, answered.work, answered.figures);
    let paths = container_paths(ctx, db, &container);
    let scoped_by_key = matches!(scope.only_epk, Some(EpkFilter::Key(_)));
    let mut reply = reply(&container, &scope, page, work, reads, paths);
    if flag(ctx.headers, headers::POPULATE_QUERY_METRICS) {
        reply = reply.header(headers::QUERY_WORK, work.to_string()).header(
            headers::QUERY_METRICS,
            query_metrics_header(&request.query, &figures),
        );
    }
    if flag(ctx.headers, headers::POPULATE_INDEX_METRICS) {
        reply = reply.header(
            headers::INDEX_UTILIZATION,
            index_utilization_header(&container.pk.paths, scoped_by_key),
        );
    }
    Ok(reply)
}

fn page_size(ctx: &RequestCtx<'_>) -> Result<usize, ApiError> {
    Ok(match ctx.header(headers::MAX_ITEM_COUNT).map(str::trim) {
        None | Some("") => DEFAULT_PAGE,
        Some(text) => match text.parse::<i64>() {
            Ok(n) if n < 0 => MAX_PAGE,
            Ok(0) => DEFAULT_PAGE,
            Ok(n) => (n as usize).min(MAX_PAGE),
            Err(_) => {
                return Err(ApiError::bad_request(format!(
                    "{} must be a number, not {text:?}",
                    headers::MAX_ITEM_COUNT
                )))
            }
        },
    })
}

/// Which ranges the query reads, or the 400 the service gives a cross-partition query.
fn scope_of(
    ctx: &RequestCtx<'_>,
    container: &Container,
    request: &QueryRequest,
) -> Result<Scope, ApiError> {
    let epk_headers = ctx.header(headers::START_EPK).is_some()
        || ctx.header(headers::END_EPK).is_some()
        || ctx.header(headers::READ_KEY_TYPE).is_some();
    if let Some(raw) = ctx.header(headers::PARTITION_KEY) {
        if epk_headers {
            return Err(ApiError::bad_request(format!(
                "A query names its keys by {} or by {} / {}, not both.",
                headers::PARTITION_KEY,
                headers::START_EPK,
                headers::END_EPK
            )));
        }
        let filter = container.header_filter(raw)?;
        return Ok(Scope {
            ranges: container.ranges_of(&filter),
            only_epk: Some(filter),
        });
    }
    if let Some(id) = ctx.header(headers::PARTITION_KEY_RANGE_ID) {
        let range = container.range_by_id(id.trim()).ok_or_else(|| {
            ApiError::new(410, format!("Partition key range {id:?} does not exist."))
                .with_sub_status(1002)
        })?;
        let only_epk = if epk_headers {
            epk_range_within(ctx, container, range)?
        } else {
            None
        };
        return Ok(Scope {
            ranges: vec![range],
            only_epk,
        });
    }
    if epk_headers {
        return Err(ApiError::bad_request(format!(
            "A query scoped by {} / {} must name the partition key range they lie in ({}).",
            headers::START_EPK,
            headers::END_EPK,
            headers::PARTITION_KEY_RANGE_ID
        )));
    }
    // A ranked (full-text or hybrid) search is fused by the client from its plan's queries,
    // whatever the partitions.
    if crate::sql::search::is_ranked(&request.query) {
        return Err(not_servable(request));
    }
    // A query that needs a plan gets the 400 that asks for one, whatever the number of ranges
    // (SDKs read the ranges and cache the routing map from it) and even when its WHERE fixes the
    // partition key: the service decides this by the request's partition key header, not by the
    // filter (the Python SDK's aggregate tests expect `SELECT AVG(r.f) FROM r WHERE r.pk = 'x'`
    // to be refused as a cross-partition aggregate without VALUE).
    if !gateway_serves(&request.query) {
        return Err(not_servable(request));
    }
    if let Some(filter) = pinned_filter(request, container) {
        return Ok(Scope {
            ranges: container.ranges_of(&filter),
            only_epk: Some(filter),
        });
    }
    let all = Scope {
        ranges: (0..container.partitions().len()).collect(),
        only_epk: None,
    };
    require_cross_partition(ctx)?;
    Ok(all)
}

/// A query over every partition must say it may span them
/// (`x-ms-documentdb-query-enablecrosspartition: true`); 400 in the service's words otherwise.
pub(super) fn require_cross_partition(ctx: &RequestCtx<'_>) -> Result<(), ApiError> {
    if flag(ctx.headers, headers::ENABLE_CROSS_PARTITION) {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Cross partition query is required but disabled. Please set {} to true, specify {}, or revise your query to avoid this exception.",
        headers::ENABLE_CROSS_PARTITION,
        headers::PARTITION_KEY
    )))
}

/// The `x-ms-start-epk` / `x-ms-end-epk` range of a query on range `range` (what SDKs send for a
/// hierarchical key prefix or a feed range): both bounds, `x-ms-read-key-type:
/// EffectivePartitionKeyRange`, and within the range's own bounds; neither bound (the SDKs' feed
/// range that is a whole partition key range): the whole range (`None`); 400 otherwise.
fn epk_range_within(
    ctx: &RequestCtx<'_>,
    container: &Container,
    range: usize,
) -> Result<Option<EpkFilter>, ApiError> {
    let key_type = ctx.header(headers::READ_KEY_TYPE).map(str::trim);
    if key_type != Some("EffectivePartitionKeyRange") {
        return Err(ApiError::bad_request(format!(
            "{} / {} need {}: EffectivePartitionKeyRange (got {key_type:?}).",
            headers::START_EPK,
            headers::END_EPK,
            headers::READ_KEY_TYPE
        )));
    }
    if ctx.header(headers::START_EPK).is_none() && ctx.header(headers::END_EPK).is_none() {
        return Ok(None);
    }
    let bound = |name: &str| -> Result<&str, ApiError> {
        ctx.header(name).map(str::trim).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{} and {} go together; {name} is missing.",
                headers::START_EPK,
                headers::END_EPK
            ))
        })
    };
    let (min, max) = container
        .pk
        .parse_epk_range(bound(headers::START_EPK)?, bound(headers::END_EPK)?)
        .map_err(|e| {
            ApiError::bad_request(format!(
                "{} / {} are invalid: {e}",
                headers::START_EPK,
                headers::END_EPK
            ))
        })?;
    let (range_min, range_max) = container.range_epks(range);
    if min >= max || min < range_min || range_max.is_some_and(|m| max > m) {
        return Err(ApiError::bad_request(format!(
            "The effective partition key range [{}, {}) is empty or not within partition key range {:?}.",
            min.hex(),
            max.hex(),
            container.range_id(range)
        )));
    }
    Ok(Some(EpkFilter::Range(min, max)))
}

fn reply(
    container: &Arc<Container>,
    scope: &Scope,
    page: Page,
    work: u64,
    reads: Reads<'_, '_>,
    paths: [(&'static str, String); 2],
) -> Reply {
    let bytes = page.bytes;
    let mut body = Vec::with_capacity(bytes + page.items.len() + 64);
    body.extend_from_slice(format!("{{\"_rid\":\"{}\",\"Documents\":[", container.rid).as_bytes());
    for (i, item) in page.items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.extend_from_slice(format!("],\"_count\":{}}}", page.items.len()).as_bytes());
    let done = charge::QueryWork {
        read: page.scanned,
        loaded: page.loaded.unwrap_or(page.scanned),
        lookups: page.lookups,
        work,
    };
    let charged = charge::query(done, page.items.iter().map(|i| i.len()));
    let mut reply = Reply::json(200, body.into(), charged)
        .header(headers::ITEM_COUNT, page.items.len().to_string())
        .header(
            headers::SESSION_TOKEN,
            reads.session_tokens.into_inner().join(","),
        );
    if let [range] = scope.ranges.as_slice() {
        reply = reply.header(headers::PARTITION_KEY_RANGE_ID, container.range_id(*range));
        for (name, value) in reads.replica.into_inner().iter().flat_map(replica_headers) {
            reply = reply.header(name, value);
        }
    }
    for (name, value) in paths {
        reply = reply.header(name, value);
    }
    if let Some(token) = page.next {
        reply = reply.header(headers::CONTINUATION, token.encode());
    }
    reply
}
