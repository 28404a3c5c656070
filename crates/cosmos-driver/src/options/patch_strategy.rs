//! How a PATCH is carried out: the client-side read-modify-write loop, the service's PATCH verb,
//! or the verb where the account serves it.

use std::fmt;
use std::str::FromStr;

/// How the driver carries out a PATCH.
///
/// | strategy | round trips | under contention | when its answer is lost | `condition` |
/// |---|---|---|---|---|
/// | `ReadModifyWrite` | 2 (read, conditional replace), more when another writer wins | re-reads and tries again, gives up with 412 after `patch_max_attempts` | settles by reading again; `OutcomeUnknown` only when it cannot tell | refused |
/// | `Native` | 1 (the service applies the operations) | no lost race | `OutcomeUnknown` (a PATCH is never sent twice) | sent; 412 when false |
/// | `Auto` (default) | as `Native` where the account serves PATCH and the operations fit it (at most 10), else as `ReadModifyWrite` | | | refused where the loop runs |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PatchStrategy {
    /// Read the item, apply the operations locally, replace it with `If-Match` on the read's ETag.
    ReadModifyWrite,
    /// Send the service's PATCH verb with the operations (and the optional condition).
    Native,
    /// `Native` where the account serves PATCH, learnt from the first PATCH's answer (405 or 501:
    /// not served) and kept for the driver's life, and the operations fit the verb (at most 10 in
    /// one request); `ReadModifyWrite` elsewhere (the default).
    #[default]
    Auto,
}

impl PatchStrategy {
    /// The short name: `rmw`, `native` or `auto`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PatchStrategy::ReadModifyWrite => "rmw",
            PatchStrategy::Native => "native",
            PatchStrategy::Auto => "auto",
        }
    }
}

impl fmt::Display for PatchStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name [`PatchStrategy::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPatchStrategy(String);

impl fmt::Display for UnknownPatchStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: String = self.0.chars().take(40).collect();
        write!(
            f,
            "unknown PATCH strategy {shown:?}: expected rmw, native or auto"
        )
    }
}

impl std::error::Error for UnknownPatchStrategy {}

impl FromStr for PatchStrategy {
    type Err = UnknownPatchStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rmw" | "read-modify-write" => Ok(PatchStrategy::ReadModifyWrite),
            "native" => Ok(PatchStrategy::Native),
            "auto" => Ok(PatchStrategy::Auto),
            other => Err(UnknownPatchStrategy(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for s in [
            PatchStrategy::ReadModifyWrite,
            PatchStrategy::Native,
            PatchStrategy::Auto,
        ] {
            assert_eq!(s.as_str().parse::<PatchStrategy>(), Ok(s));
        }
        assert_eq!(PatchStrategy::default(), PatchStrategy::Auto);
        let e = "fast".parse::<PatchStrategy>().unwrap_err();
        assert!(e.to_string().contains("rmw, native or auto"), "{e}");
    }
}
