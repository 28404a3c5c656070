//! Combining the page streams of several partition key ranges, one buffered page per range:
//! sequentially (range after range, the order of a query without ORDER BY) or as a k-way merge in
//! ORDER BY order (ties go to the range with the lower effective partition key, so the order is
//! deterministic). A pure state machine: the executor asks which ranges need a page, fetches them
//! (through the pipeline), and feeds them in.

use std::cmp::Ordering;
use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::Value;

use crate::query::merge::value_order::compare_keys;
use crate::query::plan::query_plan::SortOrder;

pub use crate::routing::TargetRange;

/// One result row of a range: its ORDER BY keys (empty without ORDER BY), the service's `_rid`
/// when the rewritten query projects it, and the value the query returns (`None` when undefined).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RangeRow {
    /// The ORDER BY key values, `None` for undefined.
    pub keys: Vec<Option<Value>>,
    /// The document's resource id, when projected.
    pub rid: Option<String>,
    /// What the query returns for this row.
    pub payload: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct RawKey {
    #[serde(default, deserialize_with = "present")]
    item: Option<Value>,
}

#[derive(Deserialize)]
struct RawOrderByRow {
    #[serde(rename = "_rid", default)]
    rid: Option<String>,
    #[serde(rename = "orderByItems")]
    order_by_items: Vec<RawKey>,
    #[serde(default, deserialize_with = "present")]
    payload: Option<Value>,
}

impl RangeRow {
    /// A row of a query without ORDER BY.
    pub(crate) fn plain(payload: Value) -> RangeRow {
        RangeRow {
            keys: Vec::new(),
            rid: None,
            payload: Some(payload),
        }
    }

    /// A row of a rewritten ORDER BY query: `{"_rid": ..., "orderByItems": [{"item": v}, ...],
    /// "payload": ...}` with one key per ORDER BY expression.
    pub(crate) fn order_by(row: Value, key_count: usize) -> Result<RangeRow, String> {
        let raw: RawOrderByRow = serde_json::from_value(row)
            .map_err(|e| format!("an ORDER BY result row is malformed: {e}"))?;
        if raw.order_by_items.len() != key_count {
            return Err(format!(
                "an ORDER BY result row has {} keys; the plan has {key_count}",
                raw.order_by_items.len()
            ));
        }
        Ok(RangeRow {
            keys: raw.order_by_items.into_iter().map(|k| k.item).collect(),
            rid: raw.rid,
            payload: raw.payload,
        })
    }
}

/// Where one range's stream stands.
#[derive(Clone, Debug)]
pub(crate) struct RangeCursor {
    /// The range.
    pub range: TargetRange,
    /// The service continuation that fetched the buffered page (`None`: the range's start).
    pub page_token: Option<String>,
    /// Rows of the buffered page already handed out.
    pub consumed: u64,
    /// The continuation of the next page; `None` once the service said there is none.
    pub next_token: Option<String>,
    /// Rows still to drop when resuming (handed out before the token was issued).
    pub skip: u64,
    buffered: VecDeque<RangeRow>,
    started: bool,
}

impl RangeCursor {
    /// A cursor at `token` (`None`: the start) that drops its first `skip` rows.
    pub(crate) fn new(range: TargetRange, token: Option<String>, skip: u64) -> RangeCursor {
        RangeCursor {
            range,
            page_token: token.clone(),
            consumed: 0,
            next_token: token,
            skip,
            buffered: VecDeque::new(),
            started: false,
        }
    }

    /// Whether the range has nothing more: its last page was read and handed out.
    pub(crate) fn is_done(&self) -> bool {
        self.buffered.is_empty() && self.started && self.next_token.is_none()
    }

    /// Whether the range needs its next page fetched.
    pub(crate) fn needs_page(&self) -> bool {
        self.buffered.is_empty() && !self.is_done()
    }

    /// The continuation to send for the next page (`None`: from the start).
    pub(crate) fn fetch_token(&self) -> Option<&str> {
        self.next_token.as_deref()
    }

    /// Where a token resumes this range: the page being handed out and how much of it is gone.
    pub(crate) fn resume_point(&self) -> (Option<&str>, u64) {
        if self.buffered.is_empty() {
            (self.next_token.as_deref(), self.skip)
        } else {
            (self.page_token.as_deref(), self.consumed)
        }
    }

    fn fill(&mut self, rows: Vec<RangeRow>, continuation: Option<String>) {
        self.page_token = self.next_token.take();
        self.next_token = continuation;
        self.started = true;
        let drop = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(rows.len());
        self.skip -= drop as u64;
        self.consumed = drop as u64;
        self.buffered = rows.into_iter().skip(drop).collect();
    }

    fn pop(&mut self) -> Option<RangeRow> {
        let row = self.buffered.pop_front()?;
        self.consumed += 1;
        Some(row)
    }
}

/// What the merge needs next.
#[derive(Debug, PartialEq)]
pub(crate) enum MergeStep {
    /// These ranges (indices into [`RangeMerge::cursors`]) need a page before the next row can be
    /// chosen.
    NeedPages(Vec<usize>),
    /// The next row, and the index of the range it came from.
    Row(RangeRow, usize),
    /// Every range is drained.
    Done,
}

/// How the ranges' rows are interleaved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MergeOrder {
    /// Range after range, in the order of the cursors.
    Sequential,
    /// ORDER BY with these directions.
    Sorted(Vec<SortOrder>),
}

/// The merge of several ranges' page streams.
#[derive(Debug)]
pub(crate) struct RangeMerge {
    order: MergeOrder,
    cursors: Vec<RangeCursor>,
    last_key: Option<(Vec<Option<Value>>, Option<String>)>,
}

impl RangeMerge {
    /// A merge over `cursors` (ordered by their range's lower bound).
    pub(crate) fn new(order: MergeOrder, mut cursors: Vec<RangeCursor>) -> RangeMerge {
        cursors.sort_by(|a, b| a.range.min.cmp(&b.range.min));
        RangeMerge {
            order,
            cursors,
            last_key: None,
        }
    }

    /// A resumed ORDER BY merge that drops every row ordering before `last_key` (the key of the
    /// last row handed out before the token was issued).
    pub(crate) fn with_last_key(
        mut self,
        keys: Vec<Option<Value>>,
        rid: Option<String>,
    ) -> RangeMerge {
        self.last_key = Some((keys, rid));
        self
    }

    /// The cursors, ordered by range.
    pub(crate) fn cursors(&self) -> &[RangeCursor] {
        &self.cursors
    }

    /// The key and `_rid` of the last row handed out (ORDER BY only).
    pub(crate) fn last_key(&self) -> Option<&(Vec<Option<Value>>, Option<String>)> {
        self.last_key.as_ref()
    }

    /// Ranges that have no buffered page and more to read: the executor may fetch these ahead.
    pub(crate) fn prefetchable(&self) -> Vec<usize> {
        (0..self.cursors.len())
            .filter(|&i| self.cursors[i].needs_page())
            .collect()
    }

    /// Feeds range `index` its next page: its rows and the service's continuation for the page
    /// after it (`None`: the range is drained).
    pub(crate) fn fill(&mut self, index: usize, rows: Vec<RangeRow>, continuation: Option<String>) {
        if let (MergeOrder::Sorted(orders), Some((last, _))) = (&self.order, &self.last_key) {
            if let Some(c) = self.cursors.get_mut(index).filter(|c| !c.started) {
                // The first page after resuming: its leading rows that order before the last key
                // handed out were handed out already. They are the start of the rows the skip
                // count covers; counting them as skipped keeps the next token's count right.
                let before = rows
                    .iter()
                    .take_while(|r| compare_keys(&r.keys, last, orders) == Ordering::Less)
                    .count() as u64;
                c.skip = c.skip.max(before);
            }
        }
        if let Some(c) = self.cursors.get_mut(index) {
            c.fill(rows, continuation);
        }
    }

    /// Replaces range `index`, which the service split (410/1002 when its next page was fetched),
    /// by its children, which resume from the parent's position. Refused (`false`) while the range
    /// still has rows buffered: a split is only learned when a page is fetched. A resumed range
    /// that splits before its first page drops its pending skip; under ORDER BY the last key still
    /// removes every row ordering before the point of resumption.
    pub(crate) fn split(&mut self, index: usize, children: Vec<TargetRange>) -> bool {
        if index >= self.cursors.len() || !self.cursors[index].buffered.is_empty() {
            return false;
        }
        let parent = self.cursors.remove(index);
        let skip = if parent.skip > 0 && children.len() > 1 {
            0
        } else {
            parent.skip
        };
        for (offset, child) in children.into_iter().enumerate() {
            let mut c = RangeCursor::new(child, parent.next_token.clone(), skip);
            c.page_token = parent.page_token.clone();
            c.started = parent.started;
            self.cursors.insert(index + offset, c);
        }
        true
    }

    /// The next step: a row, the pages needed before one can be chosen, or the end.
    pub(crate) fn next_step(&mut self) -> MergeStep {
        match &self.order {
            MergeOrder::Sequential => {
                let Some(i) = self.cursors.iter().position(|c| !c.is_done()) else {
                    return MergeStep::Done;
                };
                if self.cursors[i].needs_page() {
                    return MergeStep::NeedPages(vec![i]);
                }
                match self.cursors[i].pop() {
                    Some(row) => MergeStep::Row(row, i),
                    None => MergeStep::NeedPages(vec![i]),
                }
            }
            MergeOrder::Sorted(orders) => {
                let needed = self.prefetchable();
                if !needed.is_empty() {
                    return MergeStep::NeedPages(needed);
                }
                let mut best: Option<usize> = None;
                for (i, c) in self.cursors.iter().enumerate() {
                    let Some(head) = c.buffered.front() else {
                        continue;
                    };
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let other = &self.cursors[b].buffered[0];
                            compare_keys(&head.keys, &other.keys, orders) == Ordering::Less
                        }
                    };
                    if better {
                        best = Some(i);
                    }
                }
                let Some(i) = best else {
                    return MergeStep::Done;
                };
                let Some(row) = self.cursors[i].pop() else {
                    return MergeStep::NeedPages(vec![i]);
                };
                self.last_key = Some((row.keys.clone(), row.rid.clone()));
                MergeStep::Row(row, i)
            }
        }
    }
}

#[cfg(test)]
#[path = "range_merge_tests.rs"]
mod tests;
