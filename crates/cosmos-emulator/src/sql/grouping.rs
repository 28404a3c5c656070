//! What a query that must see every row gathers before it can answer, one row at a time: the
//! groups and their aggregate accumulators (aggregates, GROUP BY), the distinct projected values
//! (DISTINCT without ORDER BY), or the rows themselves (DISTINCT with ORDER BY, ORDER BY inside a
//! subquery). [`super::exec::finish`] turns it into the answer, so an
//! answer gathered in several steps (pages of a long scan) equals one gathered in one go.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::aggregate::Accumulator;
use super::ast::Query;
use super::eval::{eval, Ctx, Scope};
use super::exec::{project, Row};
use super::sql_error::SqlError;
use super::value::{canonical, Val};

/// Groups in first-seen order: each group's first row and its accumulators.
#[derive(Debug)]
pub struct Grouping {
    index: HashMap<String, usize>,
    groups: Vec<(Row, Vec<Accumulator>)>,
}

/// The rows (or groups, or distinct values) gathered so far.
#[derive(Debug)]
pub enum Gathered {
    Groups(Grouping),
    /// Each distinct projected value once, in first-seen order, with the canonical forms seen.
    Distinct(HashSet<String>, Vec<Value>),
    Rows(Vec<Row>),
}

/// Bytes a row holds, about (its JSON text).
pub fn row_bytes(row: &Row) -> usize {
    row.iter()
        .map(|v| serde_json::to_vec(v).map_or(0, |b| b.len()))
        .sum::<usize>()
        + 16
}

impl Gathered {
    /// Nothing gathered yet: one empty group for an aggregate without GROUP BY.
    pub fn new(q: &Query) -> Self {
        if q.aggregates.is_empty() && q.group_by.is_empty() {
            if q.distinct && q.order_by.is_empty() {
                return Self::Distinct(HashSet::new(), Vec::new());
            }
            return Self::Rows(Vec::new());
        }
        let mut groups = Vec::new();
        if q.group_by.is_empty() {
            groups.push((Vec::new(), fresh(q)));
        }
        Self::Groups(Grouping {
            index: HashMap::new(),
            groups,
        })
    }

    /// Adds one row that passed the filter; answers the bytes it made the state hold.
    pub fn add(
        &mut self,
        q: &Query,
        names: &[String],
        row: Row,
        outer: Option<&Scope<'_>>,
        ctx: &Ctx<'_>,
    ) -> Result<usize, SqlError> {
        let grouping = match self {
            Self::Rows(rows) => {
                let bytes = row_bytes(&row);
                rows.push(row);
                return Ok(bytes);
            }
            Self::Distinct(seen, values) => {
                let Some(v) = project(q, names, &row, outer, ctx)? else {
                    return Ok(0);
                };
                let form = canonical(Some(&v));
                if seen.contains(&form) {
                    return Ok(0);
                }
                let bytes = 2 * form.len() + 16;
                seen.insert(form);
                values.push(v);
                return Ok(bytes);
            }
            Self::Groups(g) => g,
        };
        let scope = Scope {
            names,
            values: &row,
            outer,
        };
        let mut held = 0;
        let slot = if q.group_by.is_empty() {
            if grouping.groups[0].0.is_empty() {
                held = row_bytes(&row);
                grouping.groups[0].0 = row.clone();
            }
            0
        } else {
            let mut key = String::new();
            for e in &q.group_by {
                key.push_str(&canonical(eval(e, &scope, ctx)?.as_ref()));
                key.push('|');
            }
            match grouping.index.get(&key) {
                Some(&i) => i,
                None => {
                    held = row_bytes(&row) + key.len();
                    grouping.index.insert(key, grouping.groups.len());
                    grouping.groups.push((row.clone(), fresh(q)));
                    grouping.groups.len() - 1
                }
            }
        };
        for (acc, call) in grouping.groups[slot].1.iter_mut().zip(&q.aggregates) {
            acc.add(eval(&call.arg, &scope, ctx)?);
        }
        Ok(held)
    }
}

impl Grouping {
    /// Each group's first row and its aggregate results, in first-seen order.
    pub fn results(self) -> Vec<(Row, Vec<Val>)> {
        self.groups
            .into_iter()
            .map(|(row, accs)| (row, accs.iter().map(Accumulator::result).collect()))
            .collect()
    }
}

fn fresh(q: &Query) -> Vec<Accumulator> {
    q.aggregates
        .iter()
        .map(|a| Accumulator::new(a.kind))
        .collect()
}
