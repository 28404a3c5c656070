//! What a query that must see every row gathers before it can answer, one row at a time: the
//! groups and their aggregate accumulators (aggregates, GROUP BY), the distinct projected values
//! (DISTINCT without ORDER BY), or the rows themselves (DISTINCT with ORDER BY, ORDER BY inside a
//! subquery). [`super::exec::finish`] turns it into the answer, so an
//! answer gathered in several steps (pages of a long scan) equals one gathered in one go.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::aggregate::Accumulator;
use super::ast::{Expr, Projection, Query};
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

/// Bytes a row bound from a document of `doc_bytes` bytes holds, about.
pub fn row_bytes(doc_bytes: usize) -> usize {
    doc_bytes + 64
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

    /// Adds one row that passed the filter, bound from a document of `doc_bytes` bytes; answers
    /// the bytes, about, it made the state hold.
    pub fn add(
        &mut self,
        q: &Query,
        names: &[String],
        row: Row,
        doc_bytes: usize,
        outer: Option<&Scope<'_>>,
        ctx: &Ctx<'_>,
    ) -> Result<usize, SqlError> {
        let grouping = match self {
            Self::Rows(rows) => {
                let bytes = row_bytes(doc_bytes);
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
                held = row_bytes(doc_bytes);
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
                    held = row_bytes(doc_bytes) + key.len();
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

/// Whether `q` has the shape of the per-range aggregate queries of a query plan
/// ([`super::plan`]): `SELECT VALUE [{"item": <aggregates>}]`, or `... AS groupByItems, ... AS
/// payload` with GROUP BY or aggregates, without DISTINCT, ORDER BY, TOP or OFFSET/LIMIT. Partial
/// answers of such a query over parts of its rows combine into its answer (the SDKs sum, merge and
/// group the rows of every page and range), so the service answers each page with the partial
/// aggregates of the documents that page read.
pub fn combines_across_pages(q: &Query) -> bool {
    if q.distinct
        || !q.order_by.is_empty()
        || q.top.is_some()
        || q.offset.is_some()
        || q.limit.is_some()
        || (q.aggregates.is_empty() && q.group_by.is_empty())
    {
        return false;
    }
    match &q.projection {
        Projection::Value(Expr::Array(items)) => {
            q.group_by.is_empty()
                && items.len() == 1
                && matches!(&items[0], Expr::Object(fields) if fields.len() == 1 && fields[0].0 == "item")
        }
        Projection::Items(items) => {
            let aliases: Vec<Option<&str>> = items.iter().map(|i| i.alias.as_deref()).collect();
            aliases == [Some("groupByItems"), Some("payload")]
        }
        _ => false,
    }
}

impl Gathered {
    /// Rows (groups, values) gathered so far.
    pub fn len(&self) -> usize {
        match self {
            Self::Groups(g) => g.groups.len(),
            Self::Distinct(_, values) => values.len(),
            Self::Rows(rows) => rows.len(),
        }
    }

    /// Whether nothing was gathered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;

    #[test]
    fn only_the_plans_per_range_aggregate_shapes_combine_across_pages() {
        let table = [
            (r#"SELECT VALUE [{"item": COUNT(1)}] FROM c"#, true),
            (
                r#"SELECT VALUE [{"item": {"sum": SUM(c.n), "count": COUNT(c.n)}}] FROM c WHERE c.n > 1"#,
                true,
            ),
            (
                r#"SELECT [{"item": c.g}] AS groupByItems, {"g": c.g, "n": {"item": COUNT(1)}} AS payload FROM c GROUP BY c.g"#,
                true,
            ),
            (
                r#"SELECT [] AS groupByItems, {"n": {"item": COUNT(1)}} AS payload FROM c"#,
                true,
            ),
            ("SELECT VALUE COUNT(1) FROM c", false),
            ("SELECT COUNT(1) AS n FROM c", false),
            ("SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", false),
            (r#"SELECT VALUE [{"item": c.n}] FROM c"#, false),
            (r#"SELECT VALUE [{"other": COUNT(1)}] FROM c"#, false),
            (r#"SELECT TOP 1 VALUE [{"item": COUNT(1)}] FROM c"#, false),
            (
                r#"SELECT DISTINCT VALUE [{"item": COUNT(1)}] FROM c"#,
                false,
            ),
            ("SELECT DISTINCT VALUE c.n FROM c", false),
        ];
        for (text, want) in table {
            let q = parse_query(text).unwrap();
            assert_eq!(combines_across_pages(&q), want, "{text}");
        }
    }
}
