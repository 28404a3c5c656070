//! When a rule applies: a conjunction of region, operation, path, probability and count checks.

use super::region::same_region;
use super::{OpKind, PathPattern, RequestFacts};

/// When a rule applies. Every part must hold (they compose as a conjunction):
///
/// - `enabled` is on;
/// - the request's region is one of `regions` (empty = any region; names compare ignoring case and
///   spaces, so `"eastus"` matches `"East US"`);
/// - its operation kind is one of `ops` (empty = any kind);
/// - its path matches `path` (absent = any path; see [`PathPattern`]);
/// - it carries the request header `header` with its value (absent = any headers);
/// - the request is past the first `after` requests that met the checks above (those first ones
///   are let through);
/// - a random draw falls under `probability` (1 = always);
/// - the rule has fired fewer than `first` times (absent = no limit).
///
/// The checks run in that order, so `after` counts matching requests whatever the probability, and
/// `first` counts only the times the rule actually fired (its hits).
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// Regions the rule applies to; empty = any.
    pub regions: Vec<String>,
    /// Operation kinds the rule applies to; empty = any.
    pub ops: Vec<OpKind>,
    /// Path pattern the request path must match; `None` = any.
    pub path: Option<PathPattern>,
    /// A header the request must carry, with this value; `None` = any headers.
    pub header: Option<HeaderMatch>,
    /// Chance of firing for a request that meets every other check, `0.0..=1.0`.
    pub probability: f64,
    /// Fire at most this many times; `None` = no limit.
    pub first: Option<u64>,
    /// Let the first `after` matching requests through before firing.
    pub after: u64,
    /// Whether the rule is on at all.
    pub enabled: bool,
}

impl Default for Condition {
    fn default() -> Self {
        Self::any()
    }
}

impl Condition {
    /// A condition every request meets.
    pub fn any() -> Self {
        Condition {
            regions: Vec::new(),
            ops: Vec::new(),
            path: None,
            header: None,
            probability: 1.0,
            first: None,
            after: 0,
            enabled: true,
        }
    }

    /// The request-shape checks: region, operation kind, path and header (not the switch, counts
    /// or chance).
    pub fn matches_request(&self, facts: &RequestFacts<'_>) -> bool {
        (self.regions.is_empty() || self.regions.iter().any(|r| same_region(r, facts.region)))
            && (self.ops.is_empty() || self.ops.contains(&facts.op))
            && self.path.as_ref().is_none_or(|p| p.matches(facts.path))
            && self
                .header
                .as_ref()
                .is_none_or(|h| h.matches(facts.headers))
    }
}

/// A request header a rule requires. The name compares ignoring case; the value compares ignoring
/// ASCII case and surrounding whitespace (`True` matches `true`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderMatch {
    /// The header name.
    pub name: String,
    /// The value it must have.
    pub value: String,
}

impl HeaderMatch {
    /// A header `name` with `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        HeaderMatch {
            name: name.into().to_ascii_lowercase(),
            value: value.into(),
        }
    }

    /// Whether `headers` carry this header with this value.
    pub fn matches(&self, headers: Option<&http::HeaderMap>) -> bool {
        headers.is_some_and(|headers| {
            headers
                .get_all(self.name.as_str())
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| v.trim().eq_ignore_ascii_case(self.value.trim()))
        })
    }
}

/// A probability forced into `0.0..=1.0` (NaN becomes 0: never fire).
pub(super) fn clamp_probability(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(region: &'a str, op: OpKind, path: &'a str) -> RequestFacts<'a> {
        RequestFacts {
            region,
            op,
            path,
            headers: None,
        }
    }

    #[test]
    fn request_shape_table() {
        let east_reads = Condition {
            regions: vec!["East US".into()],
            ops: vec![OpKind::Read],
            ..Condition::any()
        };
        let two_regions = Condition {
            regions: vec!["East US".into(), "West US".into()],
            ..Condition::any()
        };
        let writes = Condition {
            ops: vec![OpKind::Create, OpKind::Upsert, OpKind::Replace],
            ..Condition::any()
        };
        let items_of_c1 = Condition {
            path: Some(PathPattern::new("/dbs/*/colls/c1/docs/*")),
            ..Condition::any()
        };
        let any = Condition::any();
        let doc = "/dbs/d/colls/c1/docs/a";
        let cases: Vec<(&str, &Condition, RequestFacts<'_>, bool)> = vec![
            (
                "any matches all",
                &any,
                facts("X", OpKind::Metadata, "/"),
                true,
            ),
            (
                "region and op",
                &east_reads,
                facts("East US", OpKind::Read, doc),
                true,
            ),
            (
                "region spelled differently",
                &east_reads,
                facts("eastus", OpKind::Read, doc),
                true,
            ),
            (
                "other region",
                &east_reads,
                facts("West US", OpKind::Read, doc),
                false,
            ),
            (
                "other op",
                &east_reads,
                facts("East US", OpKind::Create, doc),
                false,
            ),
            (
                "second of two regions",
                &two_regions,
                facts("West US", OpKind::Query, doc),
                true,
            ),
            (
                "third region",
                &two_regions,
                facts("North Europe", OpKind::Query, doc),
                false,
            ),
            (
                "one of the ops",
                &writes,
                facts("A", OpKind::Upsert, doc),
                true,
            ),
            (
                "not one of the ops",
                &writes,
                facts("A", OpKind::Delete, doc),
                false,
            ),
            (
                "path matches",
                &items_of_c1,
                facts("A", OpKind::Read, doc),
                true,
            ),
            (
                "path of another container",
                &items_of_c1,
                facts("A", OpKind::Read, "/dbs/d/colls/c2/docs/a"),
                false,
            ),
        ];
        for (name, condition, facts, want) in cases {
            assert_eq!(condition.matches_request(&facts), want, "{name}");
        }
    }

    #[test]
    fn header_condition_table() {
        let hub_only = Condition {
            header: Some(HeaderMatch::new(
                "X-Ms-Cosmos-Hub-Region-Processing-Only",
                "True",
            )),
            ..Condition::any()
        };
        let with = |value: &'static str| {
            let mut map = http::HeaderMap::new();
            map.insert(
                "x-ms-cosmos-hub-region-processing-only",
                http::HeaderValue::from_static(value),
            );
            map
        };
        let (upper, lower, other, none) = (
            with("True"),
            with(" true "),
            with("False"),
            http::HeaderMap::new(),
        );
        let cases: [(&str, Option<&http::HeaderMap>, bool); 5] = [
            ("same value", Some(&upper), true),
            ("value ignoring case and spaces", Some(&lower), true),
            ("other value", Some(&other), false),
            ("header absent", Some(&none), false),
            ("headers unknown", None, false),
        ];
        for (name, headers, want) in cases {
            let facts = RequestFacts {
                region: "East US",
                op: OpKind::Read,
                path: "/",
                headers,
            };
            assert_eq!(hub_only.matches_request(&facts), want, "{name}");
            assert!(
                Condition::any().matches_request(&facts),
                "{name}: no header condition"
            );
        }
    }

    #[test]
    fn probability_is_clamped() {
        assert_eq!(clamp_probability(0.25), 0.25);
        assert_eq!(clamp_probability(-1.0), 0.0);
        assert_eq!(clamp_probability(7.0), 1.0);
        assert_eq!(clamp_probability(f64::NAN), 0.0);
    }
}
