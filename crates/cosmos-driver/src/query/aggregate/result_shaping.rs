//! The last stages of a query's result, applied in the service's order to the merged (and, if
//! asked, aggregated) values: DISTINCT, then OFFSET, then LIMIT, then TOP. Their state is plain
//! data that a continuation token carries.

use std::collections::HashSet;

use ring::digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::query::merge::value_order::canonical_text;
use crate::query::plan::query_features::ExecutionPlan;
use crate::query::plan::query_plan::DistinctType;

/// The most distinct values an unordered DISTINCT query remembers.
pub(crate) const MAX_DISTINCT_VALUES: usize = 4_000_000;

/// A value's identity for DISTINCT: 128 bits of a digest of its canonical text.
pub(crate) type ValueHash = [u8; 16];

/// The hash DISTINCT compares.
pub(crate) fn value_hash(v: &Value) -> ValueHash {
    let d = digest::digest(&digest::SHA256, canonical_text(v).as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&d.as_ref()[..16]);
    out
}

/// What the stages still have to do; carried by continuation tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShapingState {
    /// Values still to drop for OFFSET.
    #[serde(rename = "o", default)]
    pub offset_left: u64,
    /// Values still to let through for LIMIT.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    pub limit_left: Option<u64>,
    /// Values still to let through for TOP.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub top_left: Option<u64>,
    /// The distinct values seen (ordered DISTINCT: only the last).
    #[serde(rename = "d", default, skip_serializing_if = "Vec::is_empty")]
    pub distinct_seen: Vec<ValueHash>,
}

/// What became of one value.
#[derive(Debug, PartialEq)]
pub(crate) enum Shaped {
    /// Part of the result.
    Emit(Value),
    /// Dropped (a duplicate, or within the OFFSET).
    Drop,
    /// The result is complete (LIMIT or TOP reached): stop reading.
    Finished,
}

/// The DISTINCT/OFFSET/LIMIT/TOP stages of one query.
#[derive(Debug)]
pub(crate) struct ResultShaper {
    distinct: DistinctType,
    seen: HashSet<ValueHash>,
    last: Option<ValueHash>,
    offset_left: u64,
    limit_left: Option<u64>,
    top_left: Option<u64>,
}

impl ResultShaper {
    /// The stages of `plan`, from the start.
    pub(crate) fn new(plan: &ExecutionPlan) -> ResultShaper {
        ResultShaper::resume(
            plan.distinct,
            ShapingState {
                offset_left: plan.offset.unwrap_or(0),
                limit_left: plan.limit,
                top_left: plan.top,
                distinct_seen: Vec::new(),
            },
        )
    }

    /// Stages that pass everything through.
    pub(crate) fn pass_through() -> ResultShaper {
        ResultShaper::resume(DistinctType::None, ShapingState::default())
    }

    /// The stages resumed from a token's state.
    pub(crate) fn resume(distinct: DistinctType, state: ShapingState) -> ResultShaper {
        let (seen, last) = match distinct {
            DistinctType::Unordered => (state.distinct_seen.into_iter().collect(), None),
            DistinctType::Ordered => (HashSet::new(), state.distinct_seen.last().copied()),
            DistinctType::None => (HashSet::new(), None),
        };
        ResultShaper {
            distinct,
            seen,
            last,
            offset_left: state.offset_left,
            limit_left: state.limit_left,
            top_left: state.top_left,
        }
    }

    /// Whether LIMIT or TOP is reached.
    pub(crate) fn is_finished(&self) -> bool {
        self.limit_left == Some(0) || self.top_left == Some(0)
    }

    /// Runs one value through the stages.
    pub(crate) fn accept(&mut self, v: Value) -> Result<Shaped, String> {
        if self.is_finished() {
            return Ok(Shaped::Finished);
        }
        match self.distinct {
            DistinctType::None => {}
            DistinctType::Ordered => {
                let h = value_hash(&v);
                if self.last == Some(h) {
                    return Ok(Shaped::Drop);
                }
                self.last = Some(h);
            }
            DistinctType::Unordered => {
                if self.seen.len() >= MAX_DISTINCT_VALUES {
                    return Err(format!(
                        "the DISTINCT query returns more than {MAX_DISTINCT_VALUES} values, more than the driver remembers"
                    ));
                }
                if !self.seen.insert(value_hash(&v)) {
                    return Ok(Shaped::Drop);
                }
            }
        }
        if self.offset_left > 0 {
            self.offset_left -= 1;
            return Ok(Shaped::Drop);
        }
        for left in [&mut self.limit_left, &mut self.top_left]
            .into_iter()
            .flatten()
        {
            *left -= 1;
        }
        Ok(Shaped::Emit(v))
    }

    /// The state a continuation token carries.
    pub(crate) fn state(&self) -> ShapingState {
        let distinct_seen = match self.distinct {
            DistinctType::Unordered => {
                let mut v: Vec<ValueHash> = self.seen.iter().copied().collect();
                v.sort_unstable();
                v
            }
            DistinctType::Ordered => self.last.into_iter().collect(),
            DistinctType::None => Vec::new(),
        };
        ShapingState {
            offset_left: self.offset_left,
            limit_left: self.limit_left,
            top_left: self.top_left,
            distinct_seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(
        distinct: DistinctType,
        offset: Option<u64>,
        limit: Option<u64>,
        top: Option<u64>,
    ) -> ExecutionPlan {
        ExecutionPlan {
            range_query: None,
            order_by: vec![],
            aggregation: crate::query::plan::query_features::Aggregation::None,
            distinct,
            offset,
            limit,
            top,
            ranges: vec![],
        }
    }

    fn run(shaper: &mut ResultShaper, input: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        for v in input {
            match shaper.accept(v.clone()).unwrap() {
                Shaped::Emit(v) => out.push(v),
                Shaped::Drop => {}
                Shaped::Finished => break,
            }
        }
        out
    }

    #[test]
    fn stages_apply_in_the_services_order() {
        let input: Vec<Value> = [1, 1, 2, 2, 3, 1, 4, 5, 5, 6]
            .iter()
            .map(|n| json!(n))
            .collect();
        type Case = (
            DistinctType,
            Option<u64>,
            Option<u64>,
            Option<u64>,
            Vec<i64>,
        );
        let table: Vec<Case> = vec![
            (
                DistinctType::None,
                None,
                None,
                None,
                vec![1, 1, 2, 2, 3, 1, 4, 5, 5, 6],
            ),
            (
                DistinctType::Ordered,
                None,
                None,
                None,
                vec![1, 2, 3, 1, 4, 5, 6],
            ),
            (
                DistinctType::Unordered,
                None,
                None,
                None,
                vec![1, 2, 3, 4, 5, 6],
            ),
            (DistinctType::Unordered, Some(2), Some(2), None, vec![3, 4]),
            (DistinctType::None, Some(8), Some(5), None, vec![5, 6]),
            (DistinctType::None, None, None, Some(3), vec![1, 1, 2]),
            (DistinctType::Ordered, Some(1), None, Some(2), vec![2, 3]),
            (DistinctType::None, None, Some(0), None, vec![]),
        ];
        for (d, o, l, t, want) in table {
            let mut s = ResultShaper::new(&plan(d, o, l, t));
            let got = run(&mut s, &input);
            let want: Vec<Value> = want.into_iter().map(|n| json!(n)).collect();
            assert_eq!(got, want, "{d:?} offset {o:?} limit {l:?} top {t:?}");
        }
    }

    #[test]
    fn distinct_uses_the_services_equality() {
        let mut s = ResultShaper::new(&plan(DistinctType::Unordered, None, None, None));
        let got = run(
            &mut s,
            &[
                json!({"a": 1, "b": [2]}),
                json!({"b": [2.0], "a": 1}),
                json!("1"),
                json!(1),
            ],
        );
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn state_resumes_every_stage_exactly() {
        let input: Vec<Value> = [5, 3, 5, 1, 3, 7, 8, 1, 9, 2]
            .iter()
            .map(|n| json!(n))
            .collect();
        for d in [
            DistinctType::None,
            DistinctType::Ordered,
            DistinctType::Unordered,
        ] {
            let p = plan(d, Some(1), Some(5), Some(6));
            let whole = run(&mut ResultShaper::new(&p), &input);
            for cut in 0..input.len() {
                let mut first = ResultShaper::new(&p);
                let mut got = run(&mut first, &input[..cut]);
                let state = first.state();
                let json = serde_json::to_string(&state).unwrap();
                let back: ShapingState = serde_json::from_str(&json).unwrap();
                let mut second = ResultShaper::resume(d, back);
                got.extend(run(&mut second, &input[cut..]));
                assert_eq!(got, whole, "{d:?} cut at {cut}");
            }
        }
    }
}
