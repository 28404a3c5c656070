//! Whether a permission's grant covers a request's resolved operation: one pure function, deny
//! by default.
//!
//! A grant on a resource link covers that resource and everything under it (a container's grant
//! covers its items and scripts). `Read` covers reads; `All` covers writes and stored procedure
//! runs too. A grant limited to a partition key covers only operations whose every touched item
//! has that key. Whatever the grant, a token reads the account and what a client reads to route
//! in the container its resource is in. Databases, containers, users, permissions and offers are
//! administered with the account key only.

use serde_json::Value;

use super::intent::{Action, Decision, Intent, Keys};
use crate::store::users::{Grant, PermissionMode};

pub(super) const ACCOUNT_KEY_ONLY: &str = "only the account key administers this resource";
pub(super) const NOT_COVERED: &str = "the permission's resource does not cover the target";
pub(super) const READ_ONLY: &str = "the permission's mode is Read";
pub(super) const OTHER_KEY: &str =
    "the request touches items outside the permission's partition key";

/// Whether `grant` (its `resource` a canonical link) covers `intent`.
pub(crate) fn decide(grant: &Grant, intent: &Intent) -> Decision {
    let granted: Vec<&str> = grant
        .resource
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let target: Vec<&str> = intent.target.iter().map(String::as_str).collect();
    // A grant names a database or something in one; anything else covers nothing.
    let names_resource =
        granted.len() >= 2 && granted.len().is_multiple_of(2) && granted[0] == "dbs";
    let needs_all = match intent.action {
        Action::ReadAccount => return Decision::Allow,
        Action::Administer => return Decision::Deny(ACCOUNT_KEY_ONLY),
        Action::Route => {
            let related = under(&target, &granted) || under(&granted, &target);
            return if names_resource && related {
                Decision::Allow
            } else {
                Decision::Deny(NOT_COVERED)
            };
        }
        Action::Read => false,
        Action::Write | Action::Execute => true,
    };
    if !names_resource || !under(&target, &granted) {
        return Decision::Deny(NOT_COVERED);
    }
    if needs_all && grant.mode != PermissionMode::All {
        return Decision::Deny(READ_ONLY);
    }
    let Some(key) = &grant.partition_key else {
        return Decision::Allow;
    };
    match &intent.keys {
        Keys::Listed(keys) if !keys.is_empty() && keys.iter().all(|k| same_key(k, key)) => {
            Decision::Allow
        }
        _ => Decision::Deny(OTHER_KEY),
    }
}

/// Whether `link` is `within` or under it.
fn under(link: &[&str], within: &[&str]) -> bool {
    link.len() >= within.len() && link[..within.len()] == *within
}

/// Partition key values as the service compares them (numbers by value).
pub(crate) fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_key(x, y))
        }
        _ => a == b,
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
