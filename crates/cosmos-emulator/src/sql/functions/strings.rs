//! String functions. A non-string argument makes the result `undefined`.
//!
//! Each call charges the meter for the text it reads and builds, and a function whose result would
//! pass [`MAX_RESULT_BYTES`] (or `REPLICATE` past the service's 10,000 characters) is refused with
//! 400 before the result is built.

use serde_json::Value;

use super::super::limits::{check_result_size, MAX_REPLICATE_CHARS};
use super::super::meter::{match_cost, Meter};
use super::super::regex_cache::compiled;
use super::super::sql_error::SqlError;
use super::super::value::{number, Val};
use super::{arg, flag, Args};

#[cfg(doc)]
use super::super::limits::MAX_RESULT_BYTES;

/// The string function `name`: `Ok(None)` when `name` is not one.
pub(super) fn call(name: &str, args: Args<'_, '_>, meter: &Meter) -> Result<Option<Val>, SqlError> {
    let s = |i: usize| text_arg(args, i);
    let text = |t: String| Some(Value::String(t));
    // What the call reads: its string arguments.
    let read: usize = (0..args.len()).filter_map(s).map(str::len).sum();
    if is_string_function(name) {
        meter.charge_bytes(read)?;
    }
    let out: Val = match name {
        "CONCAT" => concat(args, meter)?,
        "CONTAINS" | "STARTSWITH" | "ENDSWITH" | "STRINGEQUALS" => compare(name, args, meter)?,
        "LOWER" | "UPPER" => match s(0) {
            Some(a) => {
                let out = if name == "LOWER" {
                    a.to_lowercase()
                } else {
                    a.to_uppercase()
                };
                check_result_size(name, out.len())?;
                text(out)
            }
            None => None,
        },
        "LENGTH" => s(0).and_then(|a| number(a.chars().count() as f64)),
        "TRIM" => s(0).map(|a| Value::String(a.trim().to_owned())),
        "LTRIM" => s(0).map(|a| Value::String(a.trim_start().to_owned())),
        "RTRIM" => s(0).map(|a| Value::String(a.trim_end().to_owned())),
        "REVERSE" => s(0).map(|a| Value::String(a.chars().rev().collect())),
        "SUBSTRING" | "LEFT" | "RIGHT" => part(name, args),
        "INDEX_OF" => index_of_call(args),
        "REPLACE" => replace(args, meter)?,
        "REPLICATE" => replicate(args, meter)?,
        "TOSTRING" => match arg(args, 0) {
            None => None,
            Some(Value::String(a)) => text(a.clone()),
            Some(other) => {
                meter.charge(super::super::meter::weight(other))?;
                text(other.to_string())
            }
        },
        "REGEXMATCH" => regex_match_call(args, meter)?,
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// Argument `i` when it is a string.
fn text_arg<'a>(args: Args<'a, '_>, i: usize) -> Option<&'a str> {
    match arg(args, i) {
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// Argument `i` when it is a number, truncated to an integer.
fn int_arg(args: Args<'_, '_>, i: usize) -> Option<i64> {
    arg(args, i)
        .and_then(Value::as_f64)
        .map(|f| f.trunc() as i64)
}

/// `CONCAT`: undefined when any argument is not a string.
fn concat(args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    let mut parts = Vec::with_capacity(args.len());
    for i in 0..args.len() {
        match text_arg(args, i) {
            Some(part) => parts.push(part),
            None => return Ok(None),
        }
    }
    let len = parts.iter().map(|p| p.len()).sum();
    check_result_size("CONCAT", len)?;
    meter.charge_bytes(len)?;
    Ok(Some(Value::String(parts.concat())))
}

/// `CONTAINS`, `STARTSWITH`, `ENDSWITH` and `STRINGEQUALS`, ignoring case when asked.
fn compare(name: &str, args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    let (Some(a), Some(b), Some(fold)) = (text_arg(args, 0), text_arg(args, 1), flag(args, 2))
    else {
        return Ok(None);
    };
    let (a, b) = if fold {
        meter.charge_bytes(a.len() + b.len())?;
        (a.to_lowercase(), b.to_lowercase())
    } else {
        (a.to_owned(), b.to_owned())
    };
    Ok(Some(Value::Bool(match name {
        "CONTAINS" => a.contains(&b),
        "STARTSWITH" => a.starts_with(&b),
        "ENDSWITH" => a.ends_with(&b),
        _ => a == b,
    })))
}

/// `SUBSTRING`, `LEFT` and `RIGHT`, counted in characters.
fn part(name: &str, args: Args<'_, '_>) -> Val {
    let a = text_arg(args, 0)?;
    let chars = a.chars();
    let out: String = match name {
        "SUBSTRING" => {
            let (start, len) = (int_arg(args, 1)?, int_arg(args, 2)?);
            chars
                .skip(start.max(0) as usize)
                .take(len.max(0) as usize)
                .collect()
        }
        "LEFT" => chars.take(int_arg(args, 1)?.max(0) as usize).collect(),
        _ => {
            let n = int_arg(args, 1)?;
            let count = a.chars().count();
            chars
                .skip(count.saturating_sub(n.max(0) as usize))
                .collect()
        }
    };
    Some(Value::String(out))
}

/// `INDEX_OF(a, b[, from])`: -1 when `b` is not found.
fn index_of_call(args: Args<'_, '_>) -> Val {
    let (a, b) = (text_arg(args, 0)?, text_arg(args, 1)?);
    let from = if args.len() > 2 {
        int_arg(args, 2)?.max(0) as usize
    } else {
        0
    };
    number(index_of(a, b, from).map_or(-1.0, |i| i as f64))
}

/// `REPLACE(a, from, to)`: the result's size is known, and checked, before it is built.
fn replace(args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    Ok(
        match (text_arg(args, 0), text_arg(args, 1), text_arg(args, 2)) {
            (Some(a), Some(from), Some(to)) if !from.is_empty() => {
                let hits = a.matches(from).count();
                let len = a.len() - hits * from.len() + hits.saturating_mul(to.len());
                check_result_size("REPLACE", len)?;
                meter.charge_bytes(len)?;
                Some(Value::String(a.replace(from, to)))
            }
            (Some(a), Some(_), Some(_)) => Some(Value::String(a.to_owned())),
            _ => None,
        },
    )
}

/// `REPLICATE(a, n)`, refused past the service's length.
fn replicate(args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    Ok(
        match (text_arg(args, 0), arg(args, 1).and_then(Value::as_f64)) {
            (Some(a), Some(n)) if n.is_finite() && n >= 0.0 => {
                let times = n.trunc() as usize;
                let chars = a.chars().count().saturating_mul(times);
                if chars > MAX_REPLICATE_CHARS {
                    return Err(SqlError::new(format!(
                        "REPLICATE would build a string of {chars} characters; the limit is {MAX_REPLICATE_CHARS}."
                    )));
                }
                meter.charge_bytes(a.len() * times)?;
                Some(Value::String(a.repeat(times)))
            }
            _ => None,
        },
    )
}

/// `REGEXMATCH(a, pattern[, modifiers])`, charged by the match's cost.
fn regex_match_call(args: Args<'_, '_>, meter: &Meter) -> Result<Val, SqlError> {
    let (Some(a), Some(pattern)) = (text_arg(args, 0), text_arg(args, 1)) else {
        return Ok(None);
    };
    let modifiers = match args.get(2) {
        None => "",
        Some(Some(Value::String(m))) => m.as_str(),
        Some(_) => return Ok(None),
    };
    meter.charge(match_cost(a, pattern))?;
    Ok(Some(Value::Bool(
        regex_match(a, pattern, modifiers).map_err(SqlError::new)?,
    )))
}

fn is_string_function(name: &str) -> bool {
    !matches!(name, "REGEXMATCH")
}

/// The character index of the first `needle` in `hay` at or after character `from` (linear time).
fn index_of(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let start = match hay.char_indices().nth(from) {
        Some((byte, _)) => byte,
        None if from == hay.chars().count() => hay.len(),
        None => return None,
    };
    let at = hay[start..].find(needle)? + start;
    Some(hay[..at].chars().count())
}

fn regex_match(text: &str, pattern: &str, modifiers: &str) -> Result<bool, String> {
    for m in modifiers.chars() {
        if !matches!(m, 'i' | 'm' | 's' | 'x') {
            return Err(format!(
                "REGEXMATCH modifier {m:?} is not one of 'i', 'm', 's', 'x'."
            ));
        }
    }
    let flags = if modifiers.is_empty() {
        String::new()
    } else {
        format!("(?{modifiers})")
    };
    let re = compiled(&format!("{flags}{pattern}"))
        .map_err(|e| format!("REGEXMATCH pattern {pattern:?} is invalid: {e}"))?;
    Ok(re.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_of_counts_characters_and_starts_where_told() {
        assert_eq!(index_of("Hello World", "o", 0), Some(4));
        assert_eq!(index_of("Hello World", "o", 5), Some(7));
        assert_eq!(index_of("héllo", "l", 0), Some(2));
        assert_eq!(index_of("abc", "", 3), Some(3));
        assert_eq!(index_of("abc", "", 4), None);
        assert_eq!(index_of("abc", "z", 0), None);
        // Linear: a long haystack and needle that almost match everywhere.
        let hay = "a".repeat(1 << 20);
        let needle = format!("{}b", "a".repeat(1 << 19));
        let started = std::time::Instant::now();
        assert_eq!(index_of(&hay, &needle, 0), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
