//! Array functions: `ARRAY_CONTAINS` (with partial matching of objects), `ARRAY_LENGTH`,
//! `ARRAY_SLICE`, `ARRAY_CONCAT`.

use serde_json::Value;

use super::super::value::{equals, number, Val};
use super::{arg, flag};

/// The array function `name`, or None when `name` is not one.
pub fn call(name: &str, args: &[Val]) -> Option<Val> {
    let array = |i: usize| match arg(args, i) {
        Some(Value::Array(items)) => Some(items),
        _ => None,
    };
    Some(match name {
        "ARRAY_CONTAINS" => {
            let (Some(items), Some(wanted), Some(partial)) =
                (array(0), arg(args, 1), flag(args, 2))
            else {
                return Some(None);
            };
            let hit = items.iter().any(|item| {
                equals(item, wanted) == Some(true) || (partial && contains_partially(item, wanted))
            });
            Some(Value::Bool(hit))
        }
        "ARRAY_LENGTH" => array(0).and_then(|items| number(items.len() as f64)),
        "ARRAY_SLICE" => {
            let Some(items) = array(0) else {
                return Some(None);
            };
            let int = |i: usize| {
                arg(args, i)
                    .and_then(Value::as_f64)
                    .map(|f| f.trunc() as i64)
            };
            let len = items.len() as i64;
            let Some(start) = int(1) else {
                return Some(None);
            };
            let start = if start < 0 {
                (len + start).max(0)
            } else {
                start.min(len)
            };
            let count = match args.len() {
                3 => match int(2) {
                    Some(n) => n.max(0),
                    None => return Some(None),
                },
                _ => len,
            };
            let end = (start + count).min(len);
            Some(Value::Array(
                items[start as usize..end.max(start) as usize].to_vec(),
            ))
        }
        "ARRAY_CONCAT" => {
            let mut out = Vec::new();
            for i in 0..args.len() {
                match array(i) {
                    Some(items) => out.extend(items.iter().cloned()),
                    None => return Some(None),
                }
            }
            Some(Value::Array(out))
        }
        _ => return None,
    })
}

/// Whether `item` is an object holding every property of the object `wanted` with an equal value.
fn contains_partially(item: &Value, wanted: &Value) -> bool {
    match (item, wanted) {
        (Value::Object(have), Value::Object(want)) => want
            .iter()
            .all(|(k, v)| have.get(k).is_some_and(|h| equals(h, v) == Some(true))),
        _ => false,
    }
}
