//! Throughput buckets: a container's offer may cap up to five buckets (ids 1 to 5) at a percentage
//! of its RU/s each (`content.throughputBuckets: [{"id": 1, "maxThroughputPercentage": 20}]`). A
//! request names its bucket with `x-ms-cosmos-throughput-bucket`. Nothing is reserved for a
//! bucket: the cap only limits what requests naming it may use. A request without a bucket, or
//! naming a bucket the offer does not configure, is not limited by buckets; a bucket id outside
//! 1 to 5 is refused. The decisions here are pure; `handlers::throttle` applies them.

use serde_json::{json, Value};

/// The lowest and highest bucket id.
pub(crate) const MIN_ID: u8 = 1;
pub(crate) const MAX_ID: u8 = 5;

/// One bucket's cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThroughputBucket {
    /// 1 to 5.
    pub id: u8,
    /// The most of the container's RU/s the bucket may use: 1 to 100.
    pub max_percent: u8,
}

/// The name of the offer content's field.
const FIELD: &str = "throughputBuckets";

/// The buckets an offer's `content` configures (none when it has no `throughputBuckets`), sorted by
/// id; why not when the field is malformed, an id is outside 1 to 5 or repeated, or a percentage
/// is outside 1 to 100.
pub(crate) fn from_content(content: &Value) -> Result<Vec<ThroughputBucket>, String> {
    let Some(field) = content.get(FIELD) else {
        return Ok(Vec::new());
    };
    let list = field.as_array().ok_or_else(|| {
        format!("{FIELD} must be a list of {{\"id\": 1..5, \"maxThroughputPercentage\": 1..100}}.")
    })?;
    let mut buckets: Vec<ThroughputBucket> = Vec::with_capacity(list.len().min(5));
    for entry in list {
        let number = |name: &str, low: u64, high: u64| {
            entry
                .get(name)
                .and_then(Value::as_u64)
                .filter(|n| (low..=high).contains(n))
                .map(|n| n as u8)
                .ok_or_else(|| {
                    format!(
                        "Each of {FIELD} needs \"{name}\": a whole number from {low} to {high}."
                    )
                })
        };
        let id = number("id", MIN_ID.into(), MAX_ID.into())?;
        let max_percent = number("maxThroughputPercentage", 1, 100)?;
        if buckets.iter().any(|b| b.id == id) {
            return Err(format!("{FIELD} names bucket {id} more than once."));
        }
        buckets.push(ThroughputBucket { id, max_percent });
    }
    buckets.sort_by_key(|b| b.id);
    Ok(buckets)
}

/// `buckets` as an offer's `content` field; `None` when there are none (the field is left out).
pub(crate) fn to_content(buckets: &[ThroughputBucket]) -> Option<Value> {
    (!buckets.is_empty()).then(|| {
        Value::Array(
            buckets
                .iter()
                .map(|b| json!({"id": b.id, "maxThroughputPercentage": b.max_percent}))
                .collect(),
        )
    })
}

/// The bucket id a request's header names: 1 to 5, else why not.
pub(crate) fn parse_header(value: &str) -> Result<u8, String> {
    value
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|id| (MIN_ID..=MAX_ID).contains(id))
        .ok_or_else(|| format!("a throughput bucket is a whole number from {MIN_ID} to {MAX_ID}"))
}

/// The RU a request naming `requested` may see its bucket use in one second on a range with
/// `budget` RU per second: its bucket's percentage of the budget; `None` when the request is not
/// limited by a bucket (it names none, or one `buckets` does not configure).
pub(crate) fn cap(buckets: &[ThroughputBucket], requested: Option<u8>, budget: f64) -> Option<f64> {
    let id = requested?;
    let bucket = buckets.iter().find(|b| b.id == id)?;
    Some(budget * f64::from(bucket.max_percent) / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_content_is_read_and_written_back() {
        type Row<'a> = (Value, Result<Vec<(u8, u8)>, &'a str>);
        let table: Vec<Row> = vec![
            (json!({}), Ok(vec![])),
            (json!({FIELD: []}), Ok(vec![])),
            (
                json!({FIELD: [{"id": 3, "maxThroughputPercentage": 50}, {"id": 1, "maxThroughputPercentage": 20}]}),
                Ok(vec![(1, 20), (3, 50)]),
            ),
            (
                json!({FIELD: [{"id": 5, "maxThroughputPercentage": 100}]}),
                Ok(vec![(5, 100)]),
            ),
            (json!({FIELD: {"id": 1}}), Err("must be a list")),
            (
                json!({FIELD: [{"id": 0, "maxThroughputPercentage": 20}]}),
                Err("\"id\""),
            ),
            (
                json!({FIELD: [{"id": 6, "maxThroughputPercentage": 20}]}),
                Err("\"id\""),
            ),
            (
                json!({FIELD: [{"id": "1", "maxThroughputPercentage": 20}]}),
                Err("\"id\""),
            ),
            (
                json!({FIELD: [{"id": 1, "maxThroughputPercentage": 0}]}),
                Err("maxThroughputPercentage"),
            ),
            (
                json!({FIELD: [{"id": 1, "maxThroughputPercentage": 101}]}),
                Err("maxThroughputPercentage"),
            ),
            (
                json!({FIELD: [{"id": 1, "maxThroughputPercentage": 12.5}]}),
                Err("maxThroughputPercentage"),
            ),
            (json!({FIELD: [{"id": 1}]}), Err("maxThroughputPercentage")),
            (
                json!({FIELD: [{"id": 2, "maxThroughputPercentage": 10}, {"id": 2, "maxThroughputPercentage": 30}]}),
                Err("more than once"),
            ),
        ];
        for (content, want) in table {
            match (from_content(&content), want) {
                (Ok(got), Ok(want)) => {
                    let pairs: Vec<(u8, u8)> = got.iter().map(|b| (b.id, b.max_percent)).collect();
                    assert_eq!(pairs, want, "{content}");
                    let back = to_content(&got).map(|v| json!({FIELD: v}));
                    assert_eq!(
                        back.map(|v| from_content(&v).unwrap()).unwrap_or_default(),
                        got
                    );
                }
                (Err(e), Err(part)) => assert!(e.contains(part), "{content}: {e}"),
                (got, want) => panic!("{content}: got {got:?}, want {want:?}"),
            }
        }
        assert_eq!(to_content(&[]), None);
    }

    #[test]
    fn a_header_names_a_bucket_from_1_to_5() {
        let table: &[(&str, Option<u8>)] = &[
            ("1", Some(1)),
            (" 5 ", Some(5)),
            ("0", None),
            ("6", None),
            ("-1", None),
            ("256", None),
            ("one", None),
            ("", None),
        ];
        for &(text, want) in table {
            assert_eq!(parse_header(text).ok(), want, "{text:?}");
        }
    }

    #[test]
    fn only_a_configured_bucket_is_capped_at_its_percentage_of_the_budget() {
        let buckets = [
            ThroughputBucket {
                id: 1,
                max_percent: 20,
            },
            ThroughputBucket {
                id: 4,
                max_percent: 100,
            },
        ];
        let table: &[(Option<u8>, f64, Option<f64>)] = &[
            (Some(1), 400.0, Some(80.0)),
            (Some(1), 100.0, Some(20.0)),
            (Some(4), 400.0, Some(400.0)),
            // A bucket the offer does not configure uses the container's throughput.
            (Some(2), 400.0, None),
            // A request without a bucket is not limited by buckets.
            (None, 400.0, None),
        ];
        for &(requested, budget, want) in table {
            assert_eq!(cap(&buckets, requested, budget), want, "{requested:?}");
        }
        assert_eq!(cap(&[], Some(1), 400.0), None);
    }
}
