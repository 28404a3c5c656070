//! A fault rule (a condition plus a reaction), its id and its listing.

use std::fmt;

use super::condition::clamp_probability;
use super::{Condition, HeaderMatch, OpKind, PathPattern, Reaction};

/// Identifies an installed rule; ids are never reused within one [`super::FaultInjector`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct RuleId(pub u64);

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A fault rule: when `condition` holds for a request, `reaction` happens to it.
///
/// ```
/// use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
/// let rule = FaultRule::new(Reaction::respond(503, 0))
///     .named("east-reads-unavailable")
///     .in_regions(["East US"])
///     .for_ops([OpKind::Read])
///     .first(3);
/// assert_eq!(rule.condition.first, Some(3));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    /// A label for listings and logs (need not be unique).
    pub name: String,
    /// When the rule applies.
    pub condition: Condition,
    /// What it does then.
    pub reaction: Reaction,
}

impl FaultRule {
    /// A rule with this reaction that applies to every request, named after the reaction.
    pub fn new(reaction: Reaction) -> Self {
        let name = match &reaction {
            Reaction::Delay(_) => "delay".to_owned(),
            Reaction::Respond {
                status, sub_status, ..
            } => format!("respond-{status}-{sub_status}"),
            Reaction::Close => "close".to_owned(),
            Reaction::Stall => "stall".to_owned(),
            Reaction::ExecuteThenClose => "execute-then-close".to_owned(),
            Reaction::ExecuteThenRespond { status, sub_status } => {
                format!("execute-then-respond-{status}-{sub_status}")
            }
        };
        FaultRule {
            name,
            condition: Condition::any(),
            reaction,
        }
    }

    /// Set the rule's label.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Apply only to these regions.
    pub fn in_regions<I, S>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.condition.regions = regions.into_iter().map(Into::into).collect();
        self
    }

    /// Apply only to these operation kinds.
    pub fn for_ops(mut self, ops: impl IntoIterator<Item = OpKind>) -> Self {
        self.condition.ops = ops.into_iter().collect();
        self
    }

    /// Apply only to paths matching this pattern (see [`PathPattern`]).
    pub fn on_path(mut self, pattern: impl Into<String>) -> Self {
        self.condition.path = Some(PathPattern::new(pattern));
        self
    }

    /// Apply only to requests carrying header `name` with `value` (see [`HeaderMatch`]).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.condition.header = Some(HeaderMatch::new(name, value));
        self
    }

    /// Fire with this probability (clamped into `0.0..=1.0`; NaN = never).
    pub fn with_probability(mut self, probability: f64) -> Self {
        self.condition.probability = clamp_probability(probability);
        self
    }

    /// Fire at most `n` times.
    pub fn first(mut self, n: u64) -> Self {
        self.condition.first = Some(n);
        self
    }

    /// Let the first `n` matching requests through before firing.
    pub fn after(mut self, n: u64) -> Self {
        self.condition.after = n;
        self
    }

    /// Start switched on or off.
    pub fn enabled(mut self, on: bool) -> Self {
        self.condition.enabled = on;
        self
    }
}

/// An installed rule as listed: its id, its current definition and how often it fired.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleSnapshot {
    /// The rule's id.
    pub id: RuleId,
    /// The rule (with `condition.enabled` as currently switched).
    pub rule: FaultRule,
    /// How many requests it fired on.
    pub hits: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_sets_every_part() {
        let rule = FaultRule::new(Reaction::Close)
            .named("n")
            .in_regions(["A", "B"])
            .for_ops([OpKind::Read, OpKind::Query])
            .on_path("/dbs/*")
            .with_header("X-Test", "on")
            .with_probability(0.5)
            .first(10)
            .after(2)
            .enabled(false);
        assert_eq!(rule.name, "n");
        assert_eq!(rule.condition.regions, vec!["A".to_owned(), "B".to_owned()]);
        assert_eq!(rule.condition.ops, vec![OpKind::Read, OpKind::Query]);
        assert_eq!(rule.condition.path, Some(PathPattern::new("/dbs/*")));
        assert_eq!(
            rule.condition.header,
            Some(HeaderMatch::new("x-test", "on"))
        );
        assert_eq!(rule.condition.probability, 0.5);
        assert_eq!(rule.condition.first, Some(10));
        assert_eq!(rule.condition.after, 2);
        assert!(!rule.condition.enabled);
    }

    #[test]
    fn default_names_describe_the_reaction() {
        assert_eq!(
            FaultRule::new(Reaction::respond(429, 3200)).name,
            "respond-429-3200"
        );
        assert_eq!(FaultRule::new(Reaction::Stall).name, "stall");
        assert_eq!(FaultRule::new(Reaction::delay_ms(5)).name, "delay");
    }

    #[test]
    fn probability_outside_range_is_clamped() {
        assert_eq!(
            FaultRule::new(Reaction::Close)
                .with_probability(3.0)
                .condition
                .probability,
            1.0
        );
        assert_eq!(
            FaultRule::new(Reaction::Close)
                .with_probability(-3.0)
                .condition
                .probability,
            0.0
        );
    }
}
