//! Reading and replacing the throughput of a database or container through its offer: find the
//! offer by the resource's `_rid` (the query the SDKs send to `/offers`), then read or replace it.
//! Every request goes through the driver's `execute`, so each is retried and, being a metadata
//! read, hedged like a point read.

use serde::Deserialize;

use super::throughput_response::ThroughputResponse;
use crate::error::ErrorKind;
use crate::protocol::{CosmosStatus, OfferId};
use crate::resources::{OfferDocument, ThroughputProperties};
use crate::{CosmosDriver, CosmosError, CosmosOperation, OperationOptions};

#[derive(Deserialize)]
struct OfferFeed {
    #[serde(rename = "Offers")]
    offers: Vec<serde_json::Value>,
}

/// What a resource's read gives the offer lookup.
#[derive(Deserialize)]
struct ResourceIds {
    #[serde(rename = "_rid")]
    rid: String,
}

/// The resource id of the database or container `read` reads.
pub(super) async fn resource_id(
    driver: &CosmosDriver,
    read: CosmosOperation,
    options: &OperationOptions,
) -> Result<String, CosmosError> {
    let response = driver.execute(read, options).await?;
    Ok(response.json::<ResourceIds>()?.rid)
}

/// The offer of the resource with `_rid` `rid`; `what` names it in the error when it has none.
async fn find_offer(
    driver: &CosmosDriver,
    rid: &str,
    what: &str,
    options: &OperationOptions,
) -> Result<(OfferDocument, f64), CosmosError> {
    let response = driver
        .execute(CosmosOperation::query_offer_of(rid)?, options)
        .await?;
    let charge = response.request_charge();
    let feed: OfferFeed = response.json()?;
    let Some(first) = feed.offers.into_iter().next() else {
        return Err(CosmosError::new(
            ErrorKind::Service,
            format!("{what} has no throughput of its own (it shares its database's, or it is serverless)"),
        )
        .with_status(CosmosStatus::new(404, 0)));
    };
    let body = serde_json::to_vec(&first).unwrap_or_default();
    Ok((OfferDocument::from_json(&body)?, charge))
}

/// The throughput of the resource with `_rid` `rid`.
pub(super) async fn read_throughput(
    driver: &CosmosDriver,
    rid: &str,
    what: &str,
    options: &OperationOptions,
) -> Result<ThroughputResponse, CosmosError> {
    let (offer, _) = find_offer(driver, rid, what, options).await?;
    let id = OfferId::new(&offer.id)?;
    let response = driver
        .execute(CosmosOperation::read_offer(id), options)
        .await?;
    ThroughputResponse::from_response(response)
}

/// Sets the throughput of the resource with `_rid` `rid` to `throughput`. The service keeps an
/// offer manual or autoscale: switching between them is refused (a migration, not a replace).
pub(super) async fn replace_throughput(
    driver: &CosmosDriver,
    rid: &str,
    what: &str,
    throughput: ThroughputProperties,
    options: &OperationOptions,
) -> Result<ThroughputResponse, CosmosError> {
    let (offer, _) = find_offer(driver, rid, what, options).await?;
    let id = OfferId::new(&offer.id)?;
    let next = offer.with_throughput(throughput);
    let op = CosmosOperation::replace_offer(id, Vec::new()).with_json_body(&next)?;
    let response = driver.execute(op, options).await?;
    ThroughputResponse::from_response(response)
}
