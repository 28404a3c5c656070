//! `--hedging off|on|<threshold>`.

use std::time::Duration;

use super::duration::{format_duration, parse_duration};

/// What hedging a benchmark run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HedgingChoice {
    /// Hedging disabled.
    Off,
    /// The driver's default threshold.
    On,
    /// Hedging at this threshold.
    Threshold(Duration),
}

impl HedgingChoice {
    /// The label used in the table and the JSON: `off`, `on` or e.g. `50ms`.
    pub fn label(self) -> String {
        match self {
            HedgingChoice::Off => "off".into(),
            HedgingChoice::On => "on".into(),
            HedgingChoice::Threshold(d) => format_duration(d),
        }
    }
}

/// Parses `off`, `on` or a threshold such as `50ms`.
pub fn parse_hedging(text: &str) -> Result<HedgingChoice, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "off" | "false" | "no" | "none" => Ok(HedgingChoice::Off),
        "on" | "true" | "yes" => Ok(HedgingChoice::On),
        _ => match parse_duration(text) {
            Ok(d) if d.is_zero() => {
                Err("a hedging threshold of zero is not allowed; use `off` to disable".into())
            }
            Ok(d) => Ok(HedgingChoice::Threshold(d)),
            Err(e) => Err(format!(
                "--hedging takes off, on or a threshold such as 50ms: {e}"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!(parse_hedging("off"), Ok(HedgingChoice::Off));
        assert_eq!(parse_hedging("ON"), Ok(HedgingChoice::On));
        assert_eq!(
            parse_hedging("50ms"),
            Ok(HedgingChoice::Threshold(Duration::from_millis(50)))
        );
        assert!(parse_hedging("0ms").unwrap_err().contains("zero"));
        assert!(parse_hedging("sometimes")
            .unwrap_err()
            .contains("off, on or a threshold"));
        assert_eq!(
            HedgingChoice::Threshold(Duration::from_millis(50)).label(),
            "50ms"
        );
        assert_eq!(HedgingChoice::Off.label(), "off");
    }
}
