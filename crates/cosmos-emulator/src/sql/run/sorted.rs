//! Pages of queries that must see every row before their first page: ORDER BY (rows sorted by
//! their keys, then document order) and whole-result queries (aggregates, GROUP BY, DISTINCT).
//!
//! The sorted rows or final results are computed once per state of the data and kept in the
//! [`ResultCache`](super::result_cache::ResultCache); each later page finds its start by binary
//! search on the position its continuation names (ORDER BY) or by index (whole results), so
//! paging a large ORDER BY costs one scan and sort, not one per page. A write between pages moves
//! a range's LSN: the next page recomputes from the current state and still resumes strictly
//! after the last row returned. What is kept is each row's sort keys and its result's JSON text,
//! never the documents; it is kept only while pages remain, and dropped with the last page.
//!
//! Computing an answer reads the whole scope under the page's budget: a scope too large for one
//! page is read over several, each ending empty with a continuation, and the first results come
//! once it is read ([`super::build`]).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::budget::{no_room, sql_error};
use super::build::{build_page, BuildAt, Built, Gather};
use super::scan::{local_marks, read_points};
use super::token::{Position, QueryToken, SortKey};
use super::vector_fast::FastVector;
use super::{Answer, CachedResult, OrderedRow, ResultKey};
use super::{Execution, Page, Window};
use crate::protocol::ApiError;
use crate::sql::collect::{finish_gathered, run_metered};
use crate::sql::eval::{Ctx, Scope};
use crate::sql::exec::{compare_keys, order_keys, passes};
use crate::sql::grouping::Gathered;
use crate::sql::meter::{heap_size, Meter};
use crate::sql::SqlError;
use crate::store::{DocKey, StoredDoc};

/// Bytes of bookkeeping per kept row or result, besides its values.
const ROW_BYTES: usize = std::mem::size_of::<OrderedRow>() + 32;

/// A query's whole answer, or the continuation of its build when the page's budget ran out first.
enum Got {
    Ready {
        result: Arc<CachedResult>,
        key: Box<ResultKey>,
        /// Found in the cache (else just built).
        kept: bool,
        /// Built from one consistent state of the data, so it may be kept for later pages.
        keepable: bool,
    },
    Building(BuildAt),
}

/// A meter for turning what was gathered into the answer: the page's time budget again, and no
/// work limit (what a build holds is bounded by its memory cap).
fn finishing_meter(ex: &Execution<'_>) -> Meter {
    Meter::new(u64::MAX, ex.limits.page_time)
}

/// The answer for the scope at the LSNs the request reads: from the cache, or built from every
/// document of the scope over as many pages as the budget needs. `done` turns the gathered state
/// into the answer.
fn answer<S: Gather>(
    ex: &Execution<'_>,
    at: Option<BuildAt>,
    fresh: impl FnOnce() -> S,
    done: impl FnOnce(S) -> Result<Answer, ApiError>,
) -> Result<Got, ApiError> {
    let params: BTreeMap<&String, &Value> = ex.params.iter().collect();
    let lsns = read_points(ex)?;
    let key = ResultKey {
        container: ex.container.rid.clone(),
        text: ex.text.to_owned(),
        params: serde_json::to_string(&params).unwrap_or_default(),
        region: ex.region,
        ranges: lsns.clone(),
        only_epk: ex.scope.only_epk,
        local: local_marks(ex)?,
    };
    if at.is_none() {
        if let Some(result) = ex.state.results.get(&key) {
            return Ok(Got::Ready {
                result,
                key: Box::new(key),
                kept: true,
                keepable: true,
            });
        }
    }
    match build_page(ex, &lsns, at, fresh)? {
        Built::Yielded(at) => Ok(Got::Building(at)),
        Built::Done {
            state,
            consistent,
            mut reservation,
        } => {
            let answer = done(state)?;
            let bytes = answer_bytes(&answer);
            // The answer replaces the build it came from in the reservation.
            if !ex.state.reserve(&mut reservation, bytes) {
                return Err(no_room(&ex.limits));
            }
            Ok(Got::Ready {
                result: Arc::new(CachedResult {
                    answer,
                    reservation,
                }),
                key: Box::new(key),
                kept: false,
                keepable: consistent,
            })
        }
    }
}

/// Keeps a just-built answer for the pages after this one, or drops a kept one whose last page
/// this was.
fn keep_or_release(ex: &Execution<'_>, page: &Page, got: Got) {
    let Got::Ready {
        result,
        key,
        kept,
        keepable,
    } = got
    else {
        return;
    };
    match (page.next.is_some(), kept) {
        (true, false) if keepable => ex.state.results.put(*key, result),
        (false, true) => ex.state.results.remove(&key),
        _ => {}
    }
}

fn answer_bytes(answer: &Answer) -> usize {
    match answer {
        Answer::Ordered(rows) => rows.iter().map(ordered_row_bytes).sum(),
        Answer::Whole(items) => items.iter().map(|b| b.len() + ROW_BYTES).sum(),
    }
}

fn ordered_row_bytes(r: &OrderedRow) -> usize {
    ROW_BYTES
        + r.doc.id.len()
        + r.keys.iter().flatten().map(heap_size).sum::<usize>()
        + r.item.as_ref().map_or(0, Bytes::len)
}

/// The continuation of a page that ended mid-build: the build, then where its pages resume.
fn building(at: BuildAt, then: Option<QueryToken>) -> QueryToken {
    QueryToken::Build {
        id: at.id,
        at: at.at,
        then: then.map(Box::new),
    }
}

fn wrong_shape() -> ApiError {
    ApiError::new(500, "A kept query answer has the wrong shape.")
}

/// The rows of an ORDER BY gathered so far, and where the rows of this page's stretch of the scan
/// begin (each stretch is sorted when its page ends, so the final sort merges sorted runs).
struct Ordered {
    rows: Vec<OrderedRow>,
    run: usize,
    held: usize,
    /// With TOP or OFFSET/LIMIT: the most rows the answer can use. Past twice that, the best
    /// `keep` rows are selected and the rest dropped, so a top-k query (a vector search) holds
    /// memory by k, not by the rows it reads.
    keep: Option<usize>,
    /// Once rows were dropped: the last row kept (the k-th best so far). A row that sorts after
    /// it can never be in the answer, so it is neither projected nor held.
    bound: Option<Bound>,
    /// A vector search whose items are scored from their kept embeddings: an item scored past
    /// the bound is passed over unparsed.
    fast: Option<FastVector>,
}

/// The sort position of the k-th best row kept.
struct Bound {
    keys: Vec<Option<Value>>,
    doc: DocKey,
    row: u64,
}

impl Ordered {
    fn cut(&mut self, ex: &Execution<'_>) {
        let Some(keep) = self.keep else { return };
        if self.rows.len() < keep.saturating_mul(2).max(64) {
            return;
        }
        if keep == 0 {
            self.rows.clear();
        } else {
            // Selecting the best `keep` costs linear time; the final sort orders them.
            self.rows.select_nth_unstable_by(keep - 1, order_of(ex));
            self.rows.truncate(keep);
            // After the selection, the last row is the worst kept.
            let worst = &self.rows[keep - 1];
            self.bound = Some(Bound {
                keys: worst.keys.clone(),
                doc: worst.doc.clone(),
                row: worst.row,
            });
        }
        self.run = 0;
        self.held = self.rows.iter().map(ordered_row_bytes).sum();
    }

    /// Whether a row at this sort position sorts after the bound (so cannot be in the answer).
    fn beyond_bound(
        &self,
        ex: &Execution<'_>,
        keys: &[Option<Value>],
        doc: &DocKey,
        row: u64,
    ) -> bool {
        self.bound.as_ref().is_some_and(|b| {
            compare_keys(ex.query, keys, &b.keys)
                .then_with(|| doc.cmp(&b.doc))
                .then_with(|| row.cmp(&b.row))
                == Ordering::Greater
        })
    }
}

fn order_of<'e>(ex: &'e Execution<'_>) -> impl Fn(&OrderedRow, &OrderedRow) -> Ordering + 'e {
    move |a, b| {
        compare_keys(ex.query, &a.keys, &b.keys)
            .then_with(|| a.doc.cmp(&b.doc))
            .then_with(|| a.row.cmp(&b.row))
    }
}

impl Gather for Ordered {
    fn row(
        &mut self,
        ex: &Execution<'_>,
        row: &Scope<'_>,
        key: &DocKey,
        ordinal: u64,
        doc: &StoredDoc,
    ) -> Result<(), SqlError> {
        let ctx = ex.ctx();
        if !passes(ex.query, row, &ctx)? {
            return Ok(());
        }
        ex.matched.note(doc);
        let keys = order_keys(ex.query, row, &ctx)?;
        if self.beyond_bound(ex, &keys, key, ordinal) {
            return Ok(());
        }
        let item = ex.project_bytes(row, doc)?;
        let row = OrderedRow {
            keys,
            doc: key.clone(),
            row: ordinal,
            item,
        };
        self.held += ordered_row_bytes(&row);
        self.rows.push(row);
        self.cut(ex);
        Ok(())
    }

    fn passes_over(
        &mut self,
        ex: &Execution<'_>,
        key: &DocKey,
        doc: &StoredDoc,
    ) -> Result<bool, SqlError> {
        let (Some(fast), Some(_)) = (&self.fast, &self.bound) else {
            return Ok(false);
        };
        let Some(score) = fast.key(&ex.meter, doc)? else {
            return Ok(false);
        };
        // A document without JOIN yields one row, its first.
        Ok(self.beyond_bound(ex, std::slice::from_ref(&score), key, 0))
    }

    fn held(&self) -> usize {
        self.held
    }

    fn pause(&mut self, ex: &Execution<'_>) {
        self.rows[self.run..].sort_by(order_of(ex));
        self.run = self.rows.len();
    }
}

/// One page of an ORDER BY query, strictly after the row `resume` names (keys, position, rows
/// seen so far), or of its build (`at`).
pub(super) fn ordered(
    ex: &Execution<'_>,
    resume: Option<QueryToken>,
    at: Option<BuildAt>,
    window: &Window,
) -> Result<Page, ApiError> {
    let q = ex.query;
    let mut page = Page::default();
    let after = match &resume {
        Some(QueryToken::Order { keys, at, seen }) => {
            let keys: Vec<Option<Value>> = keys.iter().map(SortKey::to_val).collect();
            Some((keys, at.key()?, at.row, *seen))
        }
        _ => None,
    };
    let got = answer(
        ex,
        at,
        || Ordered {
            rows: Vec::new(),
            run: 0,
            held: 0,
            keep: window.end.and_then(|end| usize::try_from(end).ok()),
            bound: None,
            fast: FastVector::of(ex),
        },
        |mut o: Ordered| {
            o.rows.sort_by(order_of(ex));
            Ok(Answer::Ordered(o.rows))
        },
    )?;
    let result = match &got {
        Got::Ready { result, .. } => result.clone(),
        Got::Building(at) => {
            page.next = Some(building(
                BuildAt {
                    id: at.id,
                    at: at.at.clone(),
                },
                resume,
            ));
            return Ok(page);
        }
    };
    let Answer::Ordered(rows) = &result.answer else {
        return Err(wrong_shape());
    };
    let start = match &after {
        None => 0,
        Some((keys, doc, row, _)) => rows.partition_point(|r| {
            compare_keys(q, &r.keys, keys)
                .then_with(|| r.doc.cmp(doc))
                .then_with(|| r.row.cmp(row))
                != Ordering::Greater
        }),
    };
    let mut seen = after.as_ref().map_or(0, |a| a.3);
    let mut last: Option<&OrderedRow> = None;
    let mut stopped_full = false;
    for r in &rows[start..] {
        if window.end.is_some_and(|end| seen >= end) {
            break;
        }
        if ex.full(page.items.len(), page.bytes) {
            stopped_full = true;
            break;
        }
        page.scanned += 1;
        seen += 1;
        if seen > window.offset {
            if let Some(item) = &r.item {
                page.push(item.clone());
            }
        }
        last = Some(r);
    }
    if let (true, Some(r)) = (stopped_full, last) {
        page.next = Some(QueryToken::Order {
            keys: r.keys.iter().map(SortKey::from_val).collect(),
            at: Position::new(&r.doc, r.row),
            seen,
        });
    }
    drop(result);
    keep_or_release(ex, &page, got);
    Ok(page)
}

/// What an aggregate, GROUP BY or DISTINCT query gathers.
struct Whole(Gathered);

impl Gather for Whole {
    fn row(
        &mut self,
        ex: &Execution<'_>,
        row: &Scope<'_>,
        _: &DocKey,
        _: u64,
        doc: &StoredDoc,
    ) -> Result<(), SqlError> {
        let ctx = ex.ctx();
        if passes(ex.query, row, &ctx)? {
            ex.matched.note(doc);
            self.0.add(ex.query, row, &ctx)?;
        }
        Ok(())
    }

    fn held(&self) -> usize {
        self.0.held()
    }
}

fn to_bytes(values: Vec<Value>) -> Vec<Bytes> {
    values
        .into_iter()
        .map(|v| Bytes::from(serde_json::to_vec(&v).unwrap_or_default()))
        .collect()
}

/// One page of a query answered from all its rows, from result `start` on, or of its build
/// (`at`).
pub(super) fn whole_result(
    ex: &Execution<'_>,
    start: u64,
    at: Option<BuildAt>,
) -> Result<Page, ApiError> {
    let q = ex.query;
    let mut page = Page::default();
    let got = if q.from.is_none() {
        let results = run_metered(q, &[], ex.params, &ex.meter).map_err(sql_error)?;
        let mut reservation = ex.state.memory.reservation();
        let answer = Answer::Whole(to_bytes(results));
        if !ex.state.reserve(&mut reservation, answer_bytes(&answer)) {
            return Err(no_room(&ex.limits));
        }
        Got::Ready {
            result: Arc::new(CachedResult {
                answer,
                reservation,
            }),
            key: Box::new(ResultKey {
                container: String::new(),
                text: String::new(),
                params: String::new(),
                region: 0,
                ranges: Vec::new(),
                only_epk: None,
                local: Vec::new(),
            }),
            kept: false,
            keepable: false,
        }
    } else {
        answer(
            ex,
            at,
            || Whole(Gathered::new(q)),
            |Whole(gathered)| {
                let meter = finishing_meter(ex);
                let ctx = Ctx {
                    params: ex.params,
                    aggregates: None,
                    work: &meter,
                    subquery: crate::sql::collect::run_subquery,
                };
                let values = finish_gathered(q, gathered, None, &ctx).map_err(sql_error)?;
                Ok(Answer::Whole(to_bytes(values)))
            },
        )?
    };
    let result = match &got {
        Got::Ready { result, .. } => result.clone(),
        Got::Building(at) => {
            let then = (start > 0).then_some(QueryToken::Results { n: start });
            page.next = Some(building(
                BuildAt {
                    id: at.id,
                    at: at.at.clone(),
                },
                then,
            ));
            return Ok(page);
        }
    };
    let Answer::Whole(results) = &result.answer else {
        return Err(wrong_shape());
    };
    let mut n = start as usize;
    while let Some(item) = results.get(n) {
        if ex.full(page.items.len(), page.bytes) {
            page.next = Some(QueryToken::Results { n: n as u64 });
            break;
        }
        page.push(item.clone());
        n += 1;
    }
    page.scanned = n.saturating_sub(start as usize);
    drop(result);
    keep_or_release(ex, &page, got);
    Ok(page)
}
