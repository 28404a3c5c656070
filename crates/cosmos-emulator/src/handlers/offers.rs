//! Throughput offers: `/offers` (feed and the SDKs' offer queries), `/offers/{id}` (read,
//! replace), and the offers databases and containers get when they are created.

use bytes::Bytes;
use serde_json::Value;

use super::{etag_read, feed_body};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::{offer_splits, throughput_buckets, Offer, Throughput};

/// The RU/s a container gets when neither it nor its database names any.
pub(super) const DEFAULT_CONTAINER_THROUGHPUT: u64 = 400;

/// The throughput a create request asks for (`x-ms-offer-throughput` or
/// `x-ms-cosmos-offer-autopilot-settings`); 400 when it is malformed or out of range.
pub(super) fn requested(ctx: &RequestCtx<'_>) -> Result<Option<Throughput>, ApiError> {
    Throughput::from_headers(
        ctx.header(headers::OFFER_THROUGHPUT),
        ctx.header(headers::OFFER_AUTOPILOT),
    )
    .map_err(ApiError::bad_request)
}

fn feed(offers: &[Offer]) -> Reply {
    let bodies: Vec<Bytes> = offers.iter().map(Offer::body).collect();
    let refs: Vec<&Bytes> = bodies.iter().collect();
    Reply::json(200, feed_body("", "Offers", &refs), charge::metadata())
        .header(headers::ITEM_COUNT, offers.len().to_string())
}

/// GET /offers
pub(super) fn list(ctx: &RequestCtx<'_>) -> Reply {
    feed(&ctx.shared.store.offers.list())
}

/// POST /offers with a query: the offers it selects (see [`super::metadata_query`]).
pub(super) fn query(ctx: &RequestCtx<'_>) -> Result<Reply, ApiError> {
    let bodies: Vec<Bytes> = ctx
        .shared
        .store
        .offers
        .list()
        .iter()
        .map(Offer::body)
        .collect();
    super::metadata_query::answer(ctx, "", "Offers", &bodies)
}

/// GET /offers/{id}
pub(super) fn read(ctx: &RequestCtx<'_>, id: &str) -> Result<Reply, ApiError> {
    let offer = ctx
        .shared
        .store
        .offers
        .get(id)
        .ok_or_else(ApiError::missing_entity)?;
    Ok(with_offer_state(
        etag_read(ctx, &offer.body(), &offer.etag),
        &offer,
    ))
}

/// `x-ms-offer-replace-pending` (true while the splits a raise asked for are under way) and
/// `x-ms-cosmos-min-throughput` (the least RU/s a replace of an offer of this kind may ask for),
/// which the service sends with an offer's read and replace and the SDKs surface on their
/// throughput responses.
fn with_offer_state(reply: Reply, offer: &Offer) -> Reply {
    reply
        .header(
            headers::OFFER_REPLACE_PENDING,
            if offer.replace_pending {
                "true"
            } else {
                "false"
            },
        )
        .header(
            headers::OFFER_MIN_THROUGHPUT,
            offer.throughput.minimum().to_string(),
        )
}

fn flag(ctx: &RequestCtx<'_>, name: &str) -> bool {
    ctx.header(name)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// PUT /offers/{id}: the body is the offer with its `content` changed. Manual and autoscale
/// offers keep their kind unless the request carries the matching migration header. The content's
/// `throughputBuckets` replace the offer's bucket settings (a content without them removes them);
/// a change of them within the store's `bucket_change_interval` of the last is a 429/3213.
pub(super) fn replace(ctx: &RequestCtx<'_>, id: &str) -> Result<Reply, ApiError> {
    let body: Value = serde_json::from_slice(&ctx.body)
        .map_err(|e| ApiError::bad_request(format!("The offer is invalid JSON: {e}")))?;
    let content = body
        .get("content")
        .ok_or_else(|| ApiError::bad_request("The offer needs its \"content\"."))?;
    let to_autoscale = flag(ctx, headers::MIGRATE_OFFER_TO_AUTOSCALE);
    let to_manual = flag(ctx, headers::MIGRATE_OFFER_TO_MANUAL);
    let buckets = throughput_buckets::from_content(content).map_err(ApiError::bad_request)?;
    let store = &ctx.shared.store;
    let mut offer = store.offers.replace(
        id,
        |now| now.replaced_by(content, to_autoscale, to_manual),
        buckets,
        ctx.header(headers::IF_MATCH),
        ctx.now,
        ctx.shared.store.bucket_change_interval,
    )?;
    // A raise past what the container's ranges hold splits them shortly after.
    if !offer.replace_pending && offer_splits::wants_split(store, &offer) {
        offer = store.offers.begin_pending(&offer.id).unwrap_or(offer);
    }
    let reply =
        Reply::json(200, offer.body(), charge::metadata()).header(headers::ETAG, &offer.etag);
    Ok(with_offer_state(reply, &offer))
}
