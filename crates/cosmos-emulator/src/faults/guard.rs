//! A handle on a rule added from the library: removes the rule when dropped.

use std::sync::{Arc, Weak};

use super::injector::Shared;
use super::installed_rule::InstalledRule;
use super::RuleId;

/// Returned by [`super::FaultInjector::add`]: the rule stays installed while the guard lives.
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

    /// The rule's id (for the admin API or [`super::FaultInjector::remove`]).
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
