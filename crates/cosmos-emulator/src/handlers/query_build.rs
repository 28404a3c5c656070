//! Building the answer of a query that must see every row (ORDER BY, aggregates, GROUP BY,
//! DISTINCT) over as many pages as its scope needs.
//!
//! A build reads its scope in the container's stable document order (effective partition key,
//! then id) under the page's work and time budget ([`super::query_budget`]), feeding each
//! document to what the query gathers. When the budget runs out first, the build goes on the
//! store's [`BuildShelf`](crate::store::BuildShelf) and the page ends empty with a continuation
//! naming it; the next page takes it back and reads on strictly after the last document read.
//! A build that is gone (evicted, taken by a concurrent or repeated request, or from another
//! scope) starts again from the beginning: nothing of its answer was returned yet, so the answer
//! stays exact. Between pages a write is seen as by a streaming scan: a document is read once,
//! as it is when the scan reaches it.

use std::any::Any;
use std::collections::BTreeMap;
use std::ops::Bound;

use serde_json::Value;

use super::consistency::{read_lsn, session_token};
use super::query_budget::{exceeded, next_step, Step};
use super::query_page::{parse_doc, Budget, Page, Scope};
use super::query_sorted::QueryIdentity;
use super::query_token::Position;
use super::replica_headers::replica_state;
use super::target::live;
use crate::epk::{epk_hex, EpkFilter};
use crate::exchange::RequestCtx;
use crate::protocol::ApiError;
use crate::store::{BuildKey, Container, DocKey};

/// Documents read from a partition per lock acquisition.
const SCAN_CHUNK: usize = 256;

/// A build in progress: what it gathered and where its scan stands.
pub struct Build<S> {
    pub state: S,
    /// The last document read (the scan resumes strictly after it).
    pub after: Option<DocKey>,
    /// Bytes `state` holds, about.
    pub held: usize,
    /// Each range's id and LSN when the build started: a build that read every range at these
    /// LSNs is the answer at them (and may be cached under them).
    pub started_at: Vec<(String, u64)>,
}

/// Where a continuation says a build stands.
pub struct BuildAt {
    pub id: u64,
    pub after: Option<Position>,
}

/// What one page of a build came to.
pub enum Built<S> {
    /// The scope is read: the whole state, and whether it was read at `lsns` throughout.
    Done {
        state: S,
        consistent: bool,
        held: usize,
    },
    /// The budget ran out: the continuation's build id and position.
    Yielded { id: u64, after: Option<Position> },
}

fn poisoned() -> ApiError {
    ApiError::new(500, "A partition lock was poisoned.")
}

/// Each range's id and the LSN this request reads it at; the page gets the ranges' session
/// tokens and replication state.
pub fn read_points(
    ctx: &RequestCtx<'_>,
    container: &Container,
    scope: &Scope,
    page: &mut Page,
) -> Result<Vec<(String, u64)>, ApiError> {
    let mut lsns = Vec::with_capacity(scope.ranges.len());
    let mut tokens = Vec::with_capacity(scope.ranges.len());
    for &range in &scope.ranges {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
        let range_id = container.range_id(range);
        let lsn = read_lsn(ctx, &partition, range_id)?;
        tokens.push(session_token(ctx, &partition, range_id, lsn));
        page.replica = Some(replica_state(ctx, &partition, lsn, None));
        lsns.push((range_id.to_owned(), lsn));
    }
    page.session_tokens = tokens;
    Ok(lsns)
}

/// What identifies a build besides its number: the query and its scope.
fn key_of(container: &Container, identity: &QueryIdentity<'_>, scope: &Scope, id: u64) -> BuildKey {
    let params: BTreeMap<&String, &Value> = identity.params.iter().collect();
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
        text: identity.text.to_owned(),
        params: serde_json::to_string(&params).unwrap_or_default(),
        scope: scope_text.join(","),
        id,
    }
}

/// Reads on with the build `at` names (or a new one), feeding each document and its size in bytes
/// to `feed` (which answers the bytes it made the state hold), until the scope is read or the
/// page's budget ends (`pause` then tidies the state before it is shelved). `work` is the rows
/// bound so far by this request.
#[allow(clippy::too_many_arguments)]
pub fn build_page<S: Any + Send>(
    ctx: &RequestCtx<'_>,
    container: &Container,
    identity: &QueryIdentity<'_>,
    scope: &Scope,
    lsns: &[(String, u64)],
    at: Option<BuildAt>,
    budget: &Budget,
    page: &mut Page,
    work: &std::cell::Cell<u64>,
    fresh: impl FnOnce() -> S,
    mut feed: impl FnMut(&mut S, &DocKey, Value, usize) -> Result<usize, ApiError>,
    mut pause: impl FnMut(&mut S),
) -> Result<Built<S>, ApiError> {
    let shelf = &ctx.shared.store.query_builds;
    let resumed = at.and_then(|at| {
        let key = key_of(container, identity, scope, at.id);
        let build = shelf.take(&key)?.downcast::<Build<S>>().ok()?;
        let after = match &at.after {
            None => None,
            Some(p) => Some(p.key().ok()?),
        };
        (build.after == after).then_some((at.id, *build))
    });
    let (id, mut build) = match resumed {
        Some(found) => found,
        None => (
            shelf.next_id(),
            Build {
                state: fresh(),
                after: None,
                held: 0,
                started_at: lsns.to_vec(),
            },
        ),
    };
    let mut scanned = 0usize;
    for (&range, (_, lsn)) in scope.ranges.iter().zip(lsns) {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        loop {
            let chunk = {
                let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
                let from = match &build.after {
                    Some(k) => Bound::Excluded(k),
                    None => Bound::Unbounded,
                };
                partition.scan_from(*lsn, from, scope.only_epk, SCAN_CHUNK)
            };
            if chunk.is_empty() {
                break;
            }
            for (key, doc) in chunk {
                scanned += 1;
                page.scanned = scanned;
                let value = parse_doc(&doc)?;
                let held = feed(&mut build.state, &key, value, doc.body.len())?;
                build.held = build.held.saturating_add(held);
                build.after = Some(key);
                match next_step(budget.spent(work.get(), build.held), &budget.limits) {
                    Step::Go => {}
                    Step::Refuse => return Err(exceeded(&budget.limits)),
                    Step::Yield => {
                        pause(&mut build.state);
                        let after = build.after.as_ref().map(|k| Position::new(k, 0));
                        shelf.put(key_of(container, identity, scope, id), Box::new(build));
                        return Ok(Built::Yielded { id, after });
                    }
                }
            }
        }
    }
    let consistent = build.started_at == lsns;
    Ok(Built::Done {
        state: build.state,
        consistent,
        held: build.held,
    })
}
