//! Durations on the command line: `20s`, `500ms`, `1.5s`, `2m`, `250us`.

use std::time::Duration;

/// Parses a duration with a unit (`us`, `ms`, `s`, `m`, `h`). A bare number is refused, because
/// `--duration 20` could mean seconds or operations.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "{text:?} is not a duration: expected a number and a unit, e.g. 20s or 50ms"
        ));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: {number:?} is not a number"))?;
    let seconds_per_unit = match unit.trim() {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "" => {
            return Err(format!(
                "{text:?} needs a unit: us, ms, s, m or h (e.g. {number}s)"
            ))
        }
        other => {
            return Err(format!(
                "{text:?} has an unknown unit {other:?}: use us, ms, s, m or h"
            ))
        }
    };
    let secs = value * seconds_per_unit;
    if !secs.is_finite() || secs > 1e9 {
        return Err(format!("{text:?} is too long"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Prints a duration the way it would be typed: `50ms`, `2s`, `1.5s`, `250us`.
pub fn format_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us >= 1_000_000 && us.is_multiple_of(100_000) {
        format!("{}s", d.as_secs_f64())
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("20s", Duration::from_secs(20)),
            ("500ms", ms(500)),
            ("1.5s", ms(1500)),
            ("2m", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("250us", Duration::from_micros(250)),
            (" 50ms ", ms(50)),
            ("0s", Duration::ZERO),
        ] {
            assert_eq!(parse_duration(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn refusals_name_the_problem() {
        for (text, needle) in [
            ("20", "needs a unit"),
            ("ms", "expected a number"),
            ("", "expected a number"),
            ("5 parsecs", "unknown unit"),
            ("1.2.3s", "not a number"),
            ("-5s", "expected a number"),
            ("99999999999h", "too long"),
        ] {
            let e = parse_duration(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for text in ["50ms", "2s", "1.5s", "250us", "0s"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}
