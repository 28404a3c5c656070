//! `CosmosOperation::query_items`: one query page as an operation value, for those who drive
//! pages themselves. Streams over whole results are in [`crate::ContainerClient::query_items`].

use http::HeaderValue;

use crate::error::CosmosError;
use crate::operation::{CosmosOperation, OperationTarget};
use crate::protocol::{ContainerReference, OperationType};
use crate::query::page_source::{IS_QUERY, QUERY_CONTENT_TYPE};
use crate::query::query_spec::Query;

impl CosmosOperation {
    /// One page of `query` on `container`, with the query headers the service expects. Scope it
    /// with `with_partition_key` (single partition); page with `with_max_item_count` and
    /// `with_continuation` (the service's own token). Executing it answers one service page: a
    /// cross-partition query that needs a plan is refused by the service, so use
    /// [`crate::ContainerClient::query_items`] for those.
    pub fn query_items(container: ContainerReference, query: &Query) -> Result<Self, CosmosError> {
        Ok(
            CosmosOperation::new(OperationType::Query, OperationTarget::Items(container))
                .with_body(query.to_body()?)
                .with_header(IS_QUERY, HeaderValue::from_static("True"))
                .with_header(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static(QUERY_CONTENT_TYPE),
                ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_operation_carries_the_query_headers_and_body() {
        let c = crate::protocol::DatabaseReference::new("d")
            .unwrap()
            .container("c")
            .unwrap();
        let q = Query::new("SELECT * FROM c WHERE c.n = @n")
            .with_parameter("@n", 1)
            .unwrap();
        let op = CosmosOperation::query_items(c, &q)
            .unwrap()
            .with_partition_key("p");
        assert_eq!(op.operation_type(), OperationType::Query);
        assert_eq!(op.method(), http::Method::POST);
        let headers = op.extra_headers();
        assert!(headers
            .iter()
            .any(|(n, v)| n == "x-ms-documentdb-isquery" && v == "True"));
        assert!(headers
            .iter()
            .any(|(n, v)| n == "content-type" && v == QUERY_CONTENT_TYPE));
        assert_eq!(op.body().unwrap(), &q.to_body().unwrap());
        op.validate().unwrap();
        assert!(CosmosOperation::query_items(
            crate::protocol::DatabaseReference::new("d")
                .unwrap()
                .container("c")
                .unwrap(),
            &Query::new(" ")
        )
        .is_err());
    }
}
