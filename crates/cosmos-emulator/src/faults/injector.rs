//! The fault injector: the latency-profile layer plus the user's rules, shared by every connection.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use rand::Rng;

use super::installed_rule::InstalledRule;
use super::profiles::profile_rules;
use super::rule_limits::{check_count, check_rule, MAX_DOCUMENT_BYTES};
use super::{
    rule_json, FaultGuard, FaultRule, Reaction, RequestFacts, RuleId, RuleSnapshot, Verdict,
};

/// Decides, per request, whether and how to delay or break it.
///
/// Two layers are evaluated for each request:
/// 1. the latency profile (see [`super::profiles`]): every matching profile rule adds its delay;
/// 2. the user's rules, in the order they were added: the first one that fires decides the action
///    and adds its own delay (if any); later rules are not looked at.
///
/// Shared, cheap to clone (Arc inside), safe to use from every connection task; rules can be
/// changed while the emulator runs. Evaluation takes one uncontended read lock and touches only
/// atomics (hit counters) and the calling thread's random number generator.
#[derive(Clone, Default)]
pub struct FaultInjector {
    shared: Arc<Shared>,
}

#[derive(Default)]
pub(crate) struct Shared {
    layers: RwLock<Layers>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Layers {
    profile_name: Option<String>,
    profile_regions: Vec<String>,
    profile: Vec<InstalledRule>,
    user: Vec<Arc<InstalledRule>>,
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, Layers> {
        self.layers
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Layers> {
        self.layers
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn new_id(&self) -> RuleId {
        RuleId(self.next_id.fetch_add(1, Relaxed) + 1)
    }

    pub(crate) fn remove(&self, id: RuleId) -> bool {
        let mut layers = self.write();
        let before = layers.user.len();
        layers.user.retain(|rule| rule.id() != id);
        layers.user.len() != before
    }
}

impl FaultInjector {
    /// An injector with no rules and profile `local`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Install a named latency profile's rules ("local", "geo", "slow-primary", "slow-both") for
    /// these regions (in account order: first = primary), replacing the previous profile. Unknown
    /// name -> Err with the list of known names.
    pub fn set_profile(&self, name: &str, regions: &[String]) -> Result<(), String> {
        let rules = profile_rules(name, regions)?;
        let installed = rules
            .into_iter()
            .map(|rule| InstalledRule::new(self.shared.new_id(), rule))
            .collect();
        let mut layers = self.shared.write();
        layers.profile_name = Some(name.to_owned());
        layers.profile_regions = regions.to_vec();
        layers.profile = installed;
        Ok(())
    }

    /// Switch to another profile for the regions given to the last [`FaultInjector::set_profile`].
    /// Errors when the name is unknown or no regions were ever given.
    pub fn switch_profile(&self, name: &str) -> Result<(), String> {
        let regions = self.profile_regions();
        if regions.is_empty() && name != "local" {
            return Err(
                "no regions are known yet: give them along with the profile name".to_owned(),
            );
        }
        self.set_profile(name, &regions)
    }

    /// The name of the active profile (`local` when none was set).
    pub fn profile_name(&self) -> String {
        self.shared
            .read()
            .profile_name
            .clone()
            .unwrap_or_else(|| "local".to_owned())
    }

    /// The regions the active profile was built for, in account order.
    pub fn profile_regions(&self) -> Vec<String> {
        self.shared.read().profile_regions.clone()
    }

    /// The active profile's rules with their hit counts.
    pub fn profile_rules(&self) -> Vec<RuleSnapshot> {
        self.shared
            .read()
            .profile
            .iter()
            .map(InstalledRule::snapshot)
            .collect()
    }

    /// Evaluate one request: latency-profile layer + first matching user rule; counts the hit.
    pub fn evaluate(&self, facts: &RequestFacts<'_>) -> Verdict {
        self.evaluate_with(facts, &mut rand::rng())
    }

    /// [`FaultInjector::evaluate`] with a given random number generator (seeded in tests).
    pub fn evaluate_with<R: Rng + ?Sized>(&self, facts: &RequestFacts<'_>, rng: &mut R) -> Verdict {
        let layers = self.shared.read();
        let mut delay = Duration::ZERO;
        for rule in &layers.profile {
            if rule.fires(facts, rng) {
                delay += rule.rule().reaction.outcome(rng).0;
            }
        }
        for rule in &layers.user {
            if rule.fires(facts, rng) {
                let (extra, reaction) = rule.rule().reaction.outcome(rng);
                return Verdict {
                    delay: delay + extra,
                    reaction,
                };
            }
        }
        Verdict {
            delay,
            reaction: Reaction::SERVE,
        }
    }

    /// Add a rule after the existing ones; it is removed when the returned guard drops.
    pub fn add(&self, rule: FaultRule) -> FaultGuard {
        let installed = self.install(rule);
        FaultGuard::new(installed, Arc::downgrade(&self.shared))
    }

    /// Add a rule after the existing ones; it stays until [`FaultInjector::remove`] or
    /// [`FaultInjector::clear`].
    pub fn add_persistent(&self, rule: FaultRule) -> RuleId {
        self.install(rule).id()
    }

    fn install(&self, rule: FaultRule) -> Arc<InstalledRule> {
        let installed = Arc::new(InstalledRule::new(self.shared.new_id(), rule));
        self.shared.write().user.push(installed.clone());
        installed
    }

    /// Remove a user rule; false when no rule has this id.
    pub fn remove(&self, id: RuleId) -> bool {
        self.shared.remove(id)
    }

    /// Switch a user rule on or off; false when no rule has this id.
    pub fn set_enabled(&self, id: RuleId, on: bool) -> bool {
        let layers = self.shared.read();
        match layers.user.iter().find(|rule| rule.id() == id) {
            Some(rule) => {
                rule.set_enabled(on);
                true
            }
            None => false,
        }
    }

    /// The user rules, in evaluation order, with their hit counts.
    pub fn rules(&self) -> Vec<RuleSnapshot> {
        self.shared
            .read()
            .user
            .iter()
            .map(|rule| rule.snapshot())
            .collect()
    }

    /// Remove every user rule (the latency profile stays).
    pub fn clear(&self) {
        self.shared.write().user.clear();
    }

    /// Add rules from JSON (the `--faults` file and admin API format, see [`super::rule_json`]).
    /// Either all rules are added or, on an error naming the bad field or the limit, none; the
    /// limits are in [`super::rule_limits`].
    pub fn load_json(&self, json: &[u8]) -> Result<Vec<RuleId>, String> {
        if json.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "fault rules: the document is {} bytes long; at most {MAX_DOCUMENT_BYTES} bytes are allowed",
                json.len()
            ));
        }
        let rules = rule_json::parse_rules(json)?;
        for (i, rule) in rules.iter().enumerate() {
            check_rule(rule, &format!("rules[{i}]"))?;
        }
        let mut layers = self.shared.write();
        check_count(layers.user.len(), rules.len())?;
        let mut ids = Vec::with_capacity(rules.len());
        for rule in rules {
            let installed = Arc::new(InstalledRule::new(self.shared.new_id(), rule));
            ids.push(installed.id());
            layers.user.push(installed);
        }
        Ok(ids)
    }
}

impl std::fmt::Debug for FaultInjector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let layers = self.shared.read();
        f.debug_struct("FaultInjector")
            .field(
                "profile",
                &layers.profile_name.as_deref().unwrap_or("local"),
            )
            .field("rules", &layers.user.len())
            .finish()
    }
}
