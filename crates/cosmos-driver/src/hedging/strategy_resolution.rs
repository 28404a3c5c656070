//! Which hedging strategy is in force for one operation.
//!
//! First of all, the account's kill switch: `disableCrossRegionalHedging` in the database account
//! document (`GET /`), read on every account refresh. When it is `true`, no operation hedges,
//! whatever the operation, the client or the environment variables (the override included) ask
//! for: it is the operator's switch and it is above every other layer. `false`, `null` or a missing
//! property leave the rest of the rule in force, so lifting it restores the configured hedging
//! without a restart. It stops only hedging: end-to-end timeouts, retries, failover and the
//! partition circuit breaker go on as before.
//!
//! Sources: the .NET SDK's docs (azure-cosmos-dotnet-v3 PR #6015, "Cross Region Request
//! Hedging.md") and its implementation (PR #5829) make the gateway's switch the highest-priority
//! setting, above request-level and client-level strategies and the SDK default; Java
//! (azure-sdk-for-java PR #50425) and the Rust SDK's tracking issue (azure-sdk-for-rust #5320,
//! "Honor account-level hedging kill switch") describe the same switch. Java honours it only on
//! accounts with per-partition automatic failover; .NET's docs say regardless. Here it applies
//! regardless of `enablePerPartitionFailoverBehavior`, because this driver's hedging is not tied
//! to per-partition failover: it hedges reads by default (where .NET and Java turn a default
//! strategy on only for accounts with that property `true`), and that property, which real
//! accounts commonly carry as `false`, does not change the driver's hedging in either direction.
//! The environment override (`AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE`) is a local operator's
//! choice; the gateway's switch is still above it, as .NET ranks the gateway first.
//!
//! Below the kill switch, the `hedging_enabled` master switch is resolved, highest layer first:
//!
//! `AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE` > operation > client > `AZURE_COSMOS_HEDGING_ENABLED`
//!
//! When it resolves to a value it is the source of truth: `false` turns hedging off even over an
//! explicit `Hedging(..)`; `true` turns it on even over an explicit `Disabled` (a programmatic
//! `Hedging(..)` at either layer still supplies its threshold, the driver default otherwise).
//! When it is unset everywhere the availability strategies decide: operation > client > the driver
//! default. `Disabled` at a layer suppresses every layer below it.
//!
//! Whether a resolved strategy actually applies to an operation (enough regions, a point read) is
//! [`super::eligibility`]'s question.

use std::num::NonZeroU32;
use std::time::Duration;

use super::env::{HedgingEnv, DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD};
use super::strategy::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use crate::routing::hedging_kill_switch_engaged;

/// The threshold the driver default uses when the request timeout does not lower it.
pub const DEFAULT_HEDGE_THRESHOLD: HedgeThreshold =
    match HedgeThreshold::new(Duration::from_millis(1000)) {
        Some(t) => t,
        None => unreachable!(),
    };

/// The driver default threshold: `min(1000ms, request_timeout / 2)`, and 1000 ms when the request
/// timeout is unset or zero (or so short that half of it is zero).
pub(crate) fn default_threshold(request_timeout: Option<Duration>) -> HedgeThreshold {
    request_timeout
        .and_then(|t| HedgeThreshold::new(t / 2))
        .map_or(DEFAULT_HEDGE_THRESHOLD, |half| {
            half.min(DEFAULT_HEDGE_THRESHOLD)
        })
}

/// The programmatic layers of hedging configuration for one operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HedgingLayers {
    /// The operation's `hedging_enabled`.
    pub operation_hedging_enabled: Option<bool>,
    /// The client's `hedging_enabled`.
    pub client_hedging_enabled: Option<bool>,
    /// The operation's availability strategy.
    pub operation_strategy: Option<AvailabilityStrategy>,
    /// The client's availability strategy.
    pub client_strategy: Option<AvailabilityStrategy>,
    /// The client's request timeout, which lowers the driver default threshold.
    pub request_timeout: Option<Duration>,
    /// The operation's consecutive alternate-win threshold.
    pub operation_consecutive_hedge_win_threshold: Option<NonZeroU32>,
    /// The client's consecutive alternate-win threshold.
    pub client_consecutive_hedge_win_threshold: Option<NonZeroU32>,
}

impl HedgingLayers {
    /// The consecutive alternate-win threshold in force for the operation (operation > client >
    /// environment > 5).
    pub fn consecutive_hedge_win_threshold(&self, env: &HedgingEnv) -> NonZeroU32 {
        resolve_consecutive_hedge_win_threshold(
            self.operation_consecutive_hedge_win_threshold,
            self.client_consecutive_hedge_win_threshold,
            env,
        )
    }
}

/// Where a resolved strategy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StrategySource {
    /// The operation's `Hedging(..)`.
    Operation,
    /// The client's `Hedging(..)`.
    Client,
    /// The driver default (§5.2).
    DriverDefault,
}

/// Why no strategy is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum HedgingOff {
    /// The master switch resolved to `false`.
    SwitchedOff,
    /// The operation's strategy is `Disabled`.
    OperationDisabled,
    /// The client's strategy is `Disabled`.
    ClientDisabled,
    /// The account's kill switch (`disableCrossRegionalHedging: true`) is on.
    AccountKillSwitch,
}

impl HedgingOff {
    /// The reason as logs name it.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            HedgingOff::SwitchedOff => "switched_off",
            HedgingOff::OperationDisabled => "operation_disabled",
            HedgingOff::ClientDisabled => "client_disabled",
            HedgingOff::AccountKillSwitch => "account_kill_switch",
        }
    }
}

/// The outcome of resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ResolvedStrategy {
    /// Hedging with this strategy, from this layer.
    Hedging {
        /// The strategy in force.
        strategy: HedgingStrategy,
        /// The layer that supplied it.
        source: StrategySource,
    },
    /// No hedging, for this reason.
    Off(HedgingOff),
}

impl ResolvedStrategy {
    /// The strategy in force, if any.
    pub(crate) fn strategy(self) -> Option<HedgingStrategy> {
        match self {
            ResolvedStrategy::Hedging { strategy, .. } => Some(strategy),
            ResolvedStrategy::Off(_) => None,
        }
    }
}

/// The master switch: `{ENV}_OVERRIDE > operation > client > {ENV}`; `None` when unset everywhere.
pub(crate) fn resolve_hedging_enabled(
    env: &HedgingEnv,
    operation: Option<bool>,
    client: Option<bool>,
) -> Option<bool> {
    env.hedging_enabled_override
        .or(operation)
        .or(client)
        .or(env.hedging_enabled)
}

/// The strategy in force for one operation, given the account's kill switch
/// (`disableCrossRegionalHedging`: `None` when the account document does not carry it).
pub(crate) fn resolve_strategy(
    env: &HedgingEnv,
    layers: &HedgingLayers,
    account_kill_switch: Option<bool>,
) -> ResolvedStrategy {
    if hedging_kill_switch_engaged(account_kill_switch) {
        return ResolvedStrategy::Off(HedgingOff::AccountKillSwitch);
    }
    let default = || ResolvedStrategy::Hedging {
        strategy: HedgingStrategy::new(default_threshold(layers.request_timeout)),
        source: StrategySource::DriverDefault,
    };
    let programmatic = [
        (
            layers.operation_strategy,
            StrategySource::Operation,
            HedgingOff::OperationDisabled,
        ),
        (
            layers.client_strategy,
            StrategySource::Client,
            HedgingOff::ClientDisabled,
        ),
    ];
    match resolve_hedging_enabled(
        env,
        layers.operation_hedging_enabled,
        layers.client_hedging_enabled,
    ) {
        Some(false) => ResolvedStrategy::Off(HedgingOff::SwitchedOff),
        Some(true) => programmatic
            .into_iter()
            .find_map(|(layer, source, _)| match layer {
                Some(AvailabilityStrategy::Hedging(strategy)) => {
                    Some(ResolvedStrategy::Hedging { strategy, source })
                }
                _ => None,
            })
            .unwrap_or_else(default),
        None => programmatic
            .into_iter()
            .find_map(|(layer, source, off)| match layer {
                Some(AvailabilityStrategy::Hedging(strategy)) => {
                    Some(ResolvedStrategy::Hedging { strategy, source })
                }
                Some(AvailabilityStrategy::Disabled) => Some(ResolvedStrategy::Off(off)),
                None => None,
            })
            .unwrap_or_else(default),
    }
}

/// Consecutive alternate wins before the primary partition is marked unhealthy:
/// operation > client > `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD` > 5.
pub(crate) fn resolve_consecutive_hedge_win_threshold(
    operation: Option<NonZeroU32>,
    client: Option<NonZeroU32>,
    env: &HedgingEnv,
) -> NonZeroU32 {
    operation
        .or(client)
        .or(env.consecutive_hedge_win_threshold)
        .unwrap_or(DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AvailabilityStrategy::Disabled;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }
    fn hedging(n: u64) -> AvailabilityStrategy {
        AvailabilityStrategy::Hedging(HedgingStrategy::new(HedgeThreshold::new(ms(n)).unwrap()))
    }
    fn on(n: u64, source: StrategySource) -> ResolvedStrategy {
        ResolvedStrategy::Hedging {
            strategy: HedgingStrategy::new(HedgeThreshold::new(ms(n)).unwrap()),
            source,
        }
    }
    fn env(enabled: Option<bool>, overridden: Option<bool>) -> HedgingEnv {
        HedgingEnv {
            hedging_enabled: enabled,
            hedging_enabled_override: overridden,
            ..Default::default()
        }
    }

    #[test]
    fn driver_default_threshold() {
        let table: &[(Option<u64>, u64)] = &[
            (None, 1000),
            (Some(0), 1000),
            (Some(100), 50),
            (Some(1999), 999),
            (Some(2000), 1000),
            (Some(2001), 1000),
            (Some(60_000), 1000),
        ];
        for &(timeout, want) in table {
            let t = default_threshold(timeout.map(ms)).get();
            let want = if timeout == Some(1999) {
                Duration::from_micros(999_500)
            } else {
                ms(want)
            };
            assert_eq!(t, want, "timeout {timeout:?}");
        }
        assert_eq!(
            default_threshold(Some(Duration::from_nanos(1))).get(),
            ms(1000)
        );
    }

    #[test]
    fn master_switch_layers() {
        // (override, operation, client, env) -> resolved
        type Row = (
            Option<bool>,
            Option<bool>,
            Option<bool>,
            Option<bool>,
            Option<bool>,
        );
        let table: &[Row] = &[
            (None, None, None, None, None),
            (None, None, None, Some(true), Some(true)),
            (None, None, Some(false), Some(true), Some(false)),
            (None, Some(true), Some(false), Some(false), Some(true)),
            (Some(false), Some(true), Some(true), Some(true), Some(false)),
            (
                Some(true),
                Some(false),
                Some(false),
                Some(false),
                Some(true),
            ),
            (Some(false), None, None, None, Some(false)),
        ];
        for &(ov, op, cl, en, want) in table {
            assert_eq!(
                resolve_hedging_enabled(&env(en, ov), op, cl),
                want,
                "{ov:?} {op:?} {cl:?} {en:?}"
            );
        }
    }

    #[test]
    fn strategy_priority_table() {
        use HedgingOff::*;
        use StrategySource::*;
        // (env enabled, env override, op enabled, client enabled, op strategy, client strategy) -> want
        type Row = (
            Option<bool>,
            Option<bool>,
            Option<bool>,
            Option<bool>,
            Option<AvailabilityStrategy>,
            Option<AvailabilityStrategy>,
            ResolvedStrategy,
        );
        let table: Vec<Row> = vec![
            // Nothing configured: the driver default.
            (None, None, None, None, None, None, on(1000, DriverDefault)),
            // Operation beats client beats default.
            (
                None,
                None,
                None,
                None,
                Some(hedging(200)),
                Some(hedging(300)),
                on(200, Operation),
            ),
            (
                None,
                None,
                None,
                None,
                None,
                Some(hedging(300)),
                on(300, Client),
            ),
            // Disabled suppresses every layer below it.
            (
                None,
                None,
                None,
                None,
                Some(Disabled),
                Some(hedging(300)),
                ResolvedStrategy::Off(OperationDisabled),
            ),
            (
                None,
                None,
                None,
                None,
                None,
                Some(Disabled),
                ResolvedStrategy::Off(ClientDisabled),
            ),
            (
                None,
                None,
                None,
                None,
                Some(hedging(200)),
                Some(Disabled),
                on(200, Operation),
            ),
            // The env switch off beats an explicit Hedging(..).
            (
                Some(false),
                None,
                None,
                None,
                Some(hedging(200)),
                None,
                ResolvedStrategy::Off(SwitchedOff),
            ),
            // The env switch on beats an explicit Disabled; the default supplies the threshold.
            (
                Some(true),
                None,
                None,
                None,
                Some(Disabled),
                Some(Disabled),
                on(1000, DriverDefault),
            ),
            // ... but a programmatic Hedging(..) still supplies its threshold.
            (
                Some(true),
                None,
                None,
                None,
                Some(Disabled),
                Some(hedging(300)),
                on(300, Client),
            ),
            // Operation-level switch beats the env switch.
            (
                Some(false),
                None,
                Some(true),
                None,
                None,
                Some(hedging(300)),
                on(300, Client),
            ),
            (
                Some(true),
                None,
                Some(false),
                None,
                Some(hedging(200)),
                None,
                ResolvedStrategy::Off(SwitchedOff),
            ),
            // Client-level switch beats the env switch, loses to the operation's.
            (
                Some(true),
                None,
                None,
                Some(false),
                None,
                None,
                ResolvedStrategy::Off(SwitchedOff),
            ),
            (
                None,
                None,
                Some(true),
                Some(false),
                Some(Disabled),
                None,
                on(1000, DriverDefault),
            ),
            // The override beats everything, including a per-request switch.
            (
                None,
                Some(false),
                Some(true),
                Some(true),
                Some(hedging(200)),
                Some(hedging(300)),
                ResolvedStrategy::Off(SwitchedOff),
            ),
            (
                None,
                Some(true),
                Some(false),
                Some(false),
                Some(Disabled),
                Some(Disabled),
                on(1000, DriverDefault),
            ),
            (
                Some(false),
                Some(true),
                None,
                None,
                Some(hedging(200)),
                None,
                on(200, Operation),
            ),
        ];
        for (i, (en, ov, op_en, cl_en, op, cl, want)) in table.into_iter().enumerate() {
            let layers = HedgingLayers {
                operation_hedging_enabled: op_en,
                client_hedging_enabled: cl_en,
                operation_strategy: op,
                client_strategy: cl,
                request_timeout: None,
                ..Default::default()
            };
            assert_eq!(
                resolve_strategy(&env(en, ov), &layers, None),
                want,
                "row {i}"
            );
        }
    }

    #[test]
    fn the_account_kill_switch_is_above_every_other_layer() {
        use HedgingOff::*;
        use StrategySource::*;
        let killed = ResolvedStrategy::Off(AccountKillSwitch);
        let layers = |op_en, cl_en, op, cl| HedgingLayers {
            operation_hedging_enabled: op_en,
            client_hedging_enabled: cl_en,
            operation_strategy: op,
            client_strategy: cl,
            ..Default::default()
        };
        let nothing = layers(None, None, None, None);
        // (what, env, layers, disableCrossRegionalHedging) -> want
        let table: Vec<(
            &str,
            HedgingEnv,
            HedgingLayers,
            Option<bool>,
            ResolvedStrategy,
        )> = vec![
            (
                "default, switch absent",
                env(None, None),
                nothing,
                None,
                on(1000, DriverDefault),
            ),
            (
                "default, switch false",
                env(None, None),
                nothing,
                Some(false),
                on(1000, DriverDefault),
            ),
            (
                "default, switch true",
                env(None, None),
                nothing,
                Some(true),
                killed,
            ),
            (
                "operation strategy",
                env(None, None),
                layers(None, None, Some(hedging(200)), None),
                Some(true),
                killed,
            ),
            (
                "operation switch on",
                env(None, None),
                layers(Some(true), None, None, None),
                Some(true),
                killed,
            ),
            (
                "client strategy",
                env(None, None),
                layers(None, None, None, Some(hedging(300))),
                Some(true),
                killed,
            ),
            (
                "client switch on and both strategies",
                env(None, None),
                layers(None, Some(true), Some(hedging(200)), Some(hedging(300))),
                Some(true),
                killed,
            ),
            ("env on", env(Some(true), None), nothing, Some(true), killed),
            (
                "env override on",
                env(None, Some(true)),
                nothing,
                Some(true),
                killed,
            ),
            (
                "everything on",
                env(Some(true), Some(true)),
                layers(
                    Some(true),
                    Some(true),
                    Some(hedging(200)),
                    Some(hedging(300)),
                ),
                Some(true),
                killed,
            ),
            // Lifted (false or absent): the layers decide again, as without the switch.
            (
                "operation strategy, switch false",
                env(None, None),
                layers(None, None, Some(hedging(200)), None),
                Some(false),
                on(200, Operation),
            ),
            (
                "client strategy, switch absent",
                env(None, None),
                layers(None, None, None, Some(hedging(300))),
                None,
                on(300, Client),
            ),
            (
                "client off, switch false",
                env(None, None),
                layers(None, Some(false), None, None),
                Some(false),
                ResolvedStrategy::Off(SwitchedOff),
            ),
            (
                "operation disabled, switch false",
                env(None, None),
                layers(None, None, Some(Disabled), None),
                Some(false),
                ResolvedStrategy::Off(OperationDisabled),
            ),
            (
                "env override off, switch false",
                env(None, Some(false)),
                nothing,
                Some(false),
                ResolvedStrategy::Off(SwitchedOff),
            ),
        ];
        for (what, env, layers, switch, want) in table {
            assert_eq!(resolve_strategy(&env, &layers, switch), want, "{what}");
        }
    }

    #[test]
    fn driver_default_uses_request_timeout() {
        let layers = HedgingLayers {
            request_timeout: Some(ms(600)),
            ..Default::default()
        };
        assert_eq!(
            resolve_strategy(&HedgingEnv::default(), &layers, None),
            on(300, StrategySource::DriverDefault)
        );
    }

    #[test]
    fn operation_disabled_leaves_siblings_alone() {
        let layers = HedgingLayers {
            operation_strategy: Some(Disabled),
            client_strategy: Some(hedging(250)),
            ..Default::default()
        };
        assert_eq!(
            resolve_strategy(&HedgingEnv::default(), &layers, None).strategy(),
            None
        );
        let sibling = HedgingLayers {
            operation_strategy: None,
            ..layers
        };
        assert_eq!(
            resolve_strategy(&HedgingEnv::default(), &sibling, None),
            on(250, StrategySource::Client)
        );
    }

    #[test]
    fn consecutive_hedge_win_threshold_layers() {
        let n = |v| NonZeroU32::new(v);
        let e = HedgingEnv {
            consecutive_hedge_win_threshold: n(7),
            ..Default::default()
        };
        assert_eq!(
            resolve_consecutive_hedge_win_threshold(n(2), n(3), &e).get(),
            2
        );
        assert_eq!(
            resolve_consecutive_hedge_win_threshold(None, n(3), &e).get(),
            3
        );
        assert_eq!(
            resolve_consecutive_hedge_win_threshold(None, None, &e).get(),
            7
        );
        assert_eq!(
            resolve_consecutive_hedge_win_threshold(None, None, &HedgingEnv::default()).get(),
            5
        );
    }

    #[test]
    fn layers_resolve_the_win_threshold_operation_first() {
        let n = |v| NonZeroU32::new(v);
        let env = HedgingEnv {
            consecutive_hedge_win_threshold: n(7),
            ..Default::default()
        };
        let layers = HedgingLayers {
            operation_consecutive_hedge_win_threshold: n(2),
            client_consecutive_hedge_win_threshold: n(3),
            ..Default::default()
        };
        assert_eq!(layers.consecutive_hedge_win_threshold(&env).get(), 2);
        let client = HedgingLayers {
            operation_consecutive_hedge_win_threshold: None,
            ..layers
        };
        assert_eq!(client.consecutive_hedge_win_threshold(&env).get(), 3);
        let neither = HedgingLayers::default();
        assert_eq!(neither.consecutive_hedge_win_threshold(&env).get(), 7);
        assert_eq!(
            neither
                .consecutive_hedge_win_threshold(&HedgingEnv::default())
                .get(),
            5
        );
    }
}
