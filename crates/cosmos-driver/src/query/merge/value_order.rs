//! The service's order over JSON values, used to merge ORDER BY pages and to combine MIN/MAX:
//! undefined < null < booleans < numbers < strings < arrays < objects; within a type, by value
//! (numbers exactly when both are integers, strings by code point, arrays element by element).
//! And a canonical text of a value, so that equal values (`1` and `1.0`, objects with keys in any
//! order) are found equal by DISTINCT and GROUP BY.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use crate::query::plan::query_plan::SortOrder;

/// The nesting depth past which arrays compare as equal (serde_json already bounds the depth of
/// what it parses; this keeps comparison iterative-depth bounded on values built in code).
const MAX_COMPARE_DEPTH: usize = 64;

fn type_rank(v: Option<&Value>) -> u8 {
    match v {
        None => 0,
        Some(Value::Null) => 1,
        Some(Value::Bool(_)) => 2,
        Some(Value::Number(_)) => 3,
        Some(Value::String(_)) => 4,
        Some(Value::Array(_)) => 5,
        Some(Value::Object(_)) => 6,
    }
}

/// Compares two numbers: exactly when both are integers, otherwise as doubles.
pub(crate) fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    // One side is a negative i64, the other a u64 past i64::MAX.
    if let (Some(_), Some(_)) = (a.as_i64(), b.as_u64()) {
        return Ordering::Less;
    }
    if let (Some(_), Some(_)) = (a.as_u64(), b.as_i64()) {
        return Ordering::Greater;
    }
    let x = a.as_f64().unwrap_or(f64::NAN);
    let y = b.as_f64().unwrap_or(f64::NAN);
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// Compares two values in the service's order; `None` is undefined.
pub(crate) fn compare_values(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    compare_at(a, b, 0)
}

fn compare_at(a: Option<&Value>, b: Option<&Value>, depth: usize) -> Ordering {
    let by_type = type_rank(a).cmp(&type_rank(b));
    if by_type != Ordering::Equal {
        return by_type;
    }
    match (a, b) {
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x.cmp(y),
        (Some(Value::Number(x)), Some(Value::Number(y))) => compare_numbers(x, y),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (Some(Value::Array(x)), Some(Value::Array(y))) if depth < MAX_COMPARE_DEPTH => {
            for (p, q) in x.iter().zip(y) {
                let o = compare_at(Some(p), Some(q), depth + 1);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Ordering::Equal,
    }
}

/// Compares two ORDER BY keys (one value per key, `None` for undefined) under the directions.
pub(crate) fn compare_keys(
    a: &[Option<Value>],
    b: &[Option<Value>],
    orders: &[SortOrder],
) -> Ordering {
    for (i, order) in orders.iter().enumerate() {
        let o = compare_values(
            a.get(i).and_then(Option::as_ref),
            b.get(i).and_then(Option::as_ref),
        );
        let o = match order {
            SortOrder::Ascending => o,
            SortOrder::Descending => o.reverse(),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// A canonical text of `v`: object keys sorted, numbers with an integral value written as
/// integers, so that values the service treats as equal have the same text. Iterative, so any
/// depth is safe.
pub(crate) fn canonical_text(v: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(v)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                out.push_str(&Value::String(k.to_owned()).to_string());
                out.push(':');
            }
            Step::Value(Value::Number(n)) => out.push_str(&canonical_number(n)),
            Step::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Step::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                stack.push(Step::Text("}"));
                let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                keys.sort_by(|a, b| a.0.cmp(b.0));
                for (i, (k, item)) in keys.into_iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    stack.push(Step::Key(k));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(other) => out.push_str(&other.to_string()),
        }
    }
    out
}

fn canonical_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cross_type_order_is_the_services() {
        let ascending = [
            None,
            Some(json!(null)),
            Some(json!(false)),
            Some(json!(true)),
            Some(json!(-5)),
            Some(json!(1.5)),
            Some(json!(2)),
            Some(json!("")),
            Some(json!("B")),
            Some(json!("a")),
            Some(json!([])),
            Some(json!([1])),
            Some(json!([1, 2])),
            Some(json!([2])),
            Some(json!({})),
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(
                    compare_values(a.as_ref(), b.as_ref()),
                    i.cmp(&j),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn large_integers_compare_exactly() {
        let a = json!(9_007_199_254_740_993_i64);
        let b = json!(9_007_199_254_740_992_i64);
        assert_eq!(compare_values(Some(&a), Some(&b)), Ordering::Greater);
        assert_eq!(
            compare_values(Some(&json!(u64::MAX)), Some(&json!(-1))),
            Ordering::Greater
        );
        assert_eq!(
            compare_values(Some(&json!(-1)), Some(&json!(u64::MAX))),
            Ordering::Less
        );
        assert_eq!(
            compare_values(Some(&json!(1)), Some(&json!(1.0))),
            Ordering::Equal
        );
    }

    #[test]
    fn keys_follow_each_direction() {
        use SortOrder::*;
        let a = vec![Some(json!(1)), Some(json!("x"))];
        let b = vec![Some(json!(1)), Some(json!("y"))];
        assert_eq!(
            compare_keys(&a, &b, &[Ascending, Ascending]),
            Ordering::Less
        );
        assert_eq!(
            compare_keys(&a, &b, &[Ascending, Descending]),
            Ordering::Greater
        );
        assert_eq!(
            compare_keys(&a, &a, &[Descending, Descending]),
            Ordering::Equal
        );
    }

    #[test]
    fn canonical_text_equates_what_the_service_equates() {
        assert_eq!(
            canonical_text(&json!({"b": 1, "a": [1.0, "x"]})),
            r#"{"a":[1,"x"],"b":1}"#
        );
        assert_eq!(canonical_text(&json!(2.0)), canonical_text(&json!(2)));
        assert_ne!(canonical_text(&json!(2.5)), canonical_text(&json!(2)));
        assert_ne!(canonical_text(&json!("1")), canonical_text(&json!(1)));
        assert_eq!(canonical_text(&json!([])), "[]");
        assert_eq!(canonical_text(&json!({"k\"": null})), r#"{"k\"":null}"#);
    }

    #[test]
    fn canonical_text_of_a_deep_value_does_not_recurse() {
        let mut v = json!(1);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let text = canonical_text(&v);
        assert_eq!(text.len(), 200_001);
        // Dropping a deeply nested value recurses in serde_json; unwind it by hand.
        let mut cur = v;
        while let Value::Array(mut a) = cur {
            cur = a.pop().unwrap_or(Value::Null);
        }
    }
}
