//! Numeric addition for `increment`, exact for integers and never wrapping.

use serde_json::{Number, Value};

use super::super::instructions::CosmosNumber;
use super::patch_error::{type_name, PatchFailure};

/// The value an increment by `by` creates when its target is missing (the service "creates the
/// field and sets it to the specified value").
pub(super) fn initial_value(by: CosmosNumber) -> Result<Value, PatchFailure> {
    match by {
        CosmosNumber::Int(v) => Ok(Value::from(v)),
        CosmosNumber::Float(v) => Number::from_f64(v)
            .map(Value::Number)
            .ok_or(PatchFailure::NotFinite),
    }
}

/// `current + by`.
///
/// - integer + integer stays an integer and is checked: a sum beyond the 64-bit range is
///   [`PatchFailure::IntegerOverflow`], never a wrap. When the current value is a signed 64-bit
///   integer the sum must stay one; a current value only representable as an unsigned 64-bit
///   integer (above `i64::MAX`) is summed exactly and the result kept as signed when it fits,
///   else unsigned, else it overflows.
/// - when either side is a double, the sum is a double (an integer plus a float becomes a float),
///   and must be finite.
/// - anything but a number is [`PatchFailure::NotANumber`].
pub(super) fn add(current: &Value, by: CosmosNumber) -> Result<Value, PatchFailure> {
    let Value::Number(n) = current else {
        return Err(PatchFailure::NotANumber {
            found: type_name(current),
        });
    };
    match by {
        CosmosNumber::Int(b) => {
            if let Some(a) = n.as_i64() {
                a.checked_add(b)
                    .map(Value::from)
                    .ok_or(PatchFailure::IntegerOverflow)
            } else if let Some(a) = n.as_u64() {
                let sum = i128::from(a) + i128::from(b);
                if let Ok(v) = i64::try_from(sum) {
                    Ok(Value::from(v))
                } else {
                    u64::try_from(sum)
                        .map(Value::from)
                        .map_err(|_| PatchFailure::IntegerOverflow)
                }
            } else {
                float_sum(n, by_as_f64(b))
            }
        }
        CosmosNumber::Float(b) => float_sum(n, b),
    }
}

/// The nearest double to an integer amount (exact up to 2^53).
#[allow(clippy::cast_precision_loss)]
fn by_as_f64(b: i64) -> f64 {
    b as f64
}

fn float_sum(current: &Number, by: f64) -> Result<Value, PatchFailure> {
    let a = current.as_f64().ok_or(PatchFailure::NotFinite)?;
    Number::from_f64(a + by)
        .map(Value::Number)
        .ok_or(PatchFailure::NotFinite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn adds_by_the_rules() {
        use CosmosNumber::{Float, Int};
        let big = json!(u64::MAX);
        let above_i64 = json!(9_223_372_036_854_775_808_u64);
        let cases: Vec<(Value, CosmosNumber, Result<Value, PatchFailure>)> = vec![
            (json!(1), Int(2), Ok(json!(3))),
            (json!(-5), Int(3), Ok(json!(-2))),
            (json!(0), Int(-1), Ok(json!(-1))),
            (
                json!(9_007_199_254_740_993_i64),
                Int(1),
                Ok(json!(9_007_199_254_740_994_i64)),
            ),
            (json!(i64::MAX), Int(1), Err(PatchFailure::IntegerOverflow)),
            (json!(i64::MIN), Int(-1), Err(PatchFailure::IntegerOverflow)),
            (json!(i64::MAX), Int(0), Ok(json!(i64::MAX))),
            (above_i64.clone(), Int(-1), Ok(json!(i64::MAX))),
            (above_i64, Int(1), Ok(json!(9_223_372_036_854_775_809_u64))),
            (big.clone(), Int(1), Err(PatchFailure::IntegerOverflow)),
            (big, Int(-1), Ok(json!(u64::MAX - 1))),
            (json!(1), Float(0.5), Ok(json!(1.5))),
            (json!(1.5), Int(1), Ok(json!(2.5))),
            (json!(0.1), Float(0.2), Ok(json!(0.1 + 0.2))),
            (json!(2), Float(0.0), Ok(json!(2.0))),
            (
                json!(f64::MAX),
                Float(f64::MAX),
                Err(PatchFailure::NotFinite),
            ),
            (json!(1), Float(f64::NAN), Err(PatchFailure::NotFinite)),
            (
                json!("1"),
                Int(1),
                Err(PatchFailure::NotANumber { found: "string" }),
            ),
            (
                json!(null),
                Int(1),
                Err(PatchFailure::NotANumber { found: "null" }),
            ),
            (
                json!(true),
                Float(1.0),
                Err(PatchFailure::NotANumber { found: "boolean" }),
            ),
            (
                json!([1]),
                Int(1),
                Err(PatchFailure::NotANumber { found: "array" }),
            ),
            (
                json!({}),
                Int(1),
                Err(PatchFailure::NotANumber { found: "object" }),
            ),
        ];
        for (current, by, expected) in cases {
            assert_eq!(add(&current, by), expected, "{current} + {by}");
        }
    }

    #[test]
    fn integer_results_stay_integers() {
        assert!(add(&json!(1), CosmosNumber::Int(1)).unwrap().is_i64());
        assert!(add(&json!(1), CosmosNumber::Float(1.0)).unwrap().is_f64());
        assert!(add(&json!(1.0), CosmosNumber::Int(1)).unwrap().is_f64());
    }

    #[test]
    fn initial_values_match_the_amount() {
        assert_eq!(initial_value(CosmosNumber::Int(-4)), Ok(json!(-4)));
        assert_eq!(initial_value(CosmosNumber::Float(0.25)), Ok(json!(0.25)));
        assert_eq!(
            initial_value(CosmosNumber::Float(f64::INFINITY)),
            Err(PatchFailure::NotFinite)
        );
    }
}
