//! Building the answer of a query that must see every row (ORDER BY, aggregates, GROUP BY,
//! DISTINCT) over as many pages as its scope needs.
//!
//! A build reads its scope in the container's stable document order (effective partition key,
//! then id) under the page's budget, feeding each row to what the query gathers ([`Gather`]).
//! When the budget runs out first, the build goes on the store's
//! [`BuildShelf`](crate::store::BuildShelf) and the page ends empty with a continuation naming it
//! and the row it stopped at; the next page takes it back and reads on from that row. A build
//! that is gone (evicted or idle, taken by a concurrent or repeated request, or from another
//! scope) starts again from the beginning: nothing of its answer was returned yet, so the answer
//! stays exact. Between pages a write is seen as by a streaming scan: a document is read once, as
//! it is when the scan reaches it.
//!
//! A build holds a [`Reservation`] of the memory it holds, checked after every row against the
//! per-query cap and the store's total; it moves with the build onto the shelf and into the kept
//! answer, and is given back when they are dropped.

use std::collections::BTreeMap;

use serde_json::Value;

use super::budget::{hold, over_budget, Halt};
use super::scan::DocScan;
use super::token::Position;
use super::Execution;
use super::{BuildKey, Reservation};
use crate::epk::{epk_hex, EpkFilter};
use crate::protocol::ApiError;
use crate::sql::eval::Scope;
use crate::sql::exec::{for_each_row, Flow};
use crate::sql::SqlError;
use crate::store::{DocKey, StoredDoc};

/// What a build gathers, row by row.
pub(super) trait Gather: Send + 'static {
    /// Adds `row` (row `ordinal` of document `key`): everything is evaluated before anything is
    /// added, so an error (a budget running out) leaves the state as it was.
    fn row(
        &mut self,
        ex: &Execution<'_>,
        row: &Scope<'_>,
        key: &DocKey,
        ordinal: u64,
        doc: &StoredDoc,
    ) -> Result<(), SqlError>;

    /// Whether document `doc` (key `key`, read from its first row) may be passed over unparsed:
    /// none of its rows can be in the answer. Evaluated in full, it would add nothing.
    fn passes_over(
        &mut self,
        _ex: &Execution<'_>,
        _key: &DocKey,
        _doc: &StoredDoc,
    ) -> Result<bool, SqlError> {
        Ok(false)
    }

    /// Bytes, about, the state holds.
    fn held(&self) -> usize;

    /// Tidies the state before it is shelved.
    fn pause(&mut self, _ex: &Execution<'_>) {}
}

/// A build in progress: what it gathered and where its scan stands.
struct Build<S> {
    state: S,
    /// Where the scan resumes: a document and how many of its rows were read.
    at: Option<(DocKey, u64)>,
    reservation: Reservation,
    /// Each range's id and LSN when the build started: a build that read every range at these
    /// LSNs is the answer at them (and may be kept under them).
    started_at: Vec<(String, u64)>,
}

/// Where a continuation says a build stands.
pub(crate) struct BuildAt {
    pub id: u64,
    pub at: Option<Position>,
}

/// What one page of a build came to.
pub(super) enum Built<S> {
    /// The scope is read: the whole state, whether it was read at the request's LSNs throughout,
    /// and the memory it holds.
    Done {
        state: S,
        consistent: bool,
        reservation: Reservation,
    },
    /// The budget ran out: the continuation's build id and position.
    Yielded(BuildAt),
}

/// What identifies a build besides its number: the query and its scope.
fn key_of(ex: &Execution<'_>, id: u64) -> BuildKey {
    key_for(ex.container, ex.scope, ex.text, ex.params, id)
}

/// The key of build `id` of query `text` with `params` over `scope` of `container` (also the key
/// a ranked query keeps its progress under).
pub(crate) fn key_for(
    container: &crate::store::Container,
    scope: &super::ReadScope,
    text: &str,
    params: &std::collections::HashMap<String, Value>,
    id: u64,
) -> BuildKey {
    let params: BTreeMap<&String, &Value> = params.iter().collect();
    let mut scope_text: Vec<String> = scope
        .ranges
        .iter()
        .map(|&r| container.range_id(r).to_owned())
        .collect();
    match scope.only_epk {
        Some(EpkFilter::Key(epk)) => scope_text.push(epk_hex(epk)),
        Some(EpkFilter::Range(min, max)) => {
            scope_text.push(format!("{}-{}", epk_hex(min), epk_hex(max)))
        }
        None => {}
    }
    BuildKey {
        container: container.rid.clone(),
        text: text.to_owned(),
        params: serde_json::to_string(&params).unwrap_or_default(),
        scope: scope_text.join(","),
        id,
    }
}

/// The build `at` names, taken off the shelf when it is there and stands where `at` says; else a
/// new one, from `fresh`, started at the LSNs `lsns`.
fn take_or_start<S: Gather>(
    ex: &Execution<'_>,
    lsns: &[(String, u64)],
    at: Option<BuildAt>,
    fresh: impl FnOnce() -> S,
) -> (u64, Build<S>) {
    let shelf = &ex.state.builds;
    let resumed = at.and_then(|at| {
        let build = shelf
            .take(&key_of(ex, at.id))?
            .downcast::<Build<S>>()
            .ok()?;
        let wanted = match &at.at {
            None => None,
            Some(p) => Some((p.key().ok()?, p.row)),
        };
        (build.at == wanted).then_some((at.id, *build))
    });
    match resumed {
        Some(found) => found,
        None => (
            shelf.next_id(),
            Build {
                state: fresh(),
                at: None,
                reservation: ex.state.memory.reservation(),
                started_at: lsns.to_vec(),
            },
        ),
    }
}

/// Reads on with the build `at` names (or a new one, from `fresh`) at the LSNs `lsns`, until the
/// scope is read or the page's budget ends.
pub(super) fn build_page<S: Gather>(
    ex: &Execution<'_>,
    lsns: &[(String, u64)],
    at: Option<BuildAt>,
    fresh: impl FnOnce() -> S,
) -> Result<Built<S>, ApiError> {
    let shelf = &ex.state.builds;
    let (id, mut build) = take_or_start(ex, lsns, at, fresh);
    let ctx = ex.ctx();
    let q = ex.query;
    let (start, mut skip) = match &build.at {
        Some((key, row)) => (Some(key.clone()), *row),
        None => (None, 0),
    };
    let mut scan = DocScan::new(ex, Some(lsns), start.clone());
    let mut progress = false;
    let shelve = |mut build: Build<S>, key: DocKey, row: u64| {
        build.state.pause(ex);
        let at = Position::new(&key, row);
        build.at = Some((key, row));
        shelf.put(key_of(ex, id), Box::new(build));
        Built::Yielded(BuildAt { id, at: Some(at) })
    };
    while let Some((key, doc)) = scan.next()? {
        let first_row = if start.as_ref() == Some(&key) {
            std::mem::take(&mut skip)
        } else {
            0
        };
        if progress && ex.meter.spent() {
            return Ok(shelve(build, key, first_row));
        }
        if first_row == 0 {
            match build.state.passes_over(ex, &key, &doc).map_err(Halt::from) {
                Ok(true) => {
                    progress = true;
                    continue;
                }
                Ok(false) => {}
                Err(Halt::Budget(_)) if progress => return Ok(shelve(build, key, 0)),
                Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
                Err(Halt::Fail(e)) => return Err(e),
            }
        }
        let value = match ex.parse(&doc) {
            Ok(v) => v,
            Err(Halt::Budget(_)) if progress => return Ok(shelve(build, key, first_row)),
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        };
        let mut row_no = first_row;
        let mut paused = false;
        let mut refused: Option<ApiError> = None;
        let walked = for_each_row(q, Some(&value), None, &ctx, first_row, &mut |row| {
            if progress && ex.meter.spent() {
                paused = true;
                return Ok(Flow::Stop);
            }
            build.state.row(ex, row, &key, row_no, &doc)?;
            row_no += 1;
            progress = true;
            if let Err(e) = hold(
                &ex.limits,
                ex.state,
                &mut build.reservation,
                build.state.held(),
            ) {
                refused = Some(e);
                return Ok(Flow::Stop);
            }
            Ok(Flow::Go)
        });
        if let Some(e) = refused {
            return Err(e);
        }
        match walked.map_err(Halt::from) {
            Ok(_) if paused => return Ok(shelve(build, key, row_no)),
            Ok(_) => progress = true,
            Err(Halt::Budget(_)) if progress => return Ok(shelve(build, key, row_no)),
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        }
    }
    let consistent = build.started_at == lsns;
    Ok(Built::Done {
        state: build.state,
        consistent,
        reservation: build.reservation,
    })
}
