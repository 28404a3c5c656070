//! Splitting the effective-partition-key space into physical partition key ranges.
//!
//! Hash V2 keys lie in [0, 2^126). N ranges split that space evenly; the first range starts at ""
//! (the minimum) and the last ends at "FF" (the maximum), as the service writes them.

use super::key::Epk;
#[cfg(test)]
use super::partition_key::epk_hex;

/// The service's minimum and maximum EPK boundaries.
pub const MIN_EPK: &str = "";
/// Upper bound of the last range.
pub const MAX_EPK: &str = "FF";
/// The top of the key space (exclusive) in the first part of an [`Epk`]: hash V2 keys, and the
/// emulator's image of hash V1 keys, lie below 2^126.
pub const SPACE_END: u128 = 1 << 126;

/// Inner boundaries of `count` even ranges (`count - 1` values, ascending): `k * floor(2^126 /
/// count)`, as the service splits the space (the last range takes the remainder).
pub fn boundaries(count: usize) -> Vec<Epk> {
    let count = count.max(1) as u128;
    let step = SPACE_END / count;
    (1..count).map(|i| Epk::single(step * i)).collect()
}

/// Index of the range an EPK falls in, given the inner boundaries.
pub fn range_of(epk: Epk, boundaries: &[Epk]) -> usize {
    boundaries.partition_point(|b| *b <= epk)
}

/// The `[minInclusive, maxExclusive)` strings of range `index`, each inner boundary written by
/// `text`.
pub fn range_bounds(
    index: usize,
    boundaries: &[Epk],
    text: impl Fn(Epk) -> String,
) -> (String, String) {
    let min = if index == 0 {
        MIN_EPK.to_owned()
    } else {
        boundaries
            .get(index - 1)
            .map(|b| text(*b))
            .unwrap_or_else(|| MAX_EPK.to_owned())
    };
    let max = boundaries
        .get(index)
        .map(|b| text(*b))
        .unwrap_or_else(|| MAX_EPK.to_owned());
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ranges_split_the_space_evenly() {
        let b = boundaries(4);
        assert_eq!(
            b.iter().map(|x| epk_hex(*x)).collect::<Vec<_>>(),
            vec![
                "10000000000000000000000000000000",
                "20000000000000000000000000000000",
                "30000000000000000000000000000000"
            ]
        );
        assert_eq!(
            range_bounds(0, &b, epk_hex),
            (String::new(), "10000000000000000000000000000000".into())
        );
        assert_eq!(
            range_bounds(3, &b, epk_hex),
            ("30000000000000000000000000000000".into(), "FF".into())
        );
    }

    #[test]
    fn a_count_that_does_not_divide_the_space_steps_by_its_floor() {
        let b = boundaries(5);
        assert_eq!(
            b.iter().map(|x| epk_hex(*x)).collect::<Vec<_>>(),
            vec![
                "0CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
                "19999999999999999999999999999998",
                "26666666666666666666666666666664",
                "33333333333333333333333333333330"
            ]
        );
    }

    #[test]
    fn one_range_covers_everything() {
        let b = boundaries(1);
        assert!(b.is_empty());
        assert_eq!(range_of(Epk::single(u128::MAX >> 2), &b), 0);
        assert_eq!(range_bounds(0, &b, epk_hex), (String::new(), "FF".into()));
    }

    #[test]
    fn keys_land_in_the_range_whose_bounds_hold_them() {
        let b = boundaries(3);
        for (epk, expected) in [
            (Epk::single(0), 0usize),
            (Epk::single(b[0].first() - 1), 0),
            (b[0], 1),
            (b[1], 2),
            (Epk::single(u128::MAX >> 2), 2),
        ] {
            assert_eq!(range_of(epk, &b), expected);
            let (min, max) = range_bounds(expected, &b, epk_hex);
            let hex = epk_hex(epk);
            assert!(min.as_str() <= hex.as_str() && hex.as_str() < max.as_str());
        }
    }
}
