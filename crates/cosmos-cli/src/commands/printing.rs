//! What the resource commands print: JSON on stdout, errors on stderr.

use cosmos_driver::{CosmosError, CosmosResponse, DiagnosticsContext};
use serde_json::{json, Value};

/// The body of a response as JSON (`null` when empty; a string when it is not JSON).
pub fn body_json(body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

fn diagnostics_json(d: &DiagnosticsContext) -> Value {
    serde_json::to_value(d).unwrap_or(Value::Null)
}

/// What to print for a successful operation: the result alone, or with `--diagnostics` an object
/// with the status, the charge, the result and the diagnostics.
pub fn success(result: Value, response: &CosmosResponse, diagnostics: bool) -> Value {
    if !diagnostics {
        return result;
    }
    json!({
        "status": response.status(),
        "request_charge": charge(response.request_charge()),
        "result": result,
        "diagnostics": diagnostics_json(response.diagnostics()),
    })
}

/// A charge as a person reads it: request units to the hundredth, as the service reports them
/// (a sum of pages' charges carries floating-point noise such as `765.1000000000003`), and never
/// `-0`.
pub fn charge(request_charge: f64) -> f64 {
    let rounded = (request_charge * 100.0).round() / 100.0;
    if rounded == 0.0 || !rounded.is_finite() {
        0.0
    } else {
        rounded
    }
}

/// The line an item command prints on stderr: `{"request_charge":N}` (the request units the
/// command's operation cost), so stdout keeps the result alone.
pub fn charge_line(request_charge: f64) -> String {
    json!({ "request_charge": charge(request_charge) }).to_string()
}

/// Prints the charge line on stderr.
pub fn print_charge(request_charge: f64) {
    eprintln!("{}", charge_line(request_charge));
}

/// Prints `value` as pretty JSON on stdout.
pub fn print(value: &Value) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("error: cannot print the result: {e}"),
    }
}

/// The error line for stderr: status, sub-status and message.
pub fn error_line(e: &CosmosError) -> String {
    let mut line = String::from("error: ");
    if let Some(status) = e.status() {
        line.push_str(&format!("status {status}"));
        line.push_str(&format!(", sub-status {}", e.sub_status().unwrap_or(0)));
        line.push_str(": ");
    }
    line.push_str(e.message());
    line
}

/// Prints an operation's error on stderr (with the diagnostics when asked).
pub fn print_error(e: &CosmosError, diagnostics: bool) {
    eprintln!("{}", error_line(e));
    if diagnostics {
        if let Ok(text) = serde_json::to_string_pretty(&diagnostics_json(e.diagnostics())) {
            eprintln!("{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        assert_eq!(body_json(b""), Value::Null);
        assert_eq!(body_json(br#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(body_json(b"not json"), json!("not json"));
    }

    #[test]
    fn charge_lines_are_json() {
        assert_eq!(charge_line(5.71), r#"{"request_charge":5.71}"#);
    }

    #[test]
    fn charges_read_as_the_service_reports_them() {
        let table: &[(f64, &str)] = &[
            (765.1000000000003, "765.1"),
            (0.1 + 0.2, "0.3"),
            (-0.0, "0.0"),
            (-0.001, "0.0"),
            (2.86, "2.86"),
            (1.0, "1.0"),
            (f64::NAN, "0.0"),
        ];
        for (raw, shown) in table {
            assert_eq!(json!(charge(*raw)).to_string(), *shown, "{raw}");
        }
        assert_eq!(
            charge_line(765.1000000000003),
            r#"{"request_charge":765.1}"#
        );
        assert_eq!(charge_line(-0.0), r#"{"request_charge":0.0}"#);
    }

    #[test]
    fn error_lines_name_status_and_sub_status() {
        let e = CosmosError::invalid_input("the item id is empty");
        assert_eq!(error_line(&e), "error: the item id is empty");
    }
}
