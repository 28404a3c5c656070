//! The hedging environment variables, read once when the driver is built.
//!
//! - `AZURE_COSMOS_HEDGING_ENABLED`: the master switch, below every programmatic setting.
//! - `AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE`: the incident kill switch, above every setting.
//! - `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD`: consecutive alternate wins on one partition
//!   before the partition is marked unhealthy in its primary region (default 5).
//!
//! Booleans are read leniently: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`, any case,
//! surrounding whitespace ignored. An empty value counts as unset.
//!
//! **A value that cannot be read fails closed.** An unreadable hedging switch (say `disable` or
//! `enabled`) is taken as `false`: hedging off. Hedging only ever adds load, so off is the safe
//! reading, and a kill switch typed slightly wrong during an incident still kills. An unreadable
//! win threshold falls back to the default. Each rejected value is logged as a warning (target
//! `cosmos.hedge`) naming the variable and the value, and is kept in [`HedgingEnv::rejected`].

use std::fmt;
use std::num::NonZeroU32;

/// The master switch variable.
pub const HEDGING_ENABLED_ENV: &str = "AZURE_COSMOS_HEDGING_ENABLED";
/// The kill-switch variable; wins over every other layer.
pub const HEDGING_ENABLED_OVERRIDE_ENV: &str = "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE";
/// The consecutive-alternate-win threshold variable.
pub const CONSECUTIVE_HEDGE_WIN_THRESHOLD_ENV: &str =
    "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD";
/// Consecutive alternate wins on one partition before it is marked unhealthy in its primary region.
pub const DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD: NonZeroU32 = match NonZeroU32::new(5) {
    Some(n) => n,
    None => unreachable!(),
};

/// Longest part of a rejected value that is kept and logged.
const MAX_REJECTED_VALUE_CHARS: usize = 64;

/// Reads a boolean leniently; `None` when the text is not one of the accepted spellings.
pub(crate) fn parse_lenient_bool(text: &str) -> Option<bool> {
    let t = text.trim();
    const TRUE: [&str; 4] = ["true", "1", "yes", "on"];
    const FALSE: [&str; 4] = ["false", "0", "no", "off"];
    if TRUE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(true)
    } else if FALSE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(false)
    } else {
        None
    }
}

/// An environment value that could not be read, and what was used instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectedEnvValue {
    /// The variable's name.
    pub variable: &'static str,
    /// The value as set (at most 64 characters of it).
    pub value: String,
    /// What the driver uses instead, in words.
    pub used_instead: &'static str,
}

impl fmt::Display for RejectedEnvValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={:?} cannot be read; {}",
            self.variable, self.value, self.used_instead
        )
    }
}

/// The hedging environment, read once when the driver is built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HedgingEnv {
    /// `AZURE_COSMOS_HEDGING_ENABLED`, lowest layer of the master switch.
    pub hedging_enabled: Option<bool>,
    /// `AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE`, highest layer of the master switch.
    pub hedging_enabled_override: Option<bool>,
    /// `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD`.
    pub consecutive_hedge_win_threshold: Option<NonZeroU32>,
    /// Values that were set but could not be read.
    pub rejected: Vec<RejectedEnvValue>,
}

impl HedgingEnv {
    /// Reads the variables through `lookup` (the process environment in production, a table in
    /// tests). Rejected values are logged once here.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut env = HedgingEnv::default();
        env.hedging_enabled = read_switch(&lookup, HEDGING_ENABLED_ENV, &mut env.rejected);
        env.hedging_enabled_override =
            read_switch(&lookup, HEDGING_ENABLED_OVERRIDE_ENV, &mut env.rejected);
        env.consecutive_hedge_win_threshold = read_count(
            &lookup,
            CONSECUTIVE_HEDGE_WIN_THRESHOLD_ENV,
            &mut env.rejected,
        );
        for r in &env.rejected {
            tracing::warn!(target: "cosmos.hedge", variable = r.variable, value = %r.value, "{r}");
        }
        env
    }

    /// Reads the variables from the process environment. A value that is not valid UTF-8 is
    /// rejected like any other unreadable value.
    pub fn from_process_env() -> Self {
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }
}

/// The value of `name`, or `None` when unset or empty.
fn present(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|v| !v.trim().is_empty())
}

fn reject(name: &'static str, value: &str, used_instead: &'static str) -> RejectedEnvValue {
    RejectedEnvValue {
        variable: name,
        value: value.chars().take(MAX_REJECTED_VALUE_CHARS).collect(),
        used_instead,
    }
}

fn read_switch(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    rejected: &mut Vec<RejectedEnvValue>,
) -> Option<bool> {
    let value = present(lookup, name)?;
    match parse_lenient_bool(&value) {
        Some(b) => Some(b),
        None => {
            rejected.push(reject(
                name,
                &value,
                "not one of true/false, 1/0, yes/no, on/off; hedging is turned off",
            ));
            Some(false)
        }
    }
}

fn read_count(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    rejected: &mut Vec<RejectedEnvValue>,
) -> Option<NonZeroU32> {
    let value = present(lookup, name)?;
    match value.trim().parse::<NonZeroU32>() {
        Ok(n) => Some(n),
        Err(_) => {
            rejected.push(reject(
                name,
                &value,
                "not a positive whole number; the default 5 is used",
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> HedgingEnv {
        HedgingEnv::from_lookup(|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn lenient_booleans() {
        let table: &[(&str, Option<bool>)] = &[
            ("true", Some(true)),
            ("TRUE", Some(true)),
            (" True ", Some(true)),
            ("1", Some(true)),
            ("yes", Some(true)),
            ("YeS", Some(true)),
            ("on", Some(true)),
            ("ON\n", Some(true)),
            ("false", Some(false)),
            ("False", Some(false)),
            ("0", Some(false)),
            ("no", Some(false)),
            ("NO", Some(false)),
            ("off", Some(false)),
            ("\tOff", Some(false)),
            ("", None),
            ("enabled", None),
            ("disable", None),
            ("2", None),
            ("t", None),
            ("y", None),
            ("truee", None),
        ];
        for (text, want) in table {
            assert_eq!(parse_lenient_bool(text), *want, "{text:?}");
        }
    }

    #[test]
    fn unset_variables_are_inert() {
        assert_eq!(env_of(&[]), HedgingEnv::default());
        let env = env_of(&[
            (HEDGING_ENABLED_ENV, "  "),
            (HEDGING_ENABLED_OVERRIDE_ENV, ""),
        ]);
        assert_eq!(env, HedgingEnv::default(), "empty values count as unset");
    }

    #[test]
    fn both_switches_are_read() {
        let env = env_of(&[
            (HEDGING_ENABLED_ENV, "on"),
            (HEDGING_ENABLED_OVERRIDE_ENV, "No"),
        ]);
        assert_eq!(env.hedging_enabled, Some(true));
        assert_eq!(env.hedging_enabled_override, Some(false));
        assert!(env.rejected.is_empty());
    }

    #[test]
    fn unreadable_switch_fails_closed_and_is_reported() {
        let env = env_of(&[
            (HEDGING_ENABLED_OVERRIDE_ENV, "disable"),
            (HEDGING_ENABLED_ENV, "enabled"),
        ]);
        assert_eq!(env.hedging_enabled_override, Some(false));
        assert_eq!(env.hedging_enabled, Some(false));
        assert_eq!(env.rejected.len(), 2);
        let text = env
            .rejected
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            text.contains("AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE=\"disable\""),
            "{text}"
        );
        assert!(
            text.contains("AZURE_COSMOS_HEDGING_ENABLED=\"enabled\""),
            "{text}"
        );
        assert!(text.contains("hedging is turned off"), "{text}");
    }

    #[test]
    fn rejected_values_are_truncated() {
        let long = "x".repeat(500);
        let env = env_of(&[(HEDGING_ENABLED_ENV, &long)]);
        assert_eq!(env.rejected[0].value.len(), MAX_REJECTED_VALUE_CHARS);
    }

    #[test]
    fn consecutive_hedge_win_threshold_parsing() {
        let table: &[(&str, Option<u32>, bool)] = &[
            ("5", Some(5), false),
            (" 12 ", Some(12), false),
            ("1", Some(1), false),
            ("0", None, true),
            ("-3", None, true),
            ("five", None, true),
            ("4294967296", None, true),
            ("", None, false),
        ];
        for &(text, want, rejected) in table {
            let env = env_of(&[(CONSECUTIVE_HEDGE_WIN_THRESHOLD_ENV, text)]);
            assert_eq!(
                env.consecutive_hedge_win_threshold.map(NonZeroU32::get),
                want,
                "{text:?}"
            );
            assert_eq!(!env.rejected.is_empty(), rejected, "{text:?}");
        }
        assert_eq!(DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD.get(), 5);
    }
}
