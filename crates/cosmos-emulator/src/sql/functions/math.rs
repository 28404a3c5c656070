//! Math functions. A non-number argument makes the result `undefined`; results that are not finite
//! numbers are `undefined` too.

use serde_json::Value;

use super::super::value::{number, Val};
use super::{arg, Args};

/// The math function `name`, or None when `name` is not one.
pub(super) fn call(name: &str, args: Args<'_, '_>) -> Option<Val> {
    if name == "PI" {
        return Some(number(std::f64::consts::PI));
    }
    let x = match arg(args, 0) {
        Some(Value::Number(n)) => n,
        _ => return is_math(name).then_some(None),
    };
    if name == "ABS" {
        if let Some(i) = x.as_i64() {
            return Some(
                i.checked_abs()
                    .map(Value::from)
                    .or_else(|| number((i as f64).abs())),
            );
        }
    }
    let f = x.as_f64().unwrap_or(f64::NAN);
    let y = || match arg(args, 1) {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    };
    Some(match name {
        "ABS" => number(f.abs()),
        "CEILING" => number(f.ceil()),
        "FLOOR" => number(f.floor()),
        "ROUND" => number(f.round()),
        "TRUNC" => number(f.trunc()),
        "SQRT" => number(f.sqrt()),
        "EXP" => number(f.exp()),
        "LOG10" => number(f.log10()),
        "SIGN" => number(if f > 0.0 {
            1.0
        } else if f < 0.0 {
            -1.0
        } else {
            0.0
        }),
        "POWER" => y().and_then(|e| number(f.powf(e))),
        "LOG" if args.len() == 2 => y().and_then(|b| number(f.ln() / b.ln())),
        "LOG" => number(f.ln()),
        _ => return None,
    })
}

fn is_math(name: &str) -> bool {
    matches!(
        name,
        "ABS"
            | "CEILING"
            | "FLOOR"
            | "ROUND"
            | "TRUNC"
            | "SQRT"
            | "EXP"
            | "LOG10"
            | "SIGN"
            | "POWER"
            | "LOG"
    )
}
