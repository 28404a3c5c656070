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
    let s = |i: usize| match arg(args, i) {
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let int = |i: usize| {
        arg(args, i)
            .and_then(Value::as_f64)
            .map(|f| f.trunc() as i64)
    };
    let text = |t: String| Some(Value::String(t));
    let boolean = |b: bool| Some(Value::Bool(b));
    // What the call reads: its string arguments.
    let read: usize = (0..args.len()).filter_map(s).map(str::len).sum();
    if is_string_function(name) {
        meter.charge_bytes(read)?;
    }
    let out: Val = match name {
        "CONCAT" => {
            let mut parts = Vec::with_capacity(args.len());
            for i in 0..args.len() {
                match s(i) {
                    Some(part) => parts.push(part),
                    None => return Ok(Some(None)),
                }
            }
            let len = parts.iter().map(|p| p.len()).sum();
            check_result_size("CONCAT", len)?;
            meter.charge_bytes(len)?;
            text(parts.concat())
        }
        "CONTAINS" | "STARTSWITH" | "ENDSWITH" | "STRINGEQUALS" => {
            let (Some(a), Some(b), Some(fold)) = (s(0), s(1), flag(args, 2)) else {
                return Ok(Some(None));
            };
            let (a, b) = if fold {
                meter.charge_bytes(a.len() + b.len())?;
                (a.to_lowercase(), b.to_lowercase())
            } else {
                (a.to_owned(), b.to_owned())
            };
            boolean(match name {
                "CONTAINS" => a.contains(&b),
                "STARTSWITH" => a.starts_with(&b),
                "ENDSWITH" => a.ends_with(&b),
                _ => a == b,
            })
        }
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
        "SUBSTRING" => match (s(0), int(1), int(2)) {
            (Some(a), Some(start), Some(len)) => {
                let start = start.max(0) as usize;
                let len = len.max(0) as usize;
                text(a.chars().skip(start).take(len).collect())
            }
            _ => None,
        },
        "LEFT" => match (s(0), int(1)) {
            (Some(a), Some(n)) => text(a.chars().take(n.max(0) as usize).collect()),
            _ => None,
        },
        "RIGHT" => match (s(0), int(1)) {
            (Some(a), Some(n)) => {
                let count = a.chars().count();
                text(
                    a.chars()
                        .skip(count.saturating_sub(n.max(0) as usize))
                        .collect(),
                )
            }
            _ => None,
        },
        "INDEX_OF" => match (s(0), s(1)) {
            (Some(a), Some(b)) => {
                let from = if args.len() > 2 {
                    match int(2) {
                        Some(n) => n.max(0) as usize,
                        None => return Ok(Some(None)),
                    }
                } else {
                    0
                };
                number(index_of(a, b, from).map_or(-1.0, |i| i as f64))
            }
            _ => None,
        },
        "REPLACE" => match (s(0), s(1), s(2)) {
            (Some(a), Some(from), Some(to)) if !from.is_empty() => {
                // The result's size is known before it is built.
                let hits = a.matches(from).count();
                let len = a.len() - hits * from.len() + hits.saturating_mul(to.len());
                check_result_size("REPLACE", len)?;
                meter.charge_bytes(len)?;
                text(a.replace(from, to))
            }
            (Some(a), Some(_), Some(_)) => text(a.to_owned()),
            _ => None,
        },
        "REPLICATE" => match (s(0), arg(args, 1).and_then(Value::as_f64)) {
            (Some(a), Some(n)) if n.is_finite() && n >= 0.0 => {
                let times = n.trunc() as usize;
                let chars = a.chars().count().saturating_mul(times);
                if chars > MAX_REPLICATE_CHARS {
                    return Err(SqlError::new(format!(
                        "REPLICATE would build a string of {chars} characters; the limit is {MAX_REPLICATE_CHARS}."
                    )));
                }
                meter.charge_bytes(a.len() * times)?;
                text(a.repeat(times))
            }
            _ => None,
        },
        "TOSTRING" => match arg(args, 0) {
            None => None,
            Some(Value::String(a)) => text(a.clone()),
            Some(other) => {
                meter.charge(super::super::meter::weight(other))?;
                text(other.to_string())
            }
        },
        "REGEXMATCH" => match (s(0), s(1)) {
            (Some(a), Some(pattern)) => {
                let modifiers = match args.get(2) {
                    None => "",
                    Some(Some(Value::String(m))) => m.as_str(),
                    Some(_) => return Ok(Some(None)),
                };
                meter.charge(match_cost(a, pattern))?;
                boolean(regex_match(a, pattern, modifiers).map_err(SqlError::new)?)
            }
            _ => None,
        },
        _ => return Ok(None),
    };
    Ok(Some(out))
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
