//! Reading and replacing the throughput of a database or container through its offer: find the
//! offer by the resource's `_rid` (the query the SDKs send to `/offers`), then read or replace it.
//! Every request goes through the dispatcher, so each is retried and, being a metadata read,
//! hedged like a point read. The answer is the offer read's or replace's response; the typed
//! handles read it as a `ThroughputResponse`.

use serde::Deserialize;

use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::operations::run;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::{ContainerReference, CosmosStatus, DatabaseReference, OfferId};
use crate::resources::{OfferDocument, ThroughputBucketLimit, ThroughputProperties};
use crate::response::CosmosResponse;

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

/// A database or container whose throughput is read or replaced: how to read it (for its `_rid`)
/// and how errors name it.
pub(crate) struct OfferOwner {
    read: CosmosOperation,
    what: String,
}

impl OfferOwner {
    pub(crate) fn database(reference: &DatabaseReference) -> Self {
        Self {
            read: CosmosOperation::read_database(reference.clone()),
            what: format!("database {}", reference.link()),
        }
    }

    pub(crate) fn container(reference: &ContainerReference) -> Self {
        Self {
            read: CosmosOperation::read_container(reference.clone()),
            what: format!("container {}", reference.link()),
        }
    }

    /// The owner's offer, found by the owner's resource id.
    async fn offer(
        self,
        core: &DriverCore,
        options: &OperationOptions,
    ) -> Result<OfferDocument, CosmosError> {
        let response = run(core, self.read, options).await?;
        let rid = response.json::<ResourceIds>()?.rid;
        Ok(find_offer(core, &rid, &self.what, options).await?.0)
    }
}

/// The offer of the resource with `_rid` `rid`; `what` names it in the error when it has none.
async fn find_offer(
    core: &DriverCore,
    rid: &str,
    what: &str,
    options: &OperationOptions,
) -> Result<(OfferDocument, f64), CosmosError> {
    let response = run(core, CosmosOperation::query_offer_of(rid)?, options).await?;
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

/// The owner's throughput: the response of its offer's read.
pub(crate) async fn read_throughput(
    core: &DriverCore,
    owner: OfferOwner,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    let offer = owner.offer(core, options).await?;
    let id = OfferId::new(&offer.id)?;
    run(core, CosmosOperation::read_offer(id), options).await
}

/// Sets the owner's throughput to `throughput`. The service keeps an offer manual or autoscale:
/// switching between them is refused (a migration, not a replace).
pub(crate) async fn replace_throughput(
    core: &DriverCore,
    owner: OfferOwner,
    throughput: ThroughputProperties,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    let offer = owner.offer(core, options).await?;
    let id = OfferId::new(&offer.id)?;
    let next = offer.with_throughput(throughput);
    let op = CosmosOperation::replace_offer(id, Vec::new()).with_json_body(&next)?;
    run(core, op, options).await
}

/// Sets the caps of the owner's throughput buckets to `buckets` (empty: none), its throughput
/// unchanged.
pub(crate) async fn replace_throughput_buckets(
    core: &DriverCore,
    owner: OfferOwner,
    buckets: Vec<ThroughputBucketLimit>,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    let offer = owner.offer(core, options).await?;
    let id = OfferId::new(&offer.id)?;
    let next = offer.with_throughput_buckets(buckets);
    let op = CosmosOperation::replace_offer(id, Vec::new()).with_json_body(&next)?;
    run(core, op, options).await
}
