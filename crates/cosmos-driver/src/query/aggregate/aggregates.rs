//! Combining the partial aggregates each range returns into the query's result: COUNT and SUM
//! add, MIN and MAX keep the extreme in the service's value order, AVG divides the summed sums by
//! the summed counts. Integer sums stay exact until they overflow, then continue as doubles.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::query::continuation::token_text::{float_text, opt_value_text};
use crate::query::merge::value_order::compare_values;
use crate::query::plan::query_plan::AggregateKind;

/// A running numeric total: exact while every addend is an integer and nothing overflows.
/// Serialized (in continuation tokens) as `{"i": n}` or `{"f": x}`; an infinite double as a word.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Total {
    /// Exact.
    #[serde(rename = "i")]
    Int(i64),
    /// Past the first fraction or overflow.
    #[serde(rename = "f", with = "float_text")]
    Float(f64),
}

impl Total {
    fn add(self, n: &Number) -> Total {
        match (self, n.as_i64()) {
            (Total::Int(a), Some(b)) => match a.checked_add(b) {
                Some(s) => Total::Int(s),
                None => Total::Float(a as f64 + b as f64),
            },
            (Total::Int(a), None) => Total::Float(a as f64 + n.as_f64().unwrap_or(0.0)),
            (Total::Float(a), _) => Total::Float(a + n.as_f64().unwrap_or(0.0)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Total::Int(i) => i as f64,
            Total::Float(f) => f,
        }
    }

    /// A sum as the service's SDKs merge it: an integer while every part was one, a double
    /// once any part was (the Python SDK answers `103.0` for whole sums of doubles).
    fn to_value(self) -> Option<Value> {
        match self {
            Total::Int(i) => Some(Value::from(i)),
            Total::Float(f) => Number::from_f64(f).map(Value::Number),
        }
    }
}

/// Largest magnitude up to which every whole double is an exact integer (2^53).
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// A double computed by the driver, in the service's JSON form: a whole value within the exact
/// integer range is written as an integer (`4`, not `4.0`), as the service writes it, so that it
/// reads into an integer type; any other finite value as a double; a non-finite one is undefined.
fn double_value(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() <= EXACT_INTEGERS {
        // Whole and within ±2^53: the conversion is exact (and -0 is written 0).
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

/// One aggregate being combined. Its partial state is plain data: a continuation token carries
/// it (serde), and [`Aggregator::same_kind`] checks a carried one against the query's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Aggregator {
    /// `COUNT`: the sum of the ranges' counts.
    #[serde(rename = "count")]
    Count(Total),
    /// `SUM`: the sum of the ranges' sums; undefined once any range's sum is undefined (a
    /// non-number was summed).
    #[serde(rename = "sum")]
    Sum(Option<Total>),
    /// `MIN` or `MAX`: the extreme so far (`None` before any defined partial).
    #[serde(rename = "ext")]
    Extreme {
        /// `true` for MAX.
        max: bool,
        /// The extreme so far.
        #[serde(rename = "v", default, with = "opt_value_text")]
        value: Option<Value>,
    },
    /// `AVG`: summed sums and counts.
    #[serde(rename = "avg")]
    Average {
        /// The summed sums.
        #[serde(rename = "s")]
        sum: Total,
        /// The summed counts.
        #[serde(rename = "c")]
        count: Total,
    },
}

impl Aggregator {
    /// A fresh aggregator for `kind`; `None` for an aggregate the driver does not combine
    /// (the feature check refuses those before any request).
    pub(crate) fn new(kind: &AggregateKind) -> Option<Aggregator> {
        Some(match kind {
            AggregateKind::Count => Aggregator::Count(Total::Int(0)),
            AggregateKind::Sum => Aggregator::Sum(Some(Total::Int(0))),
            AggregateKind::Min => Aggregator::Extreme {
                max: false,
                value: None,
            },
            AggregateKind::Max => Aggregator::Extreme {
                max: true,
                value: None,
            },
            AggregateKind::Average => Aggregator::Average {
                sum: Total::Int(0),
                count: Total::Int(0),
            },
            AggregateKind::Other(_) => return None,
        })
    }

    /// Whether `other` combines the same aggregate (COUNT, SUM, MIN, MAX or AVG) as `self`.
    pub(crate) fn same_kind(&self, other: &Aggregator) -> bool {
        match (self, other) {
            (Aggregator::Extreme { max: a, .. }, Aggregator::Extreme { max: b, .. }) => a == b,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// Adds one range's partial (`None`: the range's partial is undefined).
    pub(crate) fn add(&mut self, partial: Option<&Value>) -> Result<(), String> {
        match self {
            Aggregator::Count(total) => match partial {
                Some(Value::Number(n)) => *total = total.add(n),
                None => {}
                Some(other) => return Err(format!("a partial COUNT is not a number: {other}")),
            },
            Aggregator::Sum(total) => match (partial, total.as_mut()) {
                (Some(Value::Number(n)), Some(t)) => *t = t.add(n),
                (Some(Value::Number(_)), None) => {}
                (None, _) => *total = None,
                (Some(other), _) => return Err(format!("a partial SUM is not a number: {other}")),
            },
            Aggregator::Extreme { max, value } => {
                // A partial is the value itself, or `{"min"|"max": v, "count": n}` where a count
                // of 0 means the range had nothing to compare.
                let candidate = match partial {
                    Some(Value::Object(o)) if o.contains_key("count") => {
                        let field = if *max { "max" } else { "min" };
                        let count = o.get("count").and_then(Value::as_f64).unwrap_or(0.0);
                        if count <= 0.0 {
                            return Ok(());
                        }
                        o.get(field)
                    }
                    other => other,
                };
                let Some(candidate) = candidate else {
                    return Ok(());
                };
                let replace = match value.as_ref() {
                    None => true,
                    Some(current) => {
                        let o = compare_values(Some(candidate), Some(current));
                        if *max {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    }
                };
                if replace {
                    *value = Some(candidate.clone());
                }
            }
            Aggregator::Average { sum, count } => match partial {
                None => {}
                Some(Value::Object(o)) => match (o.get("sum"), o.get("count")) {
                    (Some(Value::Number(s)), Some(Value::Number(c))) => {
                        *sum = sum.add(s);
                        *count = count.add(c);
                    }
                    // A range with nothing to average (or a non-number) answers no sum.
                    (None | Some(Value::Null), _) => {}
                    _ => {
                        return Err(format!(
                            "a partial AVG is malformed: {}",
                            Value::Object(o.clone())
                        ))
                    }
                },
                Some(other) => return Err(format!("a partial AVG is malformed: {other}")),
            },
        }
        Ok(())
    }

    /// The combined value (`None`: undefined).
    pub(crate) fn result(&self) -> Option<Value> {
        match self {
            Aggregator::Count(t) => t.to_value(),
            Aggregator::Sum(t) => t.and_then(Total::to_value),
            Aggregator::Extreme { value, .. } => value.clone(),
            Aggregator::Average { sum, count } => {
                let c = count.as_f64();
                if c <= 0.0 {
                    return None;
                }
                double_value(sum.as_f64() / c)
            }
        }
    }
}

/// The partial of one aggregate in a range's row: `{"item": v}` (absent `item`: undefined), or a
/// bare number from older gateways.
pub(crate) fn partial_of(cell: &Value) -> Option<&Value> {
    match cell {
        Value::Object(o) => o.get("item"),
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn combine(kind: AggregateKind, partials: &[Option<Value>]) -> Option<Value> {
        let mut a = Aggregator::new(&kind).unwrap();
        for p in partials {
            a.add(p.as_ref()).unwrap();
        }
        a.result()
    }

    #[test]
    fn whole_doubles_are_written_as_integers_within_the_exact_range() {
        let table: &[(f64, Option<&str>)] = &[
            (4.0, Some("4")),
            (-4.0, Some("-4")),
            (-0.0, Some("0")),
            (0.5, Some("0.5")),
            (14.0 / 3.0, Some("4.666666666666667")),
            (9_007_199_254_740_992.0, Some("9007199254740992")),
            (-9_007_199_254_740_992.0, Some("-9007199254740992")),
            (18_014_398_509_481_984.0, Some("1.8014398509481984e+16")),
            (9.223372036854776e18, Some("9.223372036854776e+18")),
            (1e300, Some("1e+300")),
            (f64::NAN, None),
            (f64::INFINITY, None),
        ];
        for (f, expected) in table {
            let got = double_value(*f).map(|v| v.to_string());
            assert_eq!(got.as_deref(), *expected, "{f}");
        }
    }

    type Case = (AggregateKind, Vec<Option<Value>>, Option<Value>);

    /// Partials as ranges answer them, and the combined value the service gives.
    fn cases() -> Vec<Case> {
        use AggregateKind::*;
        let n = |v: Value| Some(v);
        vec![
            (
                Count,
                vec![n(json!(3)), n(json!(0)), n(json!(4))],
                Some(json!(7)),
            ),
            (Count, vec![], Some(json!(0))),
            (Sum, vec![n(json!(3)), n(json!(-1))], Some(json!(2))),
            (Sum, vec![n(json!(1.5)), n(json!(1))], Some(json!(2.5))),
            (Sum, vec![n(json!(1)), None], None),
            (
                Sum,
                vec![n(json!(i64::MAX)), n(json!(1))],
                Some(json!(9.223372036854776e18)),
            ),
            (
                Min,
                vec![n(json!(3)), None, n(json!(-2)), n(json!("a"))],
                Some(json!(-2)),
            ),
            (
                Max,
                vec![n(json!(3)), n(json!("a")), n(json!(true))],
                Some(json!("a")),
            ),
            (Max, vec![None, None], None),
            (
                Min,
                vec![
                    n(json!({"min": 4, "count": 2})),
                    n(json!({"min": null, "count": 0})),
                ],
                Some(json!(4)),
            ),
            (
                Max,
                vec![n(json!(null)), n(json!(false))],
                Some(json!(false)),
            ),
            (
                Average,
                vec![
                    n(json!({"sum": 6, "count": 2})),
                    n(json!({"sum": 3, "count": 1})),
                ],
                Some(json!(3)),
            ),
            (
                Average,
                vec![n(json!({"sum": null, "count": 0})), None],
                None,
            ),
            (
                Average,
                vec![n(json!({"sum": 1, "count": 2}))],
                Some(json!(0.5)),
            ),
            (
                Sum,
                vec![n(json!(1e308)), n(json!(1e308)), n(json!(1))],
                None,
            ),
            (
                Sum,
                vec![n(json!(0.1)), n(json!(0.2)), n(json!(3))],
                Some(json!(0.1 + 0.2 + 3.0)),
            ),
            (
                Min,
                vec![
                    n(json!("b")),
                    n(json!(null)),
                    n(json!(false)),
                    n(json!("a")),
                ],
                Some(json!(null)),
            ),
            (
                Average,
                vec![
                    n(json!({"sum": 0.5, "count": 1})),
                    n(json!({"sum": 2, "count": 2})),
                ],
                Some(json!(2.5 / 3.0)),
            ),
            (
                Count,
                vec![n(json!(i64::MAX)), n(json!(2))],
                Some(json!(9.223372036854776e18)),
            ),
        ]
    }

    #[test]
    fn aggregates_combine_partials_like_the_service() {
        let table = cases();
        for (kind, partials, want) in table {
            assert_eq!(
                combine(kind.clone(), &partials),
                want,
                "{kind:?} {partials:?}"
            );
        }
    }

    /// The partial state carried through a token at every point resumes to the same value.
    #[test]
    fn partial_state_round_trips_at_every_point() {
        for (kind, partials, want) in cases() {
            for cut in 0..=partials.len() {
                let mut first = Aggregator::new(&kind).unwrap();
                for p in &partials[..cut] {
                    first.add(p.as_ref()).unwrap();
                }
                let text = serde_json::to_string(&first).unwrap();
                let mut back: Aggregator = serde_json::from_str(&text).unwrap();
                assert!(back.same_kind(&first));
                assert_eq!(
                    serde_json::to_string(&back).unwrap(),
                    text,
                    "{kind:?} cut {cut}"
                );
                for p in &partials[cut..] {
                    back.add(p.as_ref()).unwrap();
                }
                assert_eq!(
                    back.result(),
                    want,
                    "{kind:?} {partials:?} cut {cut}: {text}"
                );
            }
        }
    }

    #[test]
    fn kinds_are_told_apart_and_malformed_state_is_refused() {
        use AggregateKind::*;
        let all: Vec<Aggregator> = [Count, Sum, Min, Max, Average]
            .iter()
            .map(|k| Aggregator::new(k).unwrap())
            .collect();
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.same_kind(b), i == j, "{a:?} {b:?}");
            }
        }
        for bad in [
            r#"{"count":{"x":1}}"#,
            r#"{"ext":{"max":true,"v":"{"}}"#,
            r#"{"avg":{"s":{"i":1}}}"#,
            r#"{"median":{}}"#,
            r#"{"count":{"i":1.5}}"#,
        ] {
            assert!(serde_json::from_str::<Aggregator>(bad).is_err(), "{bad}");
        }
        let none: Aggregator = serde_json::from_str(r#"{"ext":{"max":false}}"#).unwrap();
        assert_eq!(none.result(), None);
    }

    #[test]
    fn malformed_partials_are_errors_not_panics() {
        let mut c = Aggregator::new(&AggregateKind::Count).unwrap();
        assert!(c.add(Some(&json!("x"))).unwrap_err().contains("COUNT"));
        let mut a = Aggregator::new(&AggregateKind::Average).unwrap();
        assert!(a.add(Some(&json!(1))).unwrap_err().contains("AVG"));
        assert!(a.add(Some(&json!({"sum": 1, "count": "x"}))).is_err());
        assert!(Aggregator::new(&AggregateKind::Other("MakeSet".into())).is_none());
    }

    #[test]
    fn partials_are_read_from_item_cells() {
        assert_eq!(partial_of(&json!({"item": 4})), Some(&json!(4)));
        assert_eq!(partial_of(&json!({})), None);
        assert_eq!(partial_of(&json!(5)), Some(&json!(5)));
    }
}
