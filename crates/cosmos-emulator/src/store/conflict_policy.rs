//! Which of two concurrent writes of one item stands, by the container's
//! `conflictResolutionPolicy`, as the service decides when replication between write regions
//! converges. Pure: the policy and the two item versions in, the decision out.
//!
//! - `LastWriterWins` (the default) on `conflictResolutionPath` (default `/_ts`): the version
//!   with the higher number there stands; a version without a number there loses to one with
//!   it; on a tie (or neither has one) the later write stands. A delete wins over a concurrent
//!   insert or replace whatever the path holds (the service's rule). Nothing is recorded.
//! - `Custom` without a procedure: the first write stands and the later one goes to the
//!   conflicts feed for the application to resolve (a delete as operation `delete`).
//! - Two deletes agree: nothing conflicts under either policy.
//! - `Custom` with a merge procedure (`conflictResolutionProcedure`, a link to a stored
//!   procedure of the container): the procedure decides ([`Outcome::Merge`]); where it fails or
//!   is missing, the later write goes to the conflicts feed.

use serde_json::{Map, Value};

/// A container's conflict resolution policy.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConflictPolicy {
    /// The property names of the path compared.
    LastWriterWins(Vec<String>),
    /// Conflicts go to the named merge procedure of the container, or with none to the
    /// conflicts feed.
    Custom(Option<String>),
}

/// What becomes of the later of two concurrent writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It stands, replacing the earlier one.
    Stands,
    /// The earlier write stands; the later one is dropped.
    Loses,
    /// The earlier write stands; the later one goes to the conflicts feed.
    Recorded,
    /// The merge procedure decides (the later write is not committed as such).
    Merge,
}

impl ConflictPolicy {
    /// The policy of a container definition (last writer wins on `/_ts` when it has none or an
    /// unreadable one).
    pub(crate) fn of_definition(def: &Map<String, Value>) -> Self {
        let policy = def.get("conflictResolutionPolicy");
        let mode = policy
            .and_then(|p| p.get("mode"))
            .and_then(Value::as_str)
            .unwrap_or("LastWriterWins");
        if mode.eq_ignore_ascii_case("Custom") {
            let procedure = policy
                .and_then(|p| p.get("conflictResolutionProcedure"))
                .and_then(Value::as_str)
                .and_then(|link| link.trim_matches('/').rsplit('/').next())
                .filter(|name| !name.is_empty())
                .map(str::to_owned);
            return Self::Custom(procedure);
        }
        let path = policy
            .and_then(|p| p.get("conflictResolutionPath"))
            .and_then(Value::as_str)
            .filter(|p| !p.trim_matches('/').is_empty())
            .unwrap_or("/_ts");
        Self::LastWriterWins(
            path.trim_matches('/')
                .split('/')
                .map(str::to_owned)
                .collect(),
        )
    }

    /// What becomes of the write `later` that did not see the write `earlier` of the same item
    /// (`None`: a delete).
    pub(crate) fn decide(&self, earlier: Option<&Value>, later: Option<&Value>) -> Outcome {
        let (earlier, later) = match (earlier, later) {
            (None, None) => return Outcome::Stands,
            _ if matches!(self, Self::Custom(Some(_))) => return Outcome::Merge,
            _ if matches!(self, Self::Custom(None)) => return Outcome::Recorded,
            (None, Some(_)) => return Outcome::Loses,
            (Some(_), None) => return Outcome::Stands,
            (Some(e), Some(l)) => (e, l),
        };
        match self {
            Self::Custom(Some(_)) => Outcome::Merge,
            Self::Custom(None) => Outcome::Recorded,
            Self::LastWriterWins(path) => {
                let at = |v: &Value| {
                    path.iter()
                        .try_fold(v, |v, name| v.get(name))
                        .and_then(Value::as_f64)
                };
                match (at(earlier), at(later)) {
                    (Some(e), Some(l)) if e > l => Outcome::Loses,
                    (Some(_), None) => Outcome::Loses,
                    _ => Outcome::Stands,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn policies_are_read_from_the_definition() {
        let of = |v: Value| ConflictPolicy::of_definition(v.as_object().unwrap());
        let lww =
            |p: &[&str]| ConflictPolicy::LastWriterWins(p.iter().map(|s| s.to_string()).collect());
        assert_eq!(of(json!({})), lww(&["_ts"]));
        assert_eq!(
            of(
                json!({"conflictResolutionPolicy": {"mode": "LastWriterWins", "conflictResolutionPath": "/a/b"}})
            ),
            lww(&["a", "b"])
        );
        assert_eq!(
            of(
                json!({"conflictResolutionPolicy": {"mode": "LastWriterWins", "conflictResolutionPath": ""}})
            ),
            lww(&["_ts"])
        );
        assert_eq!(
            of(json!({"conflictResolutionPolicy": {"mode": "Custom"}})),
            ConflictPolicy::Custom(None)
        );
        assert_eq!(
            of(
                json!({"conflictResolutionPolicy": {"mode": "Custom", "conflictResolutionProcedure": ""}})
            ),
            ConflictPolicy::Custom(None)
        );
        assert_eq!(
            of(
                json!({"conflictResolutionPolicy": {"mode": "custom", "conflictResolutionProcedure": "dbs/d/colls/c/sprocs/m"}})
            ),
            ConflictPolicy::Custom(Some("m".into()))
        );
    }

    #[test]
    fn the_policy_decides_which_write_stands() {
        let on_v = ConflictPolicy::LastWriterWins(vec!["v".into()]);
        let custom = ConflictPolicy::Custom(None);
        let merge = ConflictPolicy::Custom(Some("m".into()));
        let v = |n: i64| Some(json!({ "v": n }));
        // (policy, earlier, later, outcome); None is a delete.
        let deletes = [
            (&on_v, None, v(99), Outcome::Loses),
            (&on_v, v(99), None, Outcome::Stands),
            (&on_v, None, None, Outcome::Stands),
            (&custom, None, v(1), Outcome::Recorded),
            (&custom, v(1), None, Outcome::Recorded),
            (&custom, None, None, Outcome::Stands),
            (&merge, None, v(1), Outcome::Merge),
            (&merge, v(1), None, Outcome::Merge),
            (&merge, v(1), v(2), Outcome::Merge),
            (&merge, None, None, Outcome::Stands),
        ];
        for (policy, earlier, later, expected) in deletes {
            assert_eq!(
                policy.decide(earlier.as_ref(), later.as_ref()),
                expected,
                "{policy:?}: {earlier:?} then {later:?}"
            );
        }
        let table = [
            (&on_v, json!({"v": 10}), json!({"v": 5}), Outcome::Loses),
            (&on_v, json!({"v": 5}), json!({"v": 10}), Outcome::Stands),
            (&on_v, json!({"v": 5}), json!({"v": 5}), Outcome::Stands),
            (&on_v, json!({"v": 5}), json!({}), Outcome::Loses),
            (&on_v, json!({}), json!({"v": 5}), Outcome::Stands),
            (&on_v, json!({"v": "z"}), json!({"v": 1}), Outcome::Stands),
            (&on_v, json!({}), json!({}), Outcome::Stands),
            (
                &ConflictPolicy::Custom(None),
                json!({"v": 1}),
                json!({"v": 2}),
                Outcome::Recorded,
            ),
        ];
        for (policy, earlier, later, expected) in table {
            assert_eq!(
                policy.decide(Some(&earlier), Some(&later)),
                expected,
                "{earlier} then {later}"
            );
        }
    }
}
