//! The account's cross-region hedging kill switch (`disableCrossRegionalHedging` in the database
//! account document): when it is engaged, and when a refresh of the account metadata engages or
//! lifts it. What it does to hedging is `hedging::strategy_resolution`'s rule; this file only says
//! when it is on and reports its changes (target `cosmos.hedging`).

/// The tracing target of the switch's change events.
pub(crate) const TARGET: &str = "cosmos.hedging";

/// Whether the switch, as the account document carries it, turns hedging off: only an explicit
/// `true` does; `false`, `null` and a missing property leave the configured hedging in force.
pub(crate) fn engaged(value: Option<bool>) -> bool {
    value == Some(true)
}

/// A change of the switch between two readings of the account metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillSwitchChange {
    /// Hedging is now off for every operation.
    Engaged,
    /// The configured hedging (or the driver default) is in force again.
    Lifted,
}

/// The change from `before` to `after`, if the switch's effect changed (`false` to absent is none).
/// The first reading, at start, compares against `None`: an account that starts with the switch
/// on is reported once, one that starts with it off is not.
pub(crate) fn change(before: Option<bool>, after: Option<bool>) -> Option<KillSwitchChange> {
    match (engaged(before), engaged(after)) {
        (false, true) => Some(KillSwitchChange::Engaged),
        (true, false) => Some(KillSwitchChange::Lifted),
        _ => None,
    }
}

/// Reports `change` once: a WARN when the account turns hedging off (reads wait for a slow region
/// from then on), an INFO when it is lifted.
pub(crate) fn report(change: KillSwitchChange) {
    match change {
        KillSwitchChange::Engaged => tracing::warn!(
            name: "cosmos.hedging.account_kill_switch",
            target: TARGET,
            disable_cross_regional_hedging = true,
            "the account's disableCrossRegionalHedging is on: cross-region hedging is off for every operation"
        ),
        KillSwitchChange::Lifted => tracing::info!(
            name: "cosmos.hedging.account_kill_switch",
            target: TARGET,
            disable_cross_regional_hedging = false,
            "the account's disableCrossRegionalHedging is off: the configured hedging is in force again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_capture::capture_paused;
    use tracing::Level;
    use KillSwitchChange::*;

    #[test]
    fn changes_table() {
        let table: &[(Option<bool>, Option<bool>, Option<KillSwitchChange>)] = &[
            (None, None, None),
            (None, Some(false), None),
            (Some(false), None, None),
            (None, Some(true), Some(Engaged)),
            (Some(false), Some(true), Some(Engaged)),
            (Some(true), Some(true), None),
            (Some(true), Some(false), Some(Lifted)),
            (Some(true), None, Some(Lifted)),
        ];
        for (i, (before, after, want)) in table.iter().enumerate() {
            assert_eq!(change(*before, *after), *want, "row {i}");
        }
    }

    #[test]
    fn each_change_is_one_event_on_the_hedging_target() {
        for (what, level, value) in [
            (Engaged, Level::WARN, "true"),
            (Lifted, Level::INFO, "false"),
        ] {
            let ((), events) = capture_paused(TARGET, || async move { report(what) });
            let all = events.all("cosmos.hedging.account_kill_switch");
            assert_eq!(all.len(), 1, "{what:?}: {:?}", events.names());
            assert_eq!(all[0].level, level, "{what:?}");
            assert_eq!(
                all[0].field("disable_cross_regional_hedging"),
                Some(value),
                "{what:?}"
            );
        }
    }
}
