//! Which leases an instance takes in one acquire round: a pure decision over plain data.
//!
//! A lease is expired when it has no owner or its owner has not written it for longer than the
//! expiration interval. The live instances are the owners of unexpired leases and this one. The
//! fair share is `ceil(leases / live instances)`. An instance under it takes expired leases first
//! (the oldest first, up to what it lacks); when none is expired, it takes one lease of the most
//! loaded instance, only when that one owns at least two more than it does (so two instances
//! never trade a lease back and forth). Leases the store shows as this instance's but that it is
//! not working on (after a restart under the same name) are taken back first.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// One lease as the decision sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaseView {
    pub(crate) id: String,
    pub(crate) owner: Option<String>,
    pub(crate) renewed_at: SystemTime,
    /// Whether this instance is working on it now.
    pub(crate) held: bool,
}

/// Whether `lease` may be taken without asking: no owner, or not renewed within `expiration`.
pub(crate) fn is_expired(lease: &LeaseView, now: SystemTime, expiration: Duration) -> bool {
    match &lease.owner {
        None => true,
        Some(_) => now
            .duration_since(lease.renewed_at)
            .is_ok_and(|age| age > expiration),
    }
}

/// The ids of the leases `me` should take now, in the order to take them.
pub(crate) fn leases_to_take(
    leases: &[LeaseView],
    me: &str,
    now: SystemTime,
    expiration: Duration,
) -> Vec<String> {
    if leases.is_empty() {
        return Vec::new();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    counts.insert(me, 0);
    let mut expired: Vec<&LeaseView> = Vec::new();
    let mut reclaim: Vec<String> = Vec::new();
    for lease in leases {
        if is_expired(lease, now, expiration) {
            expired.push(lease);
            continue;
        }
        let owner = lease.owner.as_deref().unwrap_or_default();
        *counts.entry(owner).or_insert(0) += 1;
        if owner == me && !lease.held {
            reclaim.push(lease.id.clone());
        }
    }
    let fair = leases.len().div_ceil(counts.len());
    let mine = counts[me];
    let need = fair.saturating_sub(mine);
    let mut take = reclaim;
    if need == 0 {
        return take;
    }
    if !expired.is_empty() {
        expired.sort_by(|a, b| (a.renewed_at, &a.id).cmp(&(b.renewed_at, &b.id)));
        take.extend(expired.into_iter().take(need).map(|l| l.id.clone()));
        return take;
    }
    let busiest = counts
        .iter()
        .filter(|(owner, _)| **owner != me)
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
    if let Some((&owner, &count)) = busiest {
        if count >= mine + 2 {
            let victim = leases
                .iter()
                .filter(|l| l.owner.as_deref() == Some(owner))
                .map(|l| &l.id)
                .min();
            take.extend(victim.cloned());
        }
    }
    take
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    const EXP: Duration = Duration::from_secs(60);

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(10_000)
    }

    /// `spec`: one lease per entry, `owner` or `owner!` (expired) or `-` (no owner), `owner*`
    /// (held by this instance); ids are l0, l1, ... in order.
    fn leases(spec: &[&str]) -> Vec<LeaseView> {
        spec.iter()
            .enumerate()
            .map(|(i, s)| {
                let (name, old) = match s.strip_suffix('!') {
                    Some(n) => (n, true),
                    None => (*s, false),
                };
                let (name, held) = match name.strip_suffix('*') {
                    Some(n) => (n, true),
                    None => (name, false),
                };
                let age = if old { 61 + i as u64 } else { 5 };
                LeaseView {
                    id: format!("l{i}"),
                    owner: (name != "-").then(|| name.to_owned()),
                    renewed_at: now() - Duration::from_secs(age),
                    held,
                }
            })
            .collect()
    }

    #[test]
    fn the_decision_table() {
        // (leases, me, what to take)
        let table: &[(&[&str], &str, &[&str])] = &[
            (&[], "a", &[]),
            // A first instance takes every unowned lease.
            (&["-", "-", "-", "-"], "a", &["l0", "l1", "l2", "l3"]),
            // A second one, with every lease owned and fresh, takes one at a time from the busiest.
            (&["a", "a", "a", "a"], "b", &["l0"]),
            (&["b*", "a", "a", "a"], "b", &["l1"]),
            // Two each: balanced, nothing to take.
            (&["b*", "b*", "a", "a"], "b", &[]),
            // Within one of the fair share: no trading back and forth.
            (&["a", "a", "a", "b*", "b*"], "b", &[]),
            (&["a", "a", "b", "b", "c*"], "c", &[]),
            // An instance that died: its expired leases go, oldest first, up to the fair share.
            (&["a*", "a*", "b", "b", "c!", "c!"], "a", &["l5"]),
            (&["a*", "a*", "b!", "b!"], "a", &["l3", "l2"]),
            // Expired leases come before taking from the busiest.
            (&["a", "a", "a", "a", "-", "b*"], "b", &["l4"]),
            // A lease the store says is mine but that I do not work on (a restart) is taken back.
            (&["a", "a", "b", "b"], "a", &["l0", "l1"]),
            (&["a", "a*", "b", "b"], "a", &["l0"]),
            // Ties between the busiest go to the smallest name; the lease taken is its smallest id.
            (&["c", "c", "c", "b", "b", "b"], "a", &["l3"]),
        ];
        for (spec, me, want) in table {
            let got = leases_to_take(&leases(spec), me, now(), EXP);
            assert_eq!(got, *want, "{spec:?} as {me}");
        }
    }

    #[test]
    fn expiry_is_strictly_after_the_interval_and_a_future_time_is_fresh() {
        let mut l = leases(&["a"]).remove(0);
        l.renewed_at = now() - EXP;
        assert!(!is_expired(&l, now(), EXP));
        l.renewed_at = now() - EXP - Duration::from_millis(1);
        assert!(is_expired(&l, now(), EXP));
        l.renewed_at = now() + Duration::from_secs(5);
        assert!(!is_expired(&l, now(), EXP));
        l.owner = None;
        assert!(is_expired(&l, now(), EXP));
    }

    /// Repeating the decision for each instance in turn settles every instance within one of the
    /// fair share, from any start, and then takes nothing more.
    #[test]
    fn rounds_converge_to_within_one() {
        for (n, k) in [(4, 2), (8, 4), (8, 3), (5, 4), (9, 2), (1, 3)] {
            let names: Vec<String> = (0..k).map(|i| format!("i{i}")).collect();
            let mut owners: Vec<Option<String>> = vec![None; n];
            for _round in 0..(n * k + 2) {
                for me in &names {
                    let views: Vec<LeaseView> = owners
                        .iter()
                        .enumerate()
                        .map(|(i, o)| LeaseView {
                            id: format!("l{i:02}"),
                            owner: o.clone(),
                            renewed_at: now(),
                            held: o.as_deref() == Some(me),
                        })
                        .collect();
                    for id in leases_to_take(&views, me, now(), EXP) {
                        let i: usize = id[1..].parse().unwrap();
                        owners[i] = Some(me.clone());
                    }
                }
            }
            let counts: Vec<usize> = names
                .iter()
                .map(|m| owners.iter().filter(|o| o.as_deref() == Some(m)).count())
                .collect();
            let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            assert!(owners.iter().all(Option::is_some), "{n}/{k}: {owners:?}");
            // Instances that own nothing are not seen by others; with leases to spare each gets some.
            assert!(
                hi - lo <= 1 || n < k,
                "{n} leases, {k} instances: {counts:?}"
            );
        }
    }
}
