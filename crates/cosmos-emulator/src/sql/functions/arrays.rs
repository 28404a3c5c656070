//! Array functions: `ARRAY_CONTAINS` (with partial matching of objects), `ARRAY_LENGTH`,
//! `ARRAY_SLICE`, `ARRAY_CONCAT`. What a call copies is charged by its size; a result past
//! [`MAX_RESULT_BYTES`](super::super::limits::MAX_RESULT_BYTES) is refused (400).

use serde_json::Value;

use super::super::limits::check_result_size;
use super::super::meter::{json_size, units_of, Meter};
use super::super::sql_error::SqlError;
use super::super::value::{equals, number, Val};
use super::{arg, flag, Args};

/// The array function `name`, or `Ok(None)` when `name` is not one.
pub(super) fn call(name: &str, args: Args<'_, '_>, meter: &Meter) -> Result<Option<Val>, SqlError> {
    let array = |i: usize| match arg(args, i) {
        Some(Value::Array(items)) => Some(items),
        _ => None,
    };
    // What a call copies into its result: charged, and refused past the limit, before it is built.
    let copying = |items: &[Value]| -> Result<(), SqlError> {
        let bytes: usize = items.iter().map(json_size).sum();
        check_result_size(name, bytes)?;
        meter.charge(units_of(bytes))
    };
    Ok(Some(match name {
        "ARRAY_CONTAINS" => {
            let (Some(items), Some(wanted), Some(partial)) =
                (array(0), arg(args, 1), flag(args, 2))
            else {
                return Ok(Some(None));
            };
            meter.charge(items.len() as u64)?;
            let hit = items.iter().any(|item| {
                equals(item, wanted) == Some(true) || (partial && contains_partially(item, wanted))
            });
            Some(Value::Bool(hit))
        }
        "ARRAY_LENGTH" => array(0).and_then(|items| number(items.len() as f64)),
        "ARRAY_SLICE" => {
            let Some(items) = array(0) else {
                return Ok(Some(None));
            };
            let int = |i: usize| {
                arg(args, i)
                    .and_then(Value::as_f64)
                    .map(|f| f.trunc() as i64)
            };
            let len = items.len() as i64;
            let Some(start) = int(1) else {
                return Ok(Some(None));
            };
            let start = if start < 0 {
                (len + start).max(0)
            } else {
                start.min(len)
            };
            let count = match args.len() {
                3 => match int(2) {
                    Some(n) => n.max(0),
                    None => return Ok(Some(None)),
                },
                _ => len,
            };
            let end = (start.saturating_add(count)).min(len);
            let slice = &items[start as usize..end.max(start) as usize];
            copying(slice)?;
            Some(Value::Array(slice.to_vec()))
        }
        "ARRAY_CONCAT" => {
            let mut parts = Vec::with_capacity(args.len());
            for i in 0..args.len() {
                match array(i) {
                    Some(items) => parts.push(items.as_slice()),
                    None => return Ok(Some(None)),
                }
            }
            let bytes: usize = parts.iter().flat_map(|p| p.iter()).map(json_size).sum();
            check_result_size(name, bytes)?;
            meter.charge(units_of(bytes))?;
            Some(Value::Array(parts.concat()))
        }
        _ => return Ok(None),
    }))
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
