//! String functions. A non-string argument makes the result `undefined`.

use serde_json::Value;

use super::super::regex_cache::compiled;
use super::super::value::{number, Val};
use super::{arg, flag};

/// The string function `name`: `Ok(None)` when `name` is not one, `Err` for a bad pattern.
pub fn call(name: &str, args: &[Val]) -> Result<Option<Val>, String> {
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
    let out: Val = match name {
        "CONCAT" => {
            let mut out = String::new();
            for i in 0..args.len() {
                match s(i) {
                    Some(part) => out.push_str(part),
                    None => return Ok(Some(None)),
                }
            }
            text(out)
        }
        "CONTAINS" | "STARTSWITH" | "ENDSWITH" | "STRINGEQUALS" => {
            let (Some(a), Some(b), Some(fold)) = (s(0), s(1), flag(args, 2)) else {
                return Ok(Some(None));
            };
            let (a, b) = if fold {
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
        "LOWER" => s(0).map(|a| Value::String(a.to_lowercase())),
        "UPPER" => s(0).map(|a| Value::String(a.to_uppercase())),
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
                let chars: Vec<char> = a.chars().collect();
                let needle: Vec<char> = b.chars().collect();
                let found = (from..=chars.len().saturating_sub(needle.len()))
                    .find(|&i| chars.get(i..i + needle.len()) == Some(&needle[..]))
                    .filter(|_| from <= chars.len());
                number(found.map_or(-1.0, |i| i as f64))
            }
            _ => None,
        },
        "REPLACE" => match (s(0), s(1), s(2)) {
            (Some(a), Some(from), Some(to)) if !from.is_empty() => text(a.replace(from, to)),
            (Some(a), Some(_), Some(_)) => text(a.to_owned()),
            _ => None,
        },
        "TOSTRING" => match arg(args, 0) {
            None => None,
            Some(Value::String(a)) => text(a.clone()),
            Some(other) => text(other.to_string()),
        },
        "REGEXMATCH" => match (s(0), s(1)) {
            (Some(a), Some(pattern)) => {
                let modifiers = match args.get(2) {
                    None => "",
                    Some(Some(Value::String(m))) => m.as_str(),
                    Some(_) => return Ok(Some(None)),
                };
                boolean(regex_match(a, pattern, modifiers)?)
            }
            _ => None,
        },
        _ => return Ok(None),
    };
    Ok(Some(out))
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
