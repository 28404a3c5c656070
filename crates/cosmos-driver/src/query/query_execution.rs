//! One query's execution as a pure state machine over plain data: which range pages to fetch,
//! how their rows become the result (merge, aggregate, shape), and the continuation token at any
//! point, for every family (an aggregate or GROUP BY too, while its ranges are read and while
//! its result is handed out). The executor that sends the page requests drives it; nothing here
//! does I/O.

use serde_json::Value;

use super::aggregate::blocking_stage::{too_large, BlockingStage};
use super::aggregate::result_shaping::{ResultShaper, Shaped};
use super::continuation::continuation_token::{
    KeyCell, LastKey, QueryContinuation, RangePosition, MAX_TOKEN_JSON_BYTES,
};
use super::merge::range_merge::{
    MergeOrder, MergeStep, RangeCursor, RangeMerge, RangeRow, TargetRange,
};
use super::plan::query_features::ExecutionPlan;
use super::plan::query_plan::QueryRange;

/// A page the executor must fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PageRequest {
    /// Index of the range among the execution's cursors (pass it back to [`QueryExecution::fill`]).
    pub index: usize,
    /// The range to send the request to.
    pub range: TargetRange,
    /// The service continuation to send (`None`: the range's start).
    pub continuation: Option<String>,
}

/// What the execution needs next.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// These pages must be fetched before the next value can be produced.
    Fetch(Vec<PageRequest>),
    /// The next value of the result.
    Value(Value),
    /// The result is complete.
    Done,
}

/// The execution of one query.
#[derive(Debug)]
pub(crate) struct QueryExecution {
    fingerprint: String,
    scope: String,
    key_count: usize,
    merge: RangeMerge,
    blocking: Option<BlockingStage>,
    shaper: ResultShaper,
    produced: u64,
    done: bool,
}

/// The physical ranges a query's plan ranges overlap, in order.
pub(crate) fn overlapping_ranges(
    query_ranges: &[QueryRange],
    ranges: &[TargetRange],
) -> Vec<TargetRange> {
    let mut out: Vec<TargetRange> = ranges
        .iter()
        .filter(|r| {
            query_ranges.is_empty()
                || query_ranges.iter().any(|q| {
                    let starts_before_end = if q.is_max_inclusive {
                        r.min.as_str() <= q.max.as_str()
                    } else {
                        r.min.as_str() < q.max.as_str()
                    };
                    let ends_after_start = if q.is_min_inclusive {
                        q.min.as_str() < r.max.as_str()
                    } else {
                        q.min.as_str() < r.max.as_str() && q.min != r.max
                    };
                    starts_before_end && ends_after_start
                })
        })
        .cloned()
        .collect();
    out.sort_by(|a, b| a.min.cmp(&b.min));
    out
}

/// Cursors resuming a token's positions on today's ranges: a position whose range split since
/// continues on each child (with the parent's service continuation).
pub(crate) fn resume_cursors(
    positions: &[RangePosition],
    ranges: &[TargetRange],
) -> Result<Vec<RangeCursor>, String> {
    let mut out = Vec::new();
    for p in positions {
        let covering: Vec<&TargetRange> = ranges
            .iter()
            .filter(|r| r.min.as_str() < p.max.as_str() && p.min.as_str() < r.max.as_str())
            .collect();
        if covering.is_empty() {
            return Err(format!(
                "no partition key range covers [{}, {}) any more",
                p.min, p.max
            ));
        }
        let skip = if covering.len() > 1 { 0 } else { p.skip };
        for r in covering {
            let range = TargetRange {
                id: r.id.clone(),
                min: r.min.clone().max(p.min.clone()),
                max: r.max.clone().min(p.max.clone()),
            };
            out.push(RangeCursor::new(range, p.token.clone(), skip));
        }
    }
    Ok(out)
}

impl QueryExecution {
    /// A cross-partition execution of `plan` over `cursors` (fresh, or from
    /// [`resume_cursors`]), for the query `fingerprint` in `scope`.
    pub(crate) fn new(
        plan: &ExecutionPlan,
        fingerprint: String,
        scope: String,
        cursors: Vec<RangeCursor>,
        resumed: Option<&QueryContinuation>,
    ) -> Result<QueryExecution, String> {
        let order = if plan.order_by.is_empty() {
            MergeOrder::Sequential
        } else {
            MergeOrder::Sorted(plan.order_by.clone())
        };
        let mut merge = RangeMerge::new(order, cursors);
        let mut blocking = BlockingStage::new(&plan.aggregation)?;
        let shaper = match resumed {
            Some(token) => {
                match (token.blocking.clone(), blocking.is_some()) {
                    (Some(state), _) => {
                        blocking = Some(BlockingStage::resume(&plan.aggregation, state).map_err(
                            |why| {
                                format!("the continuation token is not valid for this query: {why}")
                            },
                        )?);
                    }
                    (None, true) => {
                        return Err("the continuation token is not valid for this query: it carries no aggregate state, and the query aggregates".into());
                    }
                    (None, false) => {}
                }
                if let Some(last) = &token.last_key {
                    merge = merge.with_last_key(
                        last.keys.iter().map(|k| k.item.clone()).collect(),
                        last.rid.clone(),
                    );
                }
                ResultShaper::resume(plan.distinct, token.shaping.clone())
            }
            None => ResultShaper::new(plan),
        };
        Ok(QueryExecution {
            fingerprint,
            scope,
            key_count: plan.order_by.len(),
            merge,
            blocking,
            shaper,
            produced: 0,
            done: false,
        })
    }

    /// An execution that sends the query unchanged to one target (a partition key's range) and
    /// passes its result through.
    pub(crate) fn single(
        fingerprint: String,
        scope: String,
        cursor: RangeCursor,
    ) -> QueryExecution {
        QueryExecution {
            fingerprint,
            scope,
            key_count: 0,
            merge: RangeMerge::new(MergeOrder::Sequential, vec![cursor]),
            blocking: None,
            shaper: ResultShaper::pass_through(),
            produced: 0,
            done: false,
        }
    }

    /// The ranges that have no page buffered and more to read (candidates for prefetching).
    pub(crate) fn prefetchable(&self) -> Vec<PageRequest> {
        self.merge
            .prefetchable()
            .into_iter()
            .map(|i| self.request(i))
            .collect()
    }

    fn request(&self, index: usize) -> PageRequest {
        let c = &self.merge.cursors()[index];
        PageRequest {
            index,
            range: c.range.clone(),
            continuation: c.fetch_token().map(str::to_owned),
        }
    }

    /// Feeds the page fetched for `request`: its documents and the service continuation.
    pub(crate) fn fill(
        &mut self,
        request: &PageRequest,
        documents: Vec<Value>,
        continuation: Option<String>,
    ) -> Result<(), String> {
        let index = self.locate(request)?;
        let rows = documents
            .into_iter()
            .map(|d| {
                if self.key_count > 0 {
                    RangeRow::order_by(d, self.key_count)
                } else {
                    Ok(RangeRow::plain(d))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.merge.fill(index, rows, continuation);
        Ok(())
    }

    /// The range of `request` was split (410/1002): continue on `children`.
    pub(crate) fn split(
        &mut self,
        request: &PageRequest,
        children: Vec<TargetRange>,
    ) -> Result<(), String> {
        let index = self.locate(request)?;
        if children.is_empty() {
            return Err(format!("range {} split into no children", request.range.id));
        }
        if self.merge.split(index, children) {
            Ok(())
        } else {
            Err(format!("range {} cannot be split now", request.range.id))
        }
    }

    /// Cursor indices move when a range splits; a request is found again by its range.
    fn locate(&self, request: &PageRequest) -> Result<usize, String> {
        let cursors = self.merge.cursors();
        if cursors
            .get(request.index)
            .is_some_and(|c| c.range == request.range)
        {
            return Ok(request.index);
        }
        cursors
            .iter()
            .position(|c| c.range == request.range)
            .ok_or_else(|| format!("no range {} in this query", request.range.id))
    }

    /// The next step.
    pub(crate) fn step(&mut self) -> Result<Next, String> {
        loop {
            if self.done || self.shaper.is_finished() {
                self.done = true;
                return Ok(Next::Done);
            }
            let draining = self.blocking.as_ref().map(BlockingStage::is_draining);
            let candidate = if draining == Some(false) {
                match self.blocking.as_mut().and_then(BlockingStage::next_output) {
                    Some(v) => v,
                    None => {
                        self.done = true;
                        return Ok(Next::Done);
                    }
                }
            } else {
                match self.merge.next_step() {
                    MergeStep::NeedPages(ids) => {
                        return Ok(Next::Fetch(
                            ids.into_iter().map(|i| self.request(i)).collect(),
                        ))
                    }
                    MergeStep::Row(row, _) => match self.blocking.as_mut() {
                        Some(b) => {
                            b.absorb(row)?;
                            continue;
                        }
                        None => match row.payload {
                            Some(v) => v,
                            None => continue,
                        },
                    },
                    MergeStep::Done => match self.blocking.as_mut() {
                        Some(b) => {
                            b.finish();
                            continue;
                        }
                        None => {
                            self.done = true;
                            return Ok(Next::Done);
                        }
                    },
                }
            };
            match self.shaper.accept(candidate)? {
                Shaped::Emit(v) => {
                    self.produced += 1;
                    return Ok(Next::Value(v));
                }
                Shaped::Drop => {}
                Shaped::Finished => {
                    self.done = true;
                    return Ok(Next::Done);
                }
            }
        }
    }

    /// The token that resumes the query right after the last value produced: `Ok(None)` when the
    /// result is complete; an error when it cannot be issued (past the size limit: an aggregate
    /// or GROUP BY with very many groups, or a DISTINCT with very many values).
    pub(crate) fn continuation(&self) -> Result<Option<String>, String> {
        if self.done || self.shaper.is_finished() {
            return Ok(None);
        }
        if let Some(stage) = &self.blocking {
            return self.blocking_continuation(stage);
        }
        let ranges = self.positions();
        if ranges.is_empty() {
            return Ok(None);
        }
        let last_key = self.merge.last_key().map(|(keys, rid)| LastKey {
            keys: keys.iter().map(|k| KeyCell { item: k.clone() }).collect(),
            rid: rid.clone(),
        });
        QueryContinuation::new(
            self.fingerprint.clone(),
            self.scope.clone(),
            ranges,
            last_key,
            self.shaper.state(),
        )
        .encode()
        .map(Some)
    }

    /// Where each range not yet drained stands.
    fn positions(&self) -> Vec<RangePosition> {
        self.merge
            .cursors()
            .iter()
            .filter(|c| !c.is_done())
            .map(|c| {
                let (token, skip) = c.resume_point();
                RangePosition {
                    min: c.range.min.clone(),
                    max: c.range.max.clone(),
                    token: token.map(str::to_owned),
                    skip,
                }
            })
            .collect()
    }

    /// An aggregate or GROUP BY: while ranges are read, their positions and the partial state;
    /// once the result is built, the values not yet handed out (no ranges).
    fn blocking_continuation(&self, stage: &BlockingStage) -> Result<Option<String>, String> {
        if stage.is_exhausted() {
            return Ok(None);
        }
        let ranges = if stage.is_draining() {
            self.positions()
        } else {
            Vec::new()
        };
        let state = stage.state(MAX_TOKEN_JSON_BYTES)?;
        QueryContinuation::new(
            self.fingerprint.clone(),
            self.scope.clone(),
            ranges,
            None,
            self.shaper.state(),
        )
        .with_blocking(state)
        .encode()
        .map(Some)
        .map_err(|_| too_large(stage.describe()))
    }
}

#[cfg(test)]
#[path = "query_execution_tests.rs"]
mod tests;
