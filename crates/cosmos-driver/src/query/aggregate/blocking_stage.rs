//! The stage of a cross-partition query that needs every range before it can answer (value
//! aggregates, GROUP BY): it combines range rows as they arrive, then hands out the result one
//! value at a time. Its state at any point is plain data a continuation token carries: while
//! ranges are being read, each aggregate's partial (or the table of groups with theirs); once the
//! result is built, the values not yet handed out.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::query::aggregate::aggregates::{partial_of, Aggregator};
use crate::query::aggregate::group_by::{GroupByMerge, GroupEntry};
use crate::query::continuation::token_text::JsonText;
use crate::query::merge::range_merge::RangeRow;
use crate::query::merge::vector_merge::{Ranked, TopK};
use crate::query::plan::query_features::Aggregation;

/// The stage's state in a continuation token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum BlockingState {
    /// Reading ranges: each value aggregate's partial, in the plan's order.
    #[serde(rename = "v")]
    Values(Vec<Aggregator>),
    /// Reading ranges: the groups seen so far with their partials, in first-seen order.
    #[serde(rename = "g")]
    Groups(Vec<GroupEntry>),
    /// The result is built: the values not yet handed out (before DISTINCT/OFFSET/LIMIT/TOP,
    /// whose own state the token carries beside).
    #[serde(rename = "o")]
    Output(Vec<JsonText>),
    /// Reading ranges of a vector search: the best rows so far, as the ranges answered them.
    #[serde(rename = "k")]
    Best(Vec<JsonText>),
}

#[derive(Debug)]
enum Phase {
    Values(Vec<Aggregator>),
    Groups(GroupByMerge),
    Best(TopK),
    /// Each value with the bytes it takes as JSON, and the sum of those.
    Output(VecDeque<(Value, usize)>, usize),
}

/// The blocking stage of one query.
#[derive(Debug)]
pub(crate) struct BlockingStage {
    phase: Phase,
}

/// Why a state does not fit the plan.
fn misfit(why: impl std::fmt::Display) -> String {
    format!("its aggregate state does not fit this query: {why}")
}

fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` to a counter cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

impl BlockingStage {
    /// The stage of `aggregation` from the start (`None`: the query has no blocking stage).
    pub(crate) fn new(aggregation: &Aggregation) -> Result<Option<BlockingStage>, String> {
        let phase = match aggregation {
            Aggregation::None => return Ok(None),
            Aggregation::Value(kinds) => Phase::Values(
                kinds
                    .iter()
                    .map(|k| {
                        Aggregator::new(k)
                            .ok_or_else(|| format!("the aggregate {k:?} cannot be combined"))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Aggregation::Grouped(shape) => Phase::Groups(GroupByMerge::new(shape.clone())),
            Aggregation::TopK { orders, k } => Phase::Best(TopK::new(
                orders.clone(),
                usize::try_from(*k).map_err(|_| "the vector search's TOP is too large")?,
            )),
        };
        Ok(Some(BlockingStage { phase }))
    }

    /// The stage of `aggregation` continuing from a token's `state`; refused (with the reason)
    /// when the state does not fit the plan.
    pub(crate) fn resume(
        aggregation: &Aggregation,
        state: BlockingState,
    ) -> Result<BlockingStage, String> {
        let phase = match (aggregation, state) {
            (Aggregation::None, _) => return Err(misfit("the query aggregates nothing")),
            (_, BlockingState::Output(values)) => {
                let queue: VecDeque<(Value, usize)> = values
                    .into_iter()
                    .map(|JsonText(v)| {
                        let n = json_len(&v);
                        (v, n)
                    })
                    .collect();
                let bytes = queue.iter().map(|(_, n)| n).sum();
                Phase::Output(queue, bytes)
            }
            (Aggregation::Value(kinds), BlockingState::Values(aggs)) => {
                let fits = kinds.len() == aggs.len()
                    && kinds
                        .iter()
                        .zip(&aggs)
                        .all(|(k, a)| Aggregator::new(k).is_some_and(|fresh| fresh.same_kind(a)));
                if !fits {
                    return Err(misfit("its aggregates differ from the query's"));
                }
                Phase::Values(aggs)
            }
            (Aggregation::Grouped(shape), BlockingState::Groups(table)) => {
                Phase::Groups(GroupByMerge::resume(shape.clone(), table).map_err(misfit)?)
            }
            (Aggregation::TopK { orders, k }, BlockingState::Best(rows)) => {
                let mut top = TopK::new(orders.clone(), usize::try_from(*k).unwrap_or(usize::MAX));
                if rows.len() as u64 > *k {
                    return Err(misfit("it keeps more rows than the query's TOP"));
                }
                for JsonText(row) in rows {
                    top.push(Ranked::from_row(row, orders.len()).map_err(misfit)?);
                }
                Phase::Best(top)
            }
            _ => return Err(misfit("the query groups differently")),
        };
        Ok(BlockingStage { phase })
    }

    /// Whether the stage is still reading ranges.
    pub(crate) fn is_draining(&self) -> bool {
        !matches!(self.phase, Phase::Output(..))
    }

    /// Combines one range row (ignored once the result is built).
    pub(crate) fn absorb(&mut self, row: RangeRow) -> Result<(), String> {
        let Some(payload) = row.payload else {
            return Ok(());
        };
        match &mut self.phase {
            Phase::Values(aggs) => {
                // `[{"item": partial}, ...]`, one cell per aggregate; or a single cell.
                match &payload {
                    Value::Array(cells) => {
                        for (agg, cell) in aggs.iter_mut().zip(cells) {
                            agg.add(partial_of(cell))?;
                        }
                    }
                    cell => {
                        if let Some(agg) = aggs.first_mut() {
                            agg.add(partial_of(cell))?;
                        }
                    }
                }
                Ok(())
            }
            Phase::Groups(groups) => groups.add(payload),
            Phase::Best(top) => {
                let keys = top_keys(top);
                top.push(Ranked::from_row(payload, keys)?);
                Ok(())
            }
            Phase::Output(..) => Ok(()),
        }
    }

    /// Every range is read: builds the result.
    pub(crate) fn finish(&mut self) {
        let values = match std::mem::replace(&mut self.phase, Phase::Output(VecDeque::new(), 0)) {
            Phase::Values(aggs) => aggs.iter().filter_map(Aggregator::result).collect(),
            Phase::Groups(groups) => groups.finish(),
            Phase::Best(top) => top.into_payloads(),
            output @ Phase::Output(..) => {
                self.phase = output;
                return;
            }
        };
        let queue: VecDeque<(Value, usize)> = values
            .into_iter()
            .map(|v| {
                let n = json_len(&v);
                (v, n)
            })
            .collect();
        let bytes = queue.iter().map(|(_, n)| n).sum();
        self.phase = Phase::Output(queue, bytes);
    }

    /// The next value of the built result (`None`: none left, or still reading ranges).
    pub(crate) fn next_output(&mut self) -> Option<Value> {
        match &mut self.phase {
            Phase::Output(queue, bytes) => {
                let (v, n) = queue.pop_front()?;
                *bytes -= n;
                Some(v)
            }
            _ => None,
        }
    }

    /// Whether the built result has been handed out entirely.
    pub(crate) fn is_exhausted(&self) -> bool {
        matches!(&self.phase, Phase::Output(queue, _) if queue.is_empty())
    }

    /// The state for a token, or why it cannot fit in `max_bytes` of JSON (checked cheaply before
    /// anything is copied; the token's encoder checks the exact size).
    pub(crate) fn state(&self, max_bytes: usize) -> Result<BlockingState, String> {
        match &self.phase {
            Phase::Values(aggs) => Ok(BlockingState::Values(aggs.clone())),
            Phase::Groups(groups) => {
                if groups.key_bytes() > max_bytes {
                    return Err(too_large(format_args!(
                        "the {} groups seen so far",
                        groups.len()
                    )));
                }
                Ok(BlockingState::Groups(groups.table()))
            }
            Phase::Best(top) => {
                let rows: Vec<JsonText> = top.rows().iter().map(|r| JsonText(r.to_row())).collect();
                let bytes: usize = rows.iter().map(|JsonText(v)| json_len(v)).sum();
                if bytes > max_bytes {
                    return Err(too_large(format_args!(
                        "the {} best rows of the vector search so far",
                        rows.len()
                    )));
                }
                Ok(BlockingState::Best(rows))
            }
            Phase::Output(queue, bytes) => {
                if *bytes > max_bytes {
                    return Err(too_large(format_args!(
                        "the {} result rows not yet returned",
                        queue.len()
                    )));
                }
                Ok(BlockingState::Output(
                    queue.iter().map(|(v, _)| JsonText(v.clone())).collect(),
                ))
            }
        }
    }

    /// A short description of the state's size, for the error when its token is too large.
    pub(crate) fn describe(&self) -> String {
        match &self.phase {
            Phase::Values(aggs) => format!("{} aggregates", aggs.len()),
            Phase::Groups(groups) => format!("the {} groups seen so far", groups.len()),
            Phase::Best(top) => format!("the {} best rows of the vector search so far", top.len()),
            Phase::Output(queue, _) => format!("the {} result rows not yet returned", queue.len()),
        }
    }
}

/// How many ORDER BY keys a vector search's rows carry.
fn top_keys(top: &TopK) -> usize {
    top.orders_len()
}

/// The error when a blocking query's state is too large for a token: what happened and what to do.
pub(crate) fn too_large(what: impl std::fmt::Display) -> String {
    format!(
        "no continuation token can be issued at this point of the aggregate or GROUP BY query: \
         {what} would make it larger than the {} bytes a token may take; read the result in one \
         go (without resuming from a token), or narrow the query (a filter, fewer groups)",
        crate::query::continuation::token_text::MAX_TOKEN_BYTES
    )
}

#[cfg(test)]
#[path = "blocking_stage_tests.rs"]
mod tests;
