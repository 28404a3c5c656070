//! An operation spread over partition key ranges: one request per range, each through the
//! pipeline entry, combined by the operation's own plan. Cross-partition queries, read many and
//! bulk are its users to come; until then only its tests call it.
#![cfg_attr(not(test), allow(dead_code))]

use super::pipeline_entry::PipelineEntry;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::response::CosmosResponse;

/// How one operation is spread over ranges and its answers combined.
pub(crate) trait RangeFanOut {
    /// The combined answer.
    type Output;
    /// The request for one range (it names the range, e.g. with the partition key range id
    /// header).
    fn request_for(&self, range_id: &str) -> Result<CosmosOperation, CosmosError>;
    /// Takes in one range's answer.
    fn absorb(&mut self, range_id: &str, response: CosmosResponse) -> Result<(), CosmosError>;
    /// The combined answer once every range has answered.
    fn finish(self) -> Self::Output;
}

/// Sends `plan`'s request for each range in turn and combines the answers; the first error ends
/// the operation.
pub(crate) async fn fan_out<E: PipelineEntry, F: RangeFanOut>(
    entry: &E,
    range_ids: &[String],
    mut plan: F,
    options: &OperationOptions,
) -> Result<F::Output, CosmosError> {
    for range_id in range_ids {
        let request = plan.request_for(range_id)?;
        let response = entry.send(&request, options).await?;
        plan.absorb(range_id, response)?;
    }
    Ok(plan.finish())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;
    use crate::operations::test_entry::{Answer, TableEntry};
    use crate::protocol::header_names as h;
    use crate::{ContainerReference, DatabaseReference};

    fn container() -> ContainerReference {
        DatabaseReference::new("d").unwrap().container("c").unwrap()
    }

    /// A double of a plan: reads each range's feed (the range rides in the continuation so the
    /// double entry can tell ranges apart) and concatenates the bodies.
    struct Concatenate {
        seen: Vec<String>,
    }

    impl RangeFanOut for Concatenate {
        type Output = Vec<String>;
        fn request_for(&self, range_id: &str) -> Result<CosmosOperation, CosmosError> {
            CosmosOperation::read_all_items(container())
                .with_header(
                    h::PARTITION_KEY_RANGE_ID,
                    HeaderValue::from_str(range_id).expect("a header value"),
                )
                .with_continuation(range_id)
        }
        fn absorb(&mut self, range_id: &str, response: CosmosResponse) -> Result<(), CosmosError> {
            let body = String::from_utf8(response.body().to_vec()).expect("utf-8");
            self.seen.push(format!("{range_id}:{body}"));
            Ok(())
        }
        fn finish(self) -> Vec<String> {
            self.seen
        }
    }

    const FEED: &str = "read feed /dbs/d/colls/c/docs";

    #[tokio::test]
    async fn one_request_per_range_in_order_combined_by_the_plan() {
        let entry = TableEntry::default()
            .answer(FEED, Some("0"), Answer::Page("a", None))
            .answer(FEED, Some("1"), Answer::Page("b", None));
        let ranges = ["0".to_owned(), "1".to_owned()];
        let plan = Concatenate { seen: Vec::new() };
        let out = fan_out(&entry, &ranges, plan, &OperationOptions::default())
            .await
            .unwrap();
        assert_eq!(out, ["0:a", "1:b"]);
        assert_eq!(entry.sent().len(), 2);
    }

    #[tokio::test]
    async fn the_first_failing_range_ends_the_operation() {
        let entry = TableEntry::default()
            .answer(FEED, Some("0"), Answer::Fail(410))
            .answer(FEED, Some("1"), Answer::Page("b", None));
        let ranges = ["0".to_owned(), "1".to_owned()];
        let plan = Concatenate { seen: Vec::new() };
        let err = fan_out(&entry, &ranges, plan, &OperationOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(410));
        assert_eq!(entry.sent().len(), 1, "no request after the failure");
    }

    #[tokio::test]
    async fn no_ranges_no_requests() {
        let entry = TableEntry::default();
        let plan = Concatenate { seen: Vec::new() };
        let out = fan_out(&entry, &[], plan, &OperationOptions::default())
            .await
            .unwrap();
        assert!(out.is_empty());
        assert!(entry.sent().is_empty());
    }
}
