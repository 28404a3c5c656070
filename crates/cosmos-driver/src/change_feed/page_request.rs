//! The request for one change-feed page, with the headers the official SDKs send: the mode
//! (`A-IM`), where to start (`If-None-Match`, `If-Modified-Since`), the range
//! (`x-ms-documentdb-partitionkeyrangeid`, plus an effective-partition-key span when the feed
//! range is part of it) or the partition key.

use http::{HeaderName, HeaderValue};

use super::feed_state::{NextRequest, PageStart};
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::protocol::{header_names as h, ContainerReference};

/// `A-IM`
pub(crate) const A_IM: HeaderName = HeaderName::from_static("a-im");
/// `x-ms-cosmos-changefeed-wire-format-version`
pub(crate) const WIRE_FORMAT_VERSION: HeaderName =
    HeaderName::from_static("x-ms-cosmos-changefeed-wire-format-version");
/// `x-ms-read-key-type`
pub(crate) const READ_KEY_TYPE: HeaderName = h::READ_KEY_TYPE;
/// `x-ms-start-epk`
pub(crate) const START_EPK: HeaderName = h::START_EPK;
/// `x-ms-end-epk`
pub(crate) const END_EPK: HeaderName = h::END_EPK;

/// The all-versions-and-deletes wire format this driver reads.
const WIRE_FORMAT: &str = "2021-09-15";

fn value(text: &str) -> Result<HeaderValue, CosmosError> {
    HeaderValue::from_str(text).map_err(|_| {
        CosmosError::invalid_input("a change feed position or range is not a valid header value")
    })
}

/// The page request for `next` on `container`.
pub(crate) fn page_operation(
    container: &ContainerReference,
    next: &NextRequest,
    all_versions: bool,
    max_item_count: Option<u32>,
) -> Result<CosmosOperation, CosmosError> {
    let mut op = CosmosOperation::read_all_items(container.clone());
    op = if all_versions {
        op.with_header(A_IM, HeaderValue::from_static("Full-Fidelity Feed"))
            .with_header(WIRE_FORMAT_VERSION, HeaderValue::from_static(WIRE_FORMAT))
    } else {
        op.with_header(A_IM, HeaderValue::from_static("Incremental feed"))
    };
    let start = match next {
        NextRequest::Range {
            range_id,
            part,
            start,
        } => {
            op = op.with_header(h::PARTITION_KEY_RANGE_ID, value(range_id)?);
            if let Some(part) = part {
                op = op
                    .with_header(
                        READ_KEY_TYPE,
                        HeaderValue::from_static("EffectivePartitionKeyRange"),
                    )
                    .with_header(START_EPK, value(part.min())?)
                    .with_header(END_EPK, value(part.max())?);
            }
            start
        }
        NextRequest::PartitionKey {
            partition_key,
            start,
        } => {
            op = op.with_partition_key(partition_key.clone());
            start
        }
    };
    op = match start {
        PageStart::After(etag) => op.with_header(http::header::IF_NONE_MATCH, value(etag)?),
        PageStart::Beginning => op,
        PageStart::Now => {
            op.with_header(http::header::IF_NONE_MATCH, HeaderValue::from_static("*"))
        }
        PageStart::Since(t) => op.with_header(
            http::header::IF_MODIFIED_SINCE,
            value(&httpdate::fmt_http_date(*t))?,
        ),
    };
    if let Some(n) = max_item_count {
        op = op.with_max_item_count(n);
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::change_feed::FeedRange;
    use crate::protocol::DatabaseReference;

    fn container() -> ContainerReference {
        DatabaseReference::new("d").unwrap().container("c").unwrap()
    }

    fn headers(op: &CosmosOperation) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = op
            .extra_headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        out.sort();
        out
    }

    /// A request, whether it is all-versions, and the headers it must carry.
    type Row = (NextRequest, bool, Vec<(&'static str, &'static str)>);

    #[test]
    fn headers_by_request() {
        let part = FeedRange::new("10", "20").unwrap();
        let table: Vec<Row> = vec![
            (
                NextRequest::Range {
                    range_id: "3".into(),
                    part: None,
                    start: PageStart::Beginning,
                },
                false,
                vec![
                    ("a-im", "Incremental feed"),
                    ("x-ms-documentdb-partitionkeyrangeid", "3"),
                ],
            ),
            (
                NextRequest::Range {
                    range_id: "3".into(),
                    part: Some(part),
                    start: PageStart::After("\"7\"".into()),
                },
                true,
                vec![
                    ("a-im", "Full-Fidelity Feed"),
                    ("if-none-match", "\"7\""),
                    ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
                    ("x-ms-documentdb-partitionkeyrangeid", "3"),
                    ("x-ms-end-epk", "20"),
                    ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                    ("x-ms-start-epk", "10"),
                ],
            ),
            (
                NextRequest::Range {
                    range_id: "0".into(),
                    part: None,
                    start: PageStart::Now,
                },
                false,
                vec![
                    ("a-im", "Incremental feed"),
                    ("if-none-match", "*"),
                    ("x-ms-documentdb-partitionkeyrangeid", "0"),
                ],
            ),
            (
                NextRequest::Range {
                    range_id: "0".into(),
                    part: None,
                    start: PageStart::Since(UNIX_EPOCH + Duration::from_secs(86_400)),
                },
                false,
                vec![
                    ("a-im", "Incremental feed"),
                    ("if-modified-since", "Fri, 02 Jan 1970 00:00:00 GMT"),
                    ("x-ms-documentdb-partitionkeyrangeid", "0"),
                ],
            ),
        ];
        for (next, all_versions, want) in table {
            let op = page_operation(&container(), &next, all_versions, None).unwrap();
            let want: Vec<(String, String)> = want
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect();
            assert_eq!(headers(&op), want, "{next:?}");
        }
    }

    #[test]
    fn a_partition_key_feed_names_its_key_and_a_page_size() {
        let next = NextRequest::PartitionKey {
            partition_key: "p".into(),
            start: PageStart::Beginning,
        };
        let op = page_operation(&container(), &next, false, Some(5)).unwrap();
        assert_eq!(op.partition_key().unwrap().as_json(), r#"["p"]"#);
        assert!(headers(&op).contains(&("x-ms-max-item-count".into(), "5".into())));
    }
}
