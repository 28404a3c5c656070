//! The service's type rules over JSON values, with `None` standing for `undefined`.
//!
//! - Equality is defined between values of the same type (objects and arrays deeply); across types
//!   it is `undefined`.
//! - `<`, `<=`, `>`, `>=` are defined for two numbers, two strings, two booleans or two nulls;
//!   anything else (objects, arrays, mixed types) is `undefined`.
//! - Numbers that are both integers compare exactly (64-bit); otherwise as doubles.
//! - `ORDER BY` orders across types: undefined, null, booleans, numbers, strings, arrays, objects.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A value that may be `undefined`.
pub(crate) type Val = Option<Value>;

/// Rank of a type in the cross-type ORDER BY order.
pub(crate) fn type_rank(v: Option<&Value>) -> u8 {
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

/// Compares two numbers: exactly when both are integers, as doubles otherwise.
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    match (a.as_i64(), b.as_u64()) {
        (Some(_), Some(_)) if a.as_u64().is_none() => return Ordering::Less,
        _ => {}
    }
    match (a.as_u64(), b.as_i64()) {
        (Some(_), Some(_)) if b.as_u64().is_none() => return Ordering::Greater,
        _ => {}
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// Deep equality with numeric equality (`1 = 1.0`); `None` when the types differ.
pub(crate) fn equals(a: &Value, b: &Value) -> Option<bool> {
    Some(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Ordering::Equal,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q) == Some(true))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w) == Some(true)))
        }
        _ => return None,
    })
}

/// The ordering used by `<`/`>`: only between two primitives of the same type.
pub(crate) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => return None,
    })
}

/// The total order of ORDER BY (and MIN/MAX/DISTINCT grouping): types by rank, then values;
/// arrays and objects compare by their elements in order.
pub(crate) fn order(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for (p, q) in x.iter().zip(y) {
                let o = order(Some(p), Some(q));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for ((kp, vp), (kq, vq)) in xs.iter().zip(&ys) {
                let o = kp.cmp(kq).then_with(|| order(Some(vp), Some(vq)));
                if o != Ordering::Equal {
                    return o;
                }
            }
            xs.len().cmp(&ys.len())
        }
        (Some(x), Some(y)) => compare(x, y).unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    }
}

/// A number value from a double: integral values inside ±2^53 are written as integers, as the
/// service writes them; NaN and infinities are `undefined`.
pub(crate) fn number(f: f64) -> Val {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

/// The JavaScript truthiness the query language does not have: only `true` is true.
pub(crate) fn is_true(v: &Val) -> bool {
    matches!(v, Some(Value::Bool(true)))
}

/// A canonical text of a value, equal for values `equals` calls equal; for grouping and DISTINCT.
pub(crate) fn canonical(v: Option<&Value>) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: Option<&Value>, out: &mut String) {
    match v {
        None => out.push('u'),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(0.0);
            match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => out.push_str(&format!("n{i}")),
                (None, Some(u)) => out.push_str(&format!("n{u}")),
                _ if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                    out.push_str(&format!("n{}", f as i64))
                }
                _ => out.push_str(&format!("n{f:?}")),
            }
        }
        Some(Value::Array(items)) => {
            out.push('[');
            for item in items {
                write_canonical(Some(item), out);
                out.push(',');
            }
            out.push(']');
        }
        Some(Value::Object(map)) => {
            let mut keys: Vec<_> = map.iter().collect();
            keys.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (k, v) in keys {
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_canonical(Some(v), out);
                out.push(',');
            }
            out.push('}');
        }
        Some(other) => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_is_defined_within_a_type_only() {
        let table = [
            (json!(1), json!(1.0), Some(true)),
            (json!(1), json!("1"), None),
            (json!(null), json!(null), Some(true)),
            (json!(null), json!(false), None),
            (json!([1, {"a": 2}]), json!([1.0, {"a": 2}]), Some(true)),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1}), Some(true)),
            (json!({"a": 1}), json!({"a": 1, "b": 2}), Some(false)),
            (json!([1]), json!({"0": 1}), None),
        ];
        for (a, b, want) in table {
            assert_eq!(equals(&a, &b), want, "{a} = {b}");
        }
    }

    #[test]
    fn relational_comparison_only_between_primitives_of_one_type() {
        let table = [
            (json!(1), json!(2), Some(Ordering::Less)),
            (json!("b"), json!("a"), Some(Ordering::Greater)),
            (json!(false), json!(true), Some(Ordering::Less)),
            (json!(1), json!("2"), None),
            (json!([1]), json!([2]), None),
            (json!({}), json!({}), None),
            (json!(null), json!(0), None),
        ];
        for (a, b, want) in table {
            assert_eq!(compare(&a, &b), want, "{a} vs {b}");
        }
    }

    #[test]
    fn sixty_four_bit_integers_compare_exactly() {
        let a = json!(9007199254740993i64);
        let b = json!(9007199254740992i64);
        assert_eq!(compare(&a, &b), Some(Ordering::Greater));
        assert_eq!(equals(&a, &b), Some(false));
        assert_eq!(
            compare(&json!(u64::MAX), &json!(-1)),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(&json!(-1), &json!(u64::MAX)), Some(Ordering::Less));
        assert_eq!(compare(&json!(2), &json!(2.5)), Some(Ordering::Less));
    }

    #[test]
    fn order_by_orders_across_types() {
        let mut values: Vec<Option<Value>> = vec![
            Some(json!({"a": 1})),
            Some(json!("a")),
            Some(json!([1])),
            Some(json!(true)),
            None,
            Some(json!(2)),
            Some(json!(null)),
            Some(json!(false)),
            Some(json!(-1.5)),
        ];
        values.sort_by(|a, b| order(a.as_ref(), b.as_ref()));
        assert_eq!(
            values,
            vec![
                None,
                Some(json!(null)),
                Some(json!(false)),
                Some(json!(true)),
                Some(json!(-1.5)),
                Some(json!(2)),
                Some(json!("a")),
                Some(json!([1])),
                Some(json!({"a": 1})),
            ]
        );
    }

    #[test]
    fn numbers_are_written_as_the_service_writes_them() {
        assert_eq!(number(2.0), Some(json!(2)));
        assert_eq!(number(2.5), Some(json!(2.5)));
        assert_eq!(number(f64::NAN), None);
        assert_eq!(canonical(Some(&json!(1.0))), canonical(Some(&json!(1))));
        assert_ne!(canonical(None), canonical(Some(&json!(null))));
    }
}
