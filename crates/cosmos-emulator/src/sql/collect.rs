//! Gathering a query's answer from its rows: a [`Collector`] keeps what the query needs (only the
//! wanted results of a streaming query, or what [`Gathered`] holds for one that must see every
//! row) and answers at the end. Subqueries and whole-query runs over a set of documents go
//! through it.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::Query;
use super::eval::{Ctx, Scope, Want};
use super::exec::{
    compare_keys, for_each_row, needs_all_rows, passes, project, source_names, window_of, Flow,
};
use super::grouping::Gathered;
use super::meter::Meter;
use super::sql_error::SqlError;
use super::value::canonical;

/// Answers a query from what was gathered from all its filtered rows (see [`Gathered`]):
/// groups projected with their aggregates, rows ordered, DISTINCT, then OFFSET/LIMIT/TOP.
pub(crate) fn finish_gathered<'v>(
    q: &'v Query,
    gathered: Gathered,
    outer: Option<&'v Scope<'v>>,
    ctx: &Ctx<'v>,
) -> Result<Vec<Value>, SqlError> {
    let mut values: Vec<Value> = Vec::new();
    match gathered {
        Gathered::Groups(grouping) => {
            let names = source_names(q);
            for (row, results) in grouping.results() {
                let refs: Vec<&Value> = row.iter().collect();
                let scope = Scope {
                    names: &names,
                    values: &refs,
                    outer,
                };
                let inner = ctx.with_aggregates(&results);
                if let Some(v) = project(q, &scope, &inner)? {
                    values.push(v);
                }
            }
        }
        Gathered::Distinct {
            values: distinct, ..
        } => values = distinct,
        Gathered::Sorted { mut rows, .. } => {
            if !q.order_by.is_empty() {
                rows.sort_by(|a, b| compare_keys(q, &a.0, &b.0));
            }
            values.extend(rows.into_iter().filter_map(|(_, v)| v));
        }
    }
    if q.distinct {
        let mut seen = std::collections::HashSet::new();
        values.retain(|v| seen.insert(canonical(Some(v))));
    }
    let (offset, take) = window_of(q, ctx)?;
    Ok(values
        .into_iter()
        .skip(offset as usize)
        .take(take.map_or(usize::MAX, |n| n as usize))
        .collect())
}

/// Gathers a query's answer from its rows: a query without ORDER BY, aggregates, GROUP BY or
/// DISTINCT keeps only its projected results and stops as soon as it has what is wanted; any
/// other gathers what it needs ([`Gathered`]) and answers at [`Collector::finish`].
pub(crate) struct Collector<'v> {
    q: &'v Query,
    gathered: Option<Gathered>,
    results: Vec<Value>,
    seen: u64,
    offset: u64,
    /// Results after which nothing more is needed.
    enough: Option<u64>,
}

impl<'v> Collector<'v> {
    pub(crate) fn new(q: &'v Query, ctx: &Ctx<'_>, want: Want) -> Result<Self, SqlError> {
        let streams = !needs_all_rows(q) && q.order_by.is_empty();
        let (offset, take) = window_of(q, ctx)?;
        let wanted = match want {
            Want::First => Some(1),
            Want::All => None,
        };
        Ok(Self {
            q,
            gathered: (!streams).then(|| Gathered::new(q)),
            results: Vec::new(),
            seen: 0,
            offset,
            enough: [take, wanted].into_iter().flatten().min(),
        })
    }

    /// Adds one row (filtered here).
    pub(crate) fn add(&mut self, row: &Scope<'_>, ctx: &Ctx<'_>) -> Result<Flow, SqlError> {
        let q = self.q;
        if !passes(q, row, ctx)? {
            return Ok(Flow::Go);
        }
        if let Some(g) = &mut self.gathered {
            g.add(q, row, ctx)?;
            return Ok(Flow::Go);
        }
        // OFFSET and LIMIT count the values a query answers (a row projecting to undefined
        // answers none).
        if let Some(v) = project(q, row, ctx)? {
            self.seen += 1;
            let room = self.enough.is_none_or(|n| (self.results.len() as u64) < n);
            if self.seen > self.offset && room {
                self.results.push(v);
            }
        }
        let done = self.enough.is_some_and(|n| self.results.len() as u64 >= n);
        Ok(if done { Flow::Stop } else { Flow::Go })
    }

    /// The answer.
    pub(crate) fn finish(
        self,
        outer: Option<&'v Scope<'v>>,
        ctx: &Ctx<'v>,
    ) -> Result<Vec<Value>, SqlError> {
        match self.gathered {
            Some(g) => finish_gathered(self.q, g, outer, ctx),
            None => Ok(self.results),
        }
    }
}

/// Runs a subquery in the scope of the enclosing row.
pub(crate) fn run_subquery<'v>(
    q: &'v Query,
    outer: &Scope<'v>,
    ctx: &Ctx<'v>,
    want: Want,
) -> Result<Vec<Value>, SqlError> {
    let inner = Ctx {
        params: ctx.params,
        aggregates: None,
        work: ctx.work,
        subquery: ctx.subquery,
    };
    let mut collector = Collector::new(q, &inner, want)?;
    for_each_row(q, None, Some(outer), &inner, 0, &mut |row| {
        collector.add(row, &inner)
    })?;
    collector.finish(Some(outer), &inner)
}

/// Runs a whole query over `docs` without a budget (tests and the differential corpus use this).
#[cfg(test)]
pub(crate) fn run(
    q: &Query,
    docs: &[Value],
    params: &HashMap<String, Value>,
) -> Result<Vec<Value>, SqlError> {
    run_metered(q, docs, params, &Meter::unlimited())
}

/// Runs a whole query over `docs` under `meter`.
pub(crate) fn run_metered(
    q: &Query,
    docs: &[Value],
    params: &HashMap<String, Value>,
    meter: &Meter,
) -> Result<Vec<Value>, SqlError> {
    let ctx = Ctx {
        params,
        aggregates: None,
        work: meter,
        subquery: run_subquery,
    };
    let mut collector = Collector::new(q, &ctx, Want::All)?;
    if q.from.is_none() {
        for_each_row(q, None, None, &ctx, 0, &mut |row| collector.add(row, &ctx))?;
    } else {
        for doc in docs {
            let flow = for_each_row(q, Some(doc), None, &ctx, 0, &mut |row| {
                collector.add(row, &ctx)
            })?;
            if flow == Flow::Stop {
                break;
            }
        }
    }
    collector.finish(None, &ctx)
}
