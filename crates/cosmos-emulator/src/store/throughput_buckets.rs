//! Throughput buckets: a container's offer may cap up to five buckets (ids 1 to 5) at a percentage
//! of its RU/s each (`content.throughputBuckets: [{"id": 1, "maxThroughputPercentage": 20}]`). A
//! request names its bucket with `x-ms-cosmos-throughput-bucket`. Nothing is reserved for a
//! bucket: the cap only limits what requests naming it may use. One configured bucket may be the
//! default (`"isDefaultBucket": true`): a request naming no bucket is assigned to it. A request
//! naming no bucket when there is no default, or naming a bucket the offer does not configure, is
//! not limited by buckets (it uses the container's throughput); a bucket id outside 1 to 5 is
//! refused. The decisions here are pure; `handlers::throttle` applies them.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

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
    /// Whether requests naming no bucket are assigned to this one (at most one bucket is).
    pub is_default: bool,
}

/// The name of the offer content's field.
const FIELD: &str = "throughputBuckets";

/// The name of a bucket's default flag.
const DEFAULT_FLAG: &str = "isDefaultBucket";

/// The buckets an offer's `content` configures (none when it has no `throughputBuckets`), sorted by
/// id; why not when the field is malformed, an id is outside 1 to 5 or repeated, a percentage
/// is outside 1 to 100, a default flag is not a boolean or more than one bucket is the default.
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
        let is_default = match entry.get(DEFAULT_FLAG) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => {
                return Err(format!(
                    "\"{DEFAULT_FLAG}\" of {FIELD} must be true or false."
                ))
            }
        };
        if is_default && buckets.iter().any(|b| b.is_default) {
            return Err(format!(
                "{FIELD} marks more than one bucket with \"{DEFAULT_FLAG}\": true; at most one may be the default."
            ));
        }
        buckets.push(ThroughputBucket {
            id,
            max_percent,
            is_default,
        });
    }
    buckets.sort_by_key(|b| b.id);
    Ok(buckets)
}

/// `buckets` as an offer's `content` field (the default bucket with `"isDefaultBucket": true`);
/// `None` when there are none (the field is left out).
pub(crate) fn to_content(buckets: &[ThroughputBucket]) -> Option<Value> {
    (!buckets.is_empty()).then(|| {
        Value::Array(
            buckets
                .iter()
                .map(|b| {
                    let mut v = json!({"id": b.id, "maxThroughputPercentage": b.max_percent});
                    if b.is_default {
                        v[DEFAULT_FLAG] = Value::Bool(true);
                    }
                    v
                })
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

/// The configured bucket a request naming `requested` (its header; `None` when it names none) is
/// counted in: the one it names when `buckets` configures it, the default bucket when it names
/// none; `None` when it is not limited by a bucket (it names one that is not configured, or names
/// none and there is no default).
pub(crate) fn resolve(
    buckets: &[ThroughputBucket],
    requested: Option<u8>,
) -> Option<ThroughputBucket> {
    match requested {
        Some(id) => buckets.iter().find(|b| b.id == id).copied(),
        None => buckets.iter().find(|b| b.is_default).copied(),
    }
}

/// The RU `bucket` may use in one second on a range with `budget` RU per second: its percentage
/// of the budget.
pub(crate) fn cap(bucket: &ThroughputBucket, budget: f64) -> f64 {
    budget * f64::from(bucket.max_percent) / 100.0
}

/// How often a container's bucket settings may change by default (the service's documented
/// "once every 10 minutes").
pub(crate) const DEFAULT_CHANGE_INTERVAL: Duration = Duration::from_secs(600);

/// Whether an offer replace that sets the buckets `new` where `old` are configured may go ahead,
/// the settings having last changed at `last_change` (never: `None`) and changes being allowed
/// once per `interval`: `Ok(true)` when it changes them (the clock starts again), `Ok(false)` when
/// it keeps them as they are (a replace of the RU/s alone is not limited), `Err(wait)` with the
/// time left when it changes them too soon. The first settings of a container that never had any
/// are a change, so they start the clock.
pub(crate) fn change_allowed(
    old: &[ThroughputBucket],
    new: &[ThroughputBucket],
    last_change: Option<Instant>,
    now: Instant,
    interval: Duration,
) -> Result<bool, Duration> {
    if old == new {
        return Ok(false);
    }
    let Some(last) = last_change else {
        return Ok(true);
    };
    let since = now.saturating_duration_since(last);
    if since >= interval {
        Ok(true)
    } else {
        Err(interval - since)
    }
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
                json!({FIELD: [{"id": 1, "maxThroughputPercentage": 20, "isDefaultBucket": "yes"}]}),
                Err("isDefaultBucket"),
            ),
            (
                json!({FIELD: [{"id": 1, "maxThroughputPercentage": 20, "isDefaultBucket": true}, {"id": 2, "maxThroughputPercentage": 20, "isDefaultBucket": true}]}),
                Err("more than one"),
            ),
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
    fn one_bucket_may_be_the_default_and_is_written_back_as_such() {
        type Row = (Value, Option<u8>);
        let b = |id: u8, flag: Value| json!({"id": id, "maxThroughputPercentage": 20, DEFAULT_FLAG: flag});
        let table: Vec<Row> = vec![
            (
                json!({FIELD: [b(1, json!(false)), b(2, json!(null))]}),
                None,
            ),
            (
                json!({FIELD: [b(3, json!(true)), b(1, json!(false))]}),
                Some(3),
            ),
            (json!({FIELD: [b(5, json!(true))]}), Some(5)),
        ];
        for (content, want) in table {
            let got = from_content(&content).unwrap();
            let default = got.iter().find(|b| b.is_default).map(|b| b.id);
            assert_eq!(default, want, "{content}");
            let written = to_content(&got).unwrap();
            let flagged: Vec<u64> = written
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v.get(DEFAULT_FLAG) == Some(&json!(true)))
                .filter_map(|v| v["id"].as_u64())
                .collect();
            assert_eq!(flagged, want.map(u64::from).into_iter().collect::<Vec<_>>());
            assert_eq!(from_content(&json!({FIELD: written})).unwrap(), got);
        }
    }

    #[test]
    fn bucket_settings_change_at_most_once_per_interval() {
        let b = |id, max_percent, is_default| ThroughputBucket {
            id,
            max_percent,
            is_default,
        };
        let none: &[ThroughputBucket] = &[];
        let one = [b(1, 20, false)];
        let wider = [b(1, 30, false)];
        let as_default = [b(1, 20, true)];
        let t0 = Instant::now();
        let min = Duration::from_secs(60);
        let ten = Duration::from_secs(600);
        type Row<'a> = (
            &'a [ThroughputBucket],
            &'a [ThroughputBucket],
            Option<Duration>,
            Duration,
            Result<bool, Duration>,
        );
        // (old, new, last change after t0, now after t0, decision) with a 10-minute interval.
        let table: &[Row] = &[
            // No buckets before or after: nothing changes, whenever.
            (none, none, None, min, Ok(false)),
            // The first settings of a container that never had any start the clock.
            (none, &one, None, min, Ok(true)),
            // The same settings again are not a change, even just after one.
            (&one, &one, Some(min), min, Ok(false)),
            // Another percentage, the default flag, or removing them, within 10 minutes: wait.
            (&one, &wider, Some(Duration::ZERO), min, Err(ten - min)),
            (&one, &as_default, Some(Duration::ZERO), min, Err(ten - min)),
            (&one, none, Some(Duration::ZERO), min * 9, Err(min)),
            (none, &one, Some(Duration::ZERO), Duration::ZERO, Err(ten)),
            // At or after 10 minutes: allowed, and the clock starts again.
            (&one, &wider, Some(Duration::ZERO), ten, Ok(true)),
            (&one, none, Some(min), ten + min * 5, Ok(true)),
            // Settings restored from a data directory have no change time: allowed.
            (&one, &wider, None, Duration::ZERO, Ok(true)),
        ];
        for (i, &(old, new, last, now, want)) in table.iter().enumerate() {
            let got = change_allowed(old, new, last.map(|d| t0 + d), t0 + now, ten);
            assert_eq!(got, want, "row {i}");
        }
        assert_eq!(
            change_allowed(&one, &wider, Some(t0), t0, Duration::ZERO),
            Ok(true)
        );
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
        let bucket = |id, max_percent, is_default| ThroughputBucket {
            id,
            max_percent,
            is_default,
        };
        let plain = [bucket(1, 20, false), bucket(4, 100, false)];
        let with_default = [bucket(1, 20, false), bucket(3, 50, true)];
        type Row<'a> = (&'a [ThroughputBucket], Option<u8>, f64, Option<f64>);
        let table: &[Row] = &[
            (&plain, Some(1), 400.0, Some(80.0)),
            (&plain, Some(1), 100.0, Some(20.0)),
            (&plain, Some(4), 400.0, Some(400.0)),
            // A bucket the offer does not configure uses the container's throughput.
            (&plain, Some(2), 400.0, None),
            // A request without a bucket, with no default, is not limited by buckets.
            (&plain, None, 400.0, None),
            // With a default, a request without a bucket is capped by the default's percentage.
            (&with_default, None, 400.0, Some(200.0)),
            // Naming a bucket still picks that bucket, default or not.
            (&with_default, Some(1), 400.0, Some(80.0)),
            (&with_default, Some(3), 400.0, Some(200.0)),
            // An unconfigured bucket is not moved to the default: it uses the container's RU/s.
            (&with_default, Some(2), 400.0, None),
            (&[], Some(1), 400.0, None),
            (&[], None, 400.0, None),
        ];
        for &(buckets, requested, budget, want) in table {
            let got = resolve(buckets, requested).map(|b| cap(&b, budget));
            assert_eq!(got, want, "{buckets:?} {requested:?}");
        }
        assert_eq!(resolve(&with_default, None).map(|b| b.id), Some(3));
    }
}
