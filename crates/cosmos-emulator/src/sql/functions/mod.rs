//! Built-in scalar functions: the table of names and argument counts, and dispatch to one file
//! per family.

mod arrays;
mod datetime;
mod math;
mod spatial;
mod strings;
mod types;

use super::meter::Meter;
use super::sql_error::SqlError;
use super::value::Val;

/// A function's evaluated arguments, borrowed (`None`: undefined).
pub(super) type Args<'a, 'v> = &'a [Option<&'v serde_json::Value>];

/// Name, fewest and most arguments (`usize::MAX`: any number).
const TABLE: &[(&str, usize, usize)] = &[
    ("IS_DEFINED", 1, 1),
    ("IS_NULL", 1, 1),
    ("IS_BOOL", 1, 1),
    ("IS_NUMBER", 1, 1),
    ("IS_STRING", 1, 1),
    ("IS_ARRAY", 1, 1),
    ("IS_OBJECT", 1, 1),
    ("IS_PRIMITIVE", 1, 1),
    ("CONCAT", 2, usize::MAX),
    ("CONTAINS", 2, 3),
    ("STARTSWITH", 2, 3),
    ("ENDSWITH", 2, 3),
    ("LOWER", 1, 1),
    ("UPPER", 1, 1),
    ("LENGTH", 1, 1),
    ("SUBSTRING", 3, 3),
    ("INDEX_OF", 2, 3),
    ("REPLACE", 3, 3),
    ("REPLICATE", 2, 2),
    ("TRIM", 1, 1),
    ("LTRIM", 1, 1),
    ("RTRIM", 1, 1),
    ("LEFT", 2, 2),
    ("RIGHT", 2, 2),
    ("REVERSE", 1, 1),
    ("TOSTRING", 1, 1),
    ("STRINGEQUALS", 2, 3),
    ("REGEXMATCH", 2, 3),
    ("ABS", 1, 1),
    ("CEILING", 1, 1),
    ("FLOOR", 1, 1),
    ("ROUND", 1, 1),
    ("TRUNC", 1, 1),
    ("SQRT", 1, 1),
    ("POWER", 2, 2),
    ("LOG", 1, 2),
    ("LOG10", 1, 1),
    ("EXP", 1, 1),
    ("SIGN", 1, 1),
    ("PI", 0, 0),
    ("ARRAY_CONTAINS", 2, 3),
    ("ARRAY_LENGTH", 1, 1),
    ("ARRAY_SLICE", 2, 3),
    ("ARRAY_CONCAT", 2, usize::MAX),
    ("GETCURRENTDATETIME", 0, 0),
    ("VECTORDISTANCE", 2, 4),
    ("_VECTORSCORE", 2, 3),
    ("FULLTEXTCONTAINS", 2, 2),
    ("FULLTEXTCONTAINSALL", 2, usize::MAX),
    ("FULLTEXTCONTAINSANY", 2, usize::MAX),
    ("FULLTEXTSCORE", 2, usize::MAX),
    ("_FULLTEXTSCORE", 5, 5),
    ("_FULLTEXTWORDCOUNT", 1, 1),
    ("RRF", 1, usize::MAX),
    ("ST_DISTANCE", 2, 2),
    ("ST_ISVALID", 1, 1),
];

/// Checks `name` (upper-cased) is a known function taking `count` arguments.
pub(super) fn check_arity(name: &str, count: usize) -> Result<(), String> {
    let Some(&(_, min, max)) = TABLE.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!(
            "'{name}' is not a recognized built-in function name."
        ));
    };
    if count < min || count > max {
        let wanted = match (min, max) {
            (a, b) if a == b => format!("{a}"),
            (a, usize::MAX) => format!("at least {a}"),
            (a, b) => format!("{a} to {b}"),
        };
        return Err(format!(
            "The function {name} takes {wanted} argument(s), not {count}."
        ));
    }
    Ok(())
}

/// Calls the built-in `name` (already arity-checked) on evaluated arguments, charging `meter` for
/// what it reads and builds; a result past the size limits is refused (400).
pub(super) fn call(name: &str, args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    if let Some(out) = types::call(name, args) {
        return Ok(out);
    }
    if let Some(out) = strings::call(name, args, meter)? {
        return Ok(out);
    }
    if let Some(out) = math::call(name, args) {
        return Ok(out);
    }
    if let Some(out) = arrays::call(name, args, meter)? {
        return Ok(out);
    }
    if let Some(out) = super::vector::call(name, args, meter)? {
        return Ok(out);
    }
    if let Some(out) = super::fulltext::call(name, args, meter)? {
        return Ok(out);
    }
    if let Some(out) = spatial::call(name, args)? {
        return Ok(out);
    }
    if name == "GETCURRENTDATETIME" {
        return Ok(Some(serde_json::Value::String(datetime::now_iso8601())));
    }
    Err(SqlError::new(format!(
        "'{name}' is not a recognized built-in function name."
    )))
}

/// The argument at `i` (undefined when absent).
fn arg<'v>(args: Args<'_, 'v>, i: usize) -> Option<&'v serde_json::Value> {
    args.get(i).copied().flatten()
}

/// The optional ignore-case flag at `i`: absent is false, a non-boolean is `None`.
fn flag(args: Args<'_, '_>, i: usize) -> Option<bool> {
    match args.get(i) {
        None => Some(false),
        Some(Some(serde_json::Value::Bool(b))) => Some(*b),
        Some(_) => None,
    }
}

#[cfg(test)]
#[path = "function_tests.rs"]
mod function_tests;
