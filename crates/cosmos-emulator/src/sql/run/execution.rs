//! What one page of a query carries ([`Execution`]: the query, its scope, its limits, its meter
//! and what it has read), how it reads a range, and the page it answers.

use std::cell::Cell;
use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use super::budget::Halt;
use super::computed;
use super::token::QueryToken;
use super::QueryLimits;
use super::QueryState;
use crate::epk::EpkFilter;
use crate::protocol::ApiError;
use crate::sql::ast::{Projection, Query, Source};
use crate::sql::eval::{Ctx, Scope};
use crate::sql::exec::project;
use crate::sql::meter::Meter;
use crate::sql::SqlError;
use crate::store::{Container, Partition, StoredDoc};

/// How a page learns the LSN it reads a range at: the request's consistency rules decide (a
/// session ahead of the region's replica is refused), and the reply carries what was read.
pub(crate) trait RangeReads {
    /// The LSN range `range` is read at; `partition` is that range's partition, locked for
    /// reading.
    fn read_point(&self, range: usize, partition: &Partition) -> Result<u64, ApiError>;
}

/// The ranges a query reads and, for a single-partition or prefix query, the keys it reads.
pub(crate) struct ReadScope {
    pub ranges: Vec<usize>,
    pub only_epk: Option<EpkFilter>,
}

/// One page of a query: what it needs and what it has used.
pub(crate) struct Execution<'a> {
    pub container: &'a Container,
    pub query: &'a Query,
    /// The query's text and parameters (with the scope, what identifies its kept answers).
    pub text: &'a str,
    pub params: &'a HashMap<String, Value>,
    pub scope: &'a ReadScope,
    /// The region whose replica serves the request.
    pub region: usize,
    /// The store's kept answers, shelved builds and query memory.
    pub state: &'a QueryState,
    pub limits: QueryLimits,
    /// Most results in a page.
    pub max_items: usize,
    /// A page ends once its results reach this many bytes.
    pub max_bytes: usize,
    pub reads: &'a dyn RangeReads,
    /// The page's work and time budget (see [`Execution::meter_for`]).
    pub meter: Meter,
    /// Documents the page has read (start at 0).
    pub docs_read: Cell<usize>,
    /// Bytes of the documents the page has read (start at 0).
    pub bytes_read: Cell<usize>,
    /// Documents with a row that passed the WHERE clause: those an index lookup would load.
    pub matched: Matched,
}

/// Counts the documents with a row that passed the filter, each once: rows of one document are
/// walked one after another, so a document is counted when it differs from the last one counted.
#[derive(Default)]
pub(crate) struct Matched {
    docs: Cell<usize>,
    last: Cell<usize>,
}

impl Matched {
    /// Notes that a row of `doc` passed the filter.
    pub(crate) fn note(&self, doc: &StoredDoc) {
        let at = doc as *const StoredDoc as usize;
        if self.last.get() != at {
            self.last.set(at);
            self.docs.set(self.docs.get() + 1);
        }
    }

    /// Documents counted.
    pub(crate) fn docs(&self) -> usize {
        self.docs.get()
    }
}

impl Execution<'_> {
    /// A fresh meter for a page under `limits`.
    pub(crate) fn meter_for(limits: &QueryLimits) -> Meter {
        Meter::new(limits.page_work, limits.page_time)
    }

    /// The evaluation context of this page.
    pub(crate) fn ctx(&self) -> Ctx<'_> {
        Ctx {
            params: self.params,
            aggregates: None,
            work: &self.meter,
            subquery: crate::sql::collect::run_subquery,
        }
    }

    /// The document `doc` parsed, charged by its size.
    pub(super) fn parse(&self, doc: &StoredDoc) -> Result<Value, Halt> {
        self.meter.charge_bytes(doc.body.len())?;
        let mut value = serde_json::from_slice(&doc.body).map_err(|e| {
            Halt::Fail(ApiError::new(
                500,
                format!("A stored item could not be read: {e}"),
            ))
        })?;
        let props = self.container.computed();
        computed::add(&mut value, &props, &self.ctx())?;
        Ok(value)
    }

    /// The JSON text of `row`'s result (`None`: it yields nothing). `SELECT *` over the document
    /// itself answers the stored text as it is.
    pub(super) fn project_bytes(
        &self,
        row: &Scope<'_>,
        doc: &StoredDoc,
    ) -> Result<Option<Bytes>, SqlError> {
        if star_is_document(self.query) {
            self.meter.charge_bytes(doc.body.len())?;
            return Ok(Some(doc.body.clone()));
        }
        let ctx = self.ctx();
        let computed = self.container.computed();
        Ok(project(self.query, row, &ctx)?.map(|mut v| {
            computed::hide(self.query, &mut v, &computed);
            Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
        }))
    }

    /// Whether a page holding `items` of `bytes` bytes is full.
    pub(super) fn full(&self, items: usize, bytes: usize) -> bool {
        items >= self.max_items || bytes >= self.max_bytes
    }
}

/// Whether the query is `SELECT * FROM c` over whole documents (no path, no JOIN).
fn star_is_document(q: &Query) -> bool {
    matches!(q.projection, Projection::Star)
        && q.from.as_ref().is_some_and(|f| {
            f.joins.is_empty()
                && matches!(&f.source, Source::Container { path, .. } if path.is_empty())
        })
}

/// One page of results.
#[derive(Default)]
pub(crate) struct Page {
    /// Each result's JSON text.
    pub items: Vec<Bytes>,
    pub next: Option<QueryToken>,
    /// Documents read (or results walked).
    pub scanned: usize,
    /// Bytes of the results.
    pub bytes: usize,
    /// Documents the index would have loaded, when it answers the WHERE clause (`None`: the page
    /// loaded every document it read).
    pub loaded: Option<usize>,
    /// Index lookups that answer the WHERE clause.
    pub lookups: usize,
}

impl Page {
    pub(super) fn push(&mut self, item: Bytes) {
        self.bytes += item.len();
        self.items.push(item);
    }
}

/// OFFSET and the row count after which nothing more is returned.
pub(crate) struct Window {
    pub offset: u64,
    pub end: Option<u64>,
}
