//! Type checks: `IS_DEFINED`, `IS_NULL`, `IS_BOOL`, `IS_NUMBER`, `IS_STRING`, `IS_ARRAY`,
//! `IS_OBJECT`, `IS_PRIMITIVE`.

use serde_json::Value;

use super::super::value::Val;
use super::Args;

/// The type check `name`, or None when `name` is not one.
pub(super) fn call(name: &str, args: Args<'_, '_>) -> Option<Val> {
    let v = args.first().copied().flatten();
    let answer = match name {
        "IS_DEFINED" => v.is_some(),
        "IS_NULL" => matches!(v, Some(Value::Null)),
        "IS_BOOL" => matches!(v, Some(Value::Bool(_))),
        "IS_NUMBER" => matches!(v, Some(Value::Number(_))),
        "IS_STRING" => matches!(v, Some(Value::String(_))),
        "IS_ARRAY" => matches!(v, Some(Value::Array(_))),
        "IS_OBJECT" => matches!(v, Some(Value::Object(_))),
        "IS_PRIMITIVE" => matches!(
            v,
            Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_))
        ),
        _ => return None,
    };
    Some(Some(Value::Bool(answer)))
}
