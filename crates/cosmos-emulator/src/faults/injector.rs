//! The fault injector: the latency-profile layer plus the user's rules, shared by every connection,
//! and the guard of a rule added from the library, which removes the rule when dropped.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

use super::installed_rule::InstalledRule;
use super::profiles::{profile_layer, ActiveWindow};
use super::rule_limits::{check_count, check_rule, MAX_DOCUMENT_BYTES};
use super::{rule_json, FaultRule, Reaction, RequestFacts, RuleId, RuleSnapshot, Verdict};

/// Decides, per request, whether and how to delay or break it.
///
/// Two layers are evaluated for each request:
/// 1. the latency profile (see [`super::profiles`]): every matching profile rule adds its delay
///    (an episode rule only within its window on the profile's clock; a profile rule that is not a
///    delay decides the action);
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
    /// When each profile rule applies on the profile's clock (`None`: always).
    profile_windows: Vec<Option<ActiveWindow>>,
    /// Where the profile's clock reads zero (set when a profile is installed).
    profile_clock: Option<Instant>,
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

/// Returned by [`FaultInjector::add`]: the rule stays installed while the guard lives.
#[must_use = "the rule is removed as soon as the guard is dropped"]
#[derive(Debug)]
pub struct FaultGuard {
    rule: Arc<InstalledRule>,
    /// `None` once [`FaultGuard::keep`] was called.
    injector: Option<Weak<Shared>>,
}

impl FaultGuard {
    pub(crate) fn new(rule: Arc<InstalledRule>, injector: Weak<Shared>) -> Self {
        FaultGuard {
            rule,
            injector: Some(injector),
        }
    }

    /// The rule's id (for the admin API or [`FaultInjector::remove`]).
    pub fn id(&self) -> RuleId {
        self.rule.id()
    }

    /// How many requests the rule fired on so far.
    pub fn hits(&self) -> u64 {
        self.rule.hits()
    }

    /// Switch the rule on or off without removing it.
    pub fn set_enabled(&self, on: bool) {
        self.rule.set_enabled(on);
    }

    /// Leave the rule installed after the guard is gone; returns its id.
    pub fn keep(mut self) -> RuleId {
        self.injector = None;
        self.rule.id()
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        if let Some(shared) = self.injector.take().and_then(|weak| weak.upgrade()) {
            shared.remove(self.rule.id());
        }
    }
}

impl FaultInjector {
    /// An injector with no rules and profile `local`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Install a named latency profile's rules (see [`super::PROFILE_NAMES`]) for these regions (in
    /// account order: first = primary), replacing the previous profile; the profile's clock starts
    /// now. Unknown name -> Err with the list of known names.
    pub fn set_profile(&self, name: &str, regions: &[String]) -> Result<(), String> {
        let layer = profile_layer(name, regions)?;
        let windows = layer.iter().map(|r| r.active).collect();
        let installed = layer
            .into_iter()
            .map(|r| InstalledRule::new(self.shared.new_id(), r.rule))
            .collect();
        let mut layers = self.shared.write();
        layers.profile_name = Some(name.to_owned());
        layers.profile_regions = regions.to_vec();
        layers.profile = installed;
        layers.profile_windows = windows;
        layers.profile_clock = Some(Instant::now());
        Ok(())
    }

    /// Sets the profile's clock to read zero at `zero` (which may be in the past or the future), so
    /// that an episode (`brownout`, `blackhole`) falls where a run wants it.
    pub fn restart_profile_clock(&self, zero: Instant) {
        self.shared.write().profile_clock = Some(zero);
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
    pub(crate) fn evaluate(&self, facts: &RequestFacts<'_>) -> Verdict {
        self.evaluate_with(facts, &mut rand::rng())
    }

    /// [`FaultInjector::evaluate`] with a given random number generator (seeded in tests).
    pub(crate) fn evaluate_with<R: Rng + ?Sized>(
        &self,
        facts: &RequestFacts<'_>,
        rng: &mut R,
    ) -> Verdict {
        self.evaluate_at(facts, rng, Instant::now())
    }

    /// [`FaultInjector::evaluate_with`] at a given time (episode windows are read against it).
    pub(crate) fn evaluate_at<R: Rng + ?Sized>(
        &self,
        facts: &RequestFacts<'_>,
        rng: &mut R,
        now: Instant,
    ) -> Verdict {
        let layers = self.shared.read();
        let mut delay = Duration::ZERO;
        let clock = layers
            .profile_clock
            .map(|zero| now.saturating_duration_since(zero));
        for (rule, window) in layers.profile.iter().zip(&layers.profile_windows) {
            let active = match (window, clock) {
                (None, _) => true,
                (Some(w), Some(elapsed)) => w.contains(elapsed),
                (Some(_), None) => false,
            };
            if active && rule.fires(facts, rng) {
                let (extra, reaction) = rule.rule().reaction.outcome(rng);
                delay += extra;
                if reaction != Reaction::SERVE {
                    return Verdict { delay, reaction };
                }
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

    /// Add rules from JSON (the `--faults` file and admin API format, see `super::rule_json`).
    /// Either all rules are added or, on an error naming the bad field or the limit, none; the
    /// limits are in `super::rule_limits`.
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
