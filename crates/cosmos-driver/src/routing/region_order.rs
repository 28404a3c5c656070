//! Which regions an operation may use, in the order it tries them. Pure functions over plain data.

use crate::protocol::Region;

use super::account::RegionEndpoint;

/// The most candidate regions an operation considers.
pub(crate) const MAX_CANDIDATES: usize = 16;

/// Indexes into a region list, in the order to try them. Lives on the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidates {
    idx: [u8; MAX_CANDIDATES],
    len: u8,
    /// How many leading candidates are not marked unavailable.
    available: u8,
}

impl Candidates {
    /// No candidates.
    pub(crate) const EMPTY: Candidates = Candidates {
        idx: [0; MAX_CANDIDATES],
        len: 0,
        available: 0,
    };

    /// The number of candidates.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// The index (into the region list the candidates were computed from) at `position`.
    pub(crate) fn get(&self, position: usize) -> Option<usize> {
        (position < self.len as usize).then(|| self.idx[position] as usize)
    }

    /// The candidates' indexes, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.idx[..self.len as usize].iter().map(|&i| i as usize)
    }

    /// How many leading candidates are not marked unavailable (the rest follow them).
    pub(crate) fn available(&self) -> usize {
        self.available as usize
    }

    /// Whether every candidate is marked unavailable (they are still tried, as a last resort).
    pub(crate) fn all_unavailable(&self) -> bool {
        self.len > 0 && self.available == 0
    }

    /// Keeps only the candidates `keep` accepts, in their order; the available ones stay first.
    pub(crate) fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        let mut out = Candidates::EMPTY;
        for (position, i) in self.iter().enumerate() {
            if keep(i) {
                out.idx[out.len as usize] = i as u8;
                out.len += 1;
                if position < self.available as usize {
                    out.available += 1;
                }
            }
        }
        *self = out;
    }

    fn push(&mut self, i: usize) {
        if (self.len as usize) < MAX_CANDIDATES
            && i <= u8::MAX as usize
            && !self.iter().any(|j| j == i)
        {
            self.idx[self.len as usize] = i as u8;
            self.len += 1;
        }
    }
}

/// Orders `regions` for one operation:
///
/// 1. the preferred regions the account has, in preference order;
/// 2. then the account's other regions, in the account's order;
/// 3. minus every excluded region (a hard constraint: they are never returned);
/// 4. regions marked unavailable (`is_unavailable`) moved behind the available ones, keeping order.
pub(crate) fn order_regions(
    regions: &[RegionEndpoint],
    preferred: &[Region],
    excluded: &[Region],
    is_unavailable: impl Fn(usize, &RegionEndpoint) -> bool,
) -> Candidates {
    let mut ordered = Candidates::EMPTY;
    for p in preferred {
        if let Some(i) = regions.iter().position(|r| &r.region == p) {
            ordered.push(i);
        }
    }
    for i in 0..regions.len() {
        ordered.push(i);
    }
    let mut out = Candidates::EMPTY;
    let allowed = |i: usize| !excluded.contains(&regions[i].region);
    for i in ordered
        .iter()
        .filter(|&i| allowed(i) && !is_unavailable(i, &regions[i]))
    {
        out.push(i);
    }
    out.available = out.len;
    for i in ordered
        .iter()
        .filter(|&i| allowed(i) && is_unavailable(i, &regions[i]))
    {
        out.push(i);
    }
    out
}

/// The applicable read regions after exclusions, in order (for hedging eligibility).
pub(crate) fn applicable<'a>(
    regions: &'a [RegionEndpoint],
    candidates: &Candidates,
) -> impl Iterator<Item = &'a RegionEndpoint> + 'a {
    let c = *candidates;
    (0..c.len()).filter_map(move |p| c.get(p).and_then(|i| regions.get(i)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Endpoint;

    fn regions(names: &[&str]) -> Vec<RegionEndpoint> {
        names
            .iter()
            .map(|n| RegionEndpoint {
                region: Region::new(n),
                endpoint: Endpoint::parse(
                    &format!("https://{}.example/", n.replace(' ', "")),
                    false,
                )
                .unwrap(),
            })
            .collect()
    }

    fn names(rs: &[RegionEndpoint], c: &Candidates) -> Vec<String> {
        applicable(rs, c).map(|r| r.region.to_string()).collect()
    }

    fn r(list: &[&str]) -> Vec<Region> {
        list.iter().map(Region::new).collect()
    }

    #[test]
    fn ordering_table() {
        let account = regions(&["East US", "West US", "North Europe"]);
        // (preferred, excluded, unavailable indexes, expected order)
        type Row<'a> = (&'a [&'a str], &'a [&'a str], &'a [usize], &'a [&'a str]);
        let table: &[Row] = &[
            (&[], &[], &[], &["East US", "West US", "North Europe"]),
            (
                &["North Europe"],
                &[],
                &[],
                &["North Europe", "East US", "West US"],
            ),
            (
                &["West US", "Mars"],
                &[],
                &[],
                &["West US", "East US", "North Europe"],
            ),
            (
                &["West US"],
                &["East US"],
                &[],
                &["West US", "North Europe"],
            ),
            (&[], &["East US", "West US", "North Europe"], &[], &[]),
            (
                &["West US"],
                &[],
                &[1],
                &["East US", "North Europe", "West US"],
            ),
            (&[], &["North Europe"], &[0, 1], &["East US", "West US"]),
            (
                &["westus", "EAST-US"],
                &[],
                &[],
                &["West US", "East US", "North Europe"],
            ),
        ];
        for (preferred, excluded, down, want) in table {
            let c = order_regions(&account, &r(preferred), &r(excluded), |i, _| {
                down.contains(&i)
            });
            assert_eq!(
                names(&account, &c),
                want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "{preferred:?} {excluded:?} {down:?}"
            );
        }
    }

    #[test]
    fn retain_keeps_order_and_availability() {
        let account = regions(&["A", "B", "C", "D"]);
        // Order: A, C (available), then B, D (marked).
        let mut c = order_regions(&account, &[], &[], |i, _| i == 1 || i == 3);
        assert_eq!(names(&account, &c), ["A", "C", "B", "D"]);
        c.retain(|i| i != 0);
        assert_eq!(names(&account, &c), ["C", "B", "D"]);
        assert_eq!(c.available(), 1);
        c.retain(|i| i == 3);
        assert_eq!(names(&account, &c), ["D"]);
        assert!(c.all_unavailable());
        c.retain(|_| false);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn all_unavailable_is_reported() {
        let account = regions(&["A", "B"]);
        let c = order_regions(&account, &[], &[], |_, _| true);
        assert!(c.all_unavailable());
        assert_eq!(c.len(), 2);
        let c = order_regions(&account, &[], &[], |i, _| i == 0);
        assert!(!c.all_unavailable());
        assert!(!Candidates::EMPTY.all_unavailable());
    }

    #[test]
    fn excluded_regions_are_never_returned() {
        let account = regions(&["A", "B", "C"]);
        for mask in 0u8..8 {
            let excluded: Vec<Region> = ["A", "B", "C"]
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, n)| Region::new(n))
                .collect();
            let c = order_regions(&account, &r(&["C", "B", "A"]), &excluded, |i, _| i == 1);
            for i in c.iter() {
                assert!(!excluded.contains(&account[i].region));
            }
            assert_eq!(c.len(), 3 - excluded.len());
        }
    }
}
