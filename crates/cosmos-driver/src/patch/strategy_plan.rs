//! Which way one PATCH goes, from its strategy, what the driver knows of the account's PATCH
//! verb and what the instructions need: one pure decision, tested as a table.
//!
//! `Auto` (the default) sends the service's verb when the instructions fit it (at most
//! [`MAX_NATIVE_OPERATIONS`]) and the account serves it (or it is not known yet: the first answer
//! teaches it); it runs the read-modify-write loop when the account does not serve the verb or
//! the instructions need the loop. A `condition` only the verb can evaluate: where the loop would
//! have to run, the PATCH is refused, never run without it.

use crate::options::PatchStrategy;

/// Most operations the service's PATCH verb takes in one request.
pub(crate) const MAX_NATIVE_OPERATIONS: usize = 10;

/// What the instructions of one PATCH ask of the strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Needs {
    /// How many operations there are.
    pub operations: usize,
    /// Whether a `condition` is set.
    pub condition: bool,
}

/// Which way the PATCH goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Plan {
    /// The service's verb.
    Native,
    /// The service's verb, learning from its answer whether the account serves it (a 405 or 501
    /// falls back to the loop, or to [`Refusal::ConditionNeedsVerb`] with a condition).
    NativeLearning,
    /// The read-modify-write loop.
    Loop,
    /// Refused before anything is sent.
    Refuse(Refusal),
}

/// Why a PATCH is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// A condition, where only the loop can run (the reason it must).
    ConditionNeedsVerb(LoopReason),
    /// More operations than the verb takes, with `PatchStrategy::Native`.
    TooManyForVerb(usize),
}

/// Why the loop is the one that runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LoopReason {
    /// `PatchStrategy::ReadModifyWrite` was asked for.
    Asked,
    /// The account does not serve the verb.
    NotServed,
    /// The instructions do not fit the verb.
    TooManyForVerb,
}

/// The plan of a PATCH with `needs` under `strategy`, `served` being what the driver knows of the
/// account's verb (`None`: not learnt yet).
pub(super) fn plan(strategy: PatchStrategy, served: Option<bool>, needs: Needs) -> Plan {
    let fits_verb = needs.operations <= MAX_NATIVE_OPERATIONS;
    let looped = |why| {
        if needs.condition {
            Plan::Refuse(Refusal::ConditionNeedsVerb(why))
        } else {
            Plan::Loop
        }
    };
    match strategy {
        PatchStrategy::ReadModifyWrite => looped(LoopReason::Asked),
        PatchStrategy::Native if fits_verb => Plan::Native,
        PatchStrategy::Native => Plan::Refuse(Refusal::TooManyForVerb(needs.operations)),
        PatchStrategy::Auto if !fits_verb => looped(LoopReason::TooManyForVerb),
        PatchStrategy::Auto => match served {
            Some(false) => looped(LoopReason::NotServed),
            Some(true) => Plan::Native,
            None => Plan::NativeLearning,
        },
    }
}

impl Refusal {
    /// The refusal as the caller reads it.
    pub(super) fn message(self) -> String {
        match self {
            Refusal::ConditionNeedsVerb(why) => {
                let with = match why {
                    LoopReason::Asked => "PatchStrategy::ReadModifyWrite",
                    LoopReason::NotServed => "an account that does not serve PATCH",
                    LoopReason::TooManyForVerb => {
                        "more operations than the service's PATCH takes in one request"
                    }
                };
                format!(
                    "a PATCH with a condition needs the service's PATCH verb (PatchStrategy::Native \
                     or Auto on an account that serves it, with at most {MAX_NATIVE_OPERATIONS} \
                     operations); the read-modify-write loop used with {with} cannot evaluate it"
                )
            }
            Refusal::TooManyForVerb(n) => format!(
                "the PATCH has {n} operations; the service's PATCH verb takes at most \
                 {MAX_NATIVE_OPERATIONS} (PatchStrategy::Auto or ReadModifyWrite run more as \
                 read-modify-write)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LoopReason as Why;
    use PatchStrategy::{Auto, Native, ReadModifyWrite as Rmw};

    #[test]
    fn each_strategy_goes_its_way() {
        let few = |condition| Needs {
            operations: 2,
            condition,
        };
        let many = |condition| Needs {
            operations: MAX_NATIVE_OPERATIONS + 1,
            condition,
        };
        let edge = Needs {
            operations: MAX_NATIVE_OPERATIONS,
            condition: false,
        };
        let refuse_cond = |why| Plan::Refuse(Refusal::ConditionNeedsVerb(why));
        let table: &[(PatchStrategy, Option<bool>, Needs, Plan)] = &[
            (Rmw, None, few(false), Plan::Loop),
            (Rmw, Some(true), many(false), Plan::Loop),
            (Rmw, Some(true), few(true), refuse_cond(Why::Asked)),
            (Native, None, few(false), Plan::Native),
            (Native, Some(false), few(true), Plan::Native),
            (Native, None, edge, Plan::Native),
            (
                Native,
                Some(true),
                many(false),
                Plan::Refuse(Refusal::TooManyForVerb(11)),
            ),
            (Auto, None, few(false), Plan::NativeLearning),
            (Auto, None, few(true), Plan::NativeLearning),
            (Auto, Some(true), few(true), Plan::Native),
            (Auto, Some(true), edge, Plan::Native),
            (Auto, Some(false), few(false), Plan::Loop),
            (Auto, Some(false), few(true), refuse_cond(Why::NotServed)),
            (Auto, None, many(false), Plan::Loop),
            (Auto, Some(true), many(false), Plan::Loop),
            (
                Auto,
                Some(true),
                many(true),
                refuse_cond(Why::TooManyForVerb),
            ),
        ];
        for (strategy, served, needs, expected) in table {
            assert_eq!(
                plan(*strategy, *served, *needs),
                *expected,
                "{strategy} {served:?} {needs:?}"
            );
        }
    }

    #[test]
    fn the_default_is_auto() {
        assert_eq!(PatchStrategy::default(), Auto);
    }
}
