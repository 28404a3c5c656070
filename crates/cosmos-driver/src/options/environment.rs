//! The environment layer of the options, read once when a driver is built.

use std::num::NonZeroU32;

/// `AZURE_COSMOS_HEDGING_ENABLED`: the hedging master switch (lowest layer).
pub const HEDGING_ENABLED_VAR: &str = "AZURE_COSMOS_HEDGING_ENABLED";
/// `AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE`: the incident kill switch (wins over every layer).
pub const HEDGING_ENABLED_OVERRIDE_VAR: &str = "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE";
/// `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD`: alternate wins before a partition is marked
/// unhealthy in its primary region.
pub const CONSECUTIVE_HEDGE_WIN_THRESHOLD_VAR: &str = "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD";

/// Values read from the environment. Unset or unparsable variables are `None` (inert).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnvironmentOptions {
    /// `AZURE_COSMOS_HEDGING_ENABLED`.
    pub hedging_enabled: Option<bool>,
    /// `AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE`.
    pub hedging_enabled_override: Option<bool>,
    /// `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD`.
    pub consecutive_hedge_win_threshold: Option<NonZeroU32>,
}

impl EnvironmentOptions {
    /// Reads the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let flag = |name: &str| {
            let value = lookup(name)?;
            let parsed = parse_lenient_bool(&value);
            if parsed.is_none() {
                tracing::warn!(variable = name, value = %value, "ignoring an environment variable that is not a boolean");
            }
            parsed
        };
        Self {
            hedging_enabled: flag(HEDGING_ENABLED_VAR),
            hedging_enabled_override: flag(HEDGING_ENABLED_OVERRIDE_VAR),
            consecutive_hedge_win_threshold: lookup(CONSECUTIVE_HEDGE_WIN_THRESHOLD_VAR)
                .and_then(|v| v.trim().parse::<NonZeroU32>().ok()),
        }
    }
}

/// `true/false`, `1/0`, `yes/no`, `on/off`, any case, surrounding spaces ignored.
pub fn parse_lenient_bool(text: &str) -> Option<bool> {
    let t = text.trim();
    const TRUE: [&str; 4] = ["true", "1", "yes", "on"];
    const FALSE: [&str; 4] = ["false", "0", "no", "off"];
    if TRUE.iter().any(|v| v.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|v| v.eq_ignore_ascii_case(t)) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn lenient_booleans() {
        for t in ["true", "TRUE", " 1 ", "yes", "On"] {
            assert_eq!(parse_lenient_bool(t), Some(true), "{t}");
        }
        for f in ["false", "0", "NO", "off"] {
            assert_eq!(parse_lenient_bool(f), Some(false), "{f}");
        }
        assert_eq!(parse_lenient_bool("maybe"), None);
        assert_eq!(parse_lenient_bool(""), None);
    }

    #[test]
    fn reads_through_lookup() {
        let vars: HashMap<&str, &str> = [
            (HEDGING_ENABLED_VAR, "off"),
            (HEDGING_ENABLED_OVERRIDE_VAR, "bogus"),
            (CONSECUTIVE_HEDGE_WIN_THRESHOLD_VAR, "7"),
        ]
        .into();
        let env = EnvironmentOptions::from_lookup(|n| vars.get(n).map(|v| v.to_string()));
        assert_eq!(env.hedging_enabled, Some(false));
        assert_eq!(env.hedging_enabled_override, None);
        assert_eq!(env.consecutive_hedge_win_threshold.map(|n| n.get()), Some(7));
    }
}
