//! Carrying a query out over rows: binding `FROM`/`JOIN`, filtering, grouping and aggregating,
//! ordering, `DISTINCT`, `OFFSET`/`LIMIT`/`TOP` and projection.
//!
//! [`for_each_row`] binds a document's rows one at a time, each row borrowing its values from the
//! document (or from the array a JOIN evaluated), so a document with thousands of JOIN rows is
//! never copied per row; it resumes at any row (`skip`) and stops when told. The query executor
//! (`crate::sql::run`) streams rows through [`passes`] and [`project`] page by page; a
//! subquery, and a query that must see every row before answering, gathers them with a
//! `Collector` (`super::collect`).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::ast::{Expr, Projection, Query, Source};
use super::eval::{eval, eval_ref, walk_ref, Ctx, Scope};
use super::limits::MAX_ROWS_PER_DOCUMENT;
use super::sql_error::SqlError;
use super::value::{is_true, order, Val};

/// One row as values of its own (the first row of a group), in source order.
pub(crate) type Row = Vec<Value>;

/// Whether a row walk goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Go,
    Stop,
}

/// The names the sources of `q` bind, in order.
pub(crate) fn source_names(q: &Query) -> Vec<&str> {
    match &q.from {
        None => Vec::new(),
        Some(from) => std::iter::once(&from.source)
            .chain(from.joins.iter())
            .map(Source::alias)
            .collect(),
    }
}

/// Whether the query must see all its rows before it can answer.
pub(crate) fn needs_all_rows(q: &Query) -> bool {
    !q.aggregates.is_empty() || !q.group_by.is_empty() || q.distinct
}

/// Calls `f` with each row `q`'s FROM clause binds, in order, from row `skip` on (the rows before
/// it are passed over without calling `f`), until `f` answers [`Flow::Stop`]. The rows come from
/// `doc` for a top-level query, from the enclosing row `outer` for a subquery (`doc` None); a
/// query without FROM binds one empty row. Each row bound charges one unit; more than
/// [`MAX_ROWS_PER_DOCUMENT`] rows is an error.
pub(crate) fn for_each_row<'v>(
    q: &'v Query,
    doc: Option<&'v Value>,
    outer: Option<&'v Scope<'v>>,
    ctx: &Ctx<'v>,
    skip: u64,
    f: &mut dyn FnMut(&Scope<'_>) -> Result<Flow, SqlError>,
) -> Result<Flow, SqlError> {
    let Some(from) = &q.from else {
        if skip > 0 {
            return Ok(Flow::Go);
        }
        ctx.work.charge(1)?;
        let scope = Scope {
            names: &[],
            values: &[],
            outer,
        };
        return f(&scope);
    };
    let names = source_names(q);
    let mut walk = Walk {
        joins: &from.joins,
        names: &names,
        skip,
        rows: 0,
        f,
    };
    let empty = Scope::EMPTY;
    let around = outer.unwrap_or(&empty);
    match &from.source {
        Source::Container {
            container, path, ..
        } => {
            let base = match doc {
                Some(d) => d,
                None => around
                    .lookup(container)
                    .ok_or_else(|| unresolved(container))?,
            };
            match walk_ref(base, path, around, ctx)? {
                Some(v) => walk.bind_each(&[], outer, ctx, std::slice::from_ref(v)),
                None => Ok(Flow::Go),
            }
        }
        Source::In { expr, .. } => {
            let root_name = [root_ident(expr).unwrap_or_default()];
            let root_value: Vec<&Value> = doc.into_iter().collect();
            let scope = match doc {
                Some(_) => Scope {
                    names: &root_name,
                    values: &root_value,
                    outer,
                },
                None => Scope {
                    names: &[],
                    values: &[],
                    outer,
                },
            };
            match eval_ref(expr, &scope, ctx)? {
                Some(Cow::Borrowed(Value::Array(items))) => walk.bind_each(&[], outer, ctx, items),
                Some(Cow::Owned(Value::Array(items))) => walk.bind_each(&[], outer, ctx, &items),
                _ => Ok(Flow::Go),
            }
        }
    }
}

/// The state of one walk over a document's rows.
struct Walk<'q, 'n, 'f> {
    joins: &'q [Source],
    names: &'n [&'q str],
    /// Rows still to pass over.
    skip: u64,
    /// Rows bound so far, passed over or not.
    rows: usize,
    f: &'f mut dyn FnMut(&Scope<'_>) -> Result<Flow, SqlError>,
}

impl<'q> Walk<'q, '_, '_> {
    /// Binds each of `items` as the next source after `bound`, and walks on.
    fn bind_each<'v>(
        &mut self,
        bound: &[&'v Value],
        outer: Option<&'v Scope<'v>>,
        ctx: &Ctx<'v>,
        items: &'v [Value],
    ) -> Result<Flow, SqlError>
    where
        'q: 'v,
    {
        let completes_a_row = bound.len() == self.joins.len();
        if completes_a_row && self.skip >= items.len() as u64 {
            // Every row of this stretch was consumed on an earlier page.
            self.skip -= items.len() as u64;
            self.count(items.len())?;
            return Ok(Flow::Go);
        }
        let mut next: Vec<&'v Value> = Vec::with_capacity(bound.len() + 1);
        for item in items {
            next.clear();
            next.extend_from_slice(bound);
            next.push(item);
            if self.level(&next, outer, ctx)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// With the sources before `bound.len()` bound: the row itself, or the next JOIN's values.
    fn level<'v>(
        &mut self,
        bound: &[&'v Value],
        outer: Option<&'v Scope<'v>>,
        ctx: &Ctx<'v>,
    ) -> Result<Flow, SqlError>
    where
        'q: 'v,
    {
        let names = self.names;
        let scope = Scope {
            names: &names[..bound.len()],
            values: bound,
            outer,
        };
        let Some(join) = self.joins.get(bound.len() - 1) else {
            self.count(1)?;
            if self.skip > 0 {
                self.skip -= 1;
                return Ok(Flow::Go);
            }
            ctx.work.charge(1)?;
            return (self.f)(&scope);
        };
        let (source, elements) = match join {
            Source::In { expr, .. } => (eval_ref(expr, &scope, ctx)?, true),
            Source::Container {
                container, path, ..
            } => {
                let base = scope
                    .lookup(container)
                    .ok_or_else(|| unresolved(container))?;
                (walk_ref(base, path, &scope, ctx)?.map(Cow::Borrowed), false)
            }
        };
        let values = match &source {
            None => return Ok(Flow::Go),
            Some(v) => v.as_ref(),
        };
        let items = match (values, elements) {
            (Value::Array(items), true) => items.as_slice(),
            (_, true) => return Ok(Flow::Go),
            (v, false) => std::slice::from_ref(v),
        };
        self.bind_each(bound, outer, ctx, items)
    }

    fn count(&mut self, rows: usize) -> Result<(), SqlError> {
        self.rows += rows;
        if self.rows > MAX_ROWS_PER_DOCUMENT {
            return Err(SqlError::new(format!(
                "The JOINs of one document produce more than {MAX_ROWS_PER_DOCUMENT} rows, the limit."
            )));
        }
        Ok(())
    }
}

fn unresolved(name: &str) -> SqlError {
    SqlError::new(format!("Identifier '{name}' could not be resolved."))
}

fn root_ident(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Ident(n, _) => Some(n),
        Expr::Path(base, _) => root_ident(base),
        _ => None,
    }
}

/// Whether the row passes the WHERE clause.
pub(crate) fn passes<'v>(q: &'v Query, row: &Scope<'v>, ctx: &Ctx<'v>) -> Result<bool, SqlError> {
    match &q.filter {
        None => Ok(true),
        Some(filter) => Ok(is_true(&eval_ref(filter, row, ctx)?.map(Cow::into_owned))),
    }
}

/// The ORDER BY key values of the row.
pub(crate) fn order_keys<'v>(
    q: &'v Query,
    row: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Vec<Val>, SqlError> {
    q.order_by.iter().map(|k| eval(&k.expr, row, ctx)).collect()
}

/// Compares two key lists by the query's directions.
pub(crate) fn compare_keys(q: &Query, a: &[Val], b: &[Val]) -> std::cmp::Ordering {
    for (i, key) in q.order_by.iter().enumerate() {
        let o = order(
            a.get(i).and_then(Option::as_ref),
            b.get(i).and_then(Option::as_ref),
        );
        let o = if key.descending { o.reverse() } else { o };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

/// The projected value of the row (`None`: the row yields nothing).
pub(crate) fn project<'v>(q: &'v Query, row: &Scope<'v>, ctx: &Ctx<'v>) -> Result<Val, SqlError> {
    match &q.projection {
        Projection::Star => match row.values.first() {
            Some(v) => {
                ctx.work.charge(super::meter::weight(v))?;
                Ok(Some((*v).clone()))
            }
            None => Ok(None),
        },
        Projection::Value(e) => eval(e, row, ctx),
        Projection::Items(items) => {
            let mut out = Map::new();
            let mut unnamed = 0;
            for item in items {
                let name = match &item.alias {
                    Some(a) => a.clone(),
                    None => match item.expr.plain_path() {
                        Some((root, steps)) => steps.last().copied().unwrap_or(root).to_owned(),
                        None => {
                            unnamed += 1;
                            format!("${unnamed}")
                        }
                    },
                };
                if let Some(v) = eval(&item.expr, row, ctx)? {
                    out.insert(name, v);
                }
            }
            Ok(Some(Value::Object(out)))
        }
    }
}

/// A TOP/OFFSET/LIMIT count.
pub(crate) fn count_of(expr: Option<&Expr>, ctx: &Ctx<'_>) -> Result<Option<u64>, SqlError> {
    let Some(expr) = expr else { return Ok(None) };
    match eval(expr, &Scope::EMPTY, ctx)? {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        other => Err(SqlError::new(format!(
            "TOP, OFFSET and LIMIT take a non-negative integer, not {}.",
            other.map_or("undefined".to_owned(), |v| v.to_string())
        ))),
    }
}

/// The OFFSET and the most results after it (LIMIT and TOP, whichever is smaller).
pub(crate) fn window_of(q: &Query, ctx: &Ctx<'_>) -> Result<(u64, Option<u64>), SqlError> {
    let offset = count_of(q.offset.as_ref(), ctx)?.unwrap_or(0);
    let take = [
        count_of(q.limit.as_ref(), ctx)?,
        count_of(q.top.as_ref(), ctx)?,
    ]
    .into_iter()
    .flatten()
    .min();
    Ok((offset, take))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::collect::{run, run_metered};
    use crate::sql::meter::Meter;
    use crate::sql::parse_query;
    use crate::sql::sql_error::Limit;
    use serde_json::json;
    use std::collections::HashMap;

    /// The rows `text`'s FROM binds over `doc` from row `skip` on, as `[alias values...]`, and
    /// the walk's answer when `stop_after` rows stop it.
    fn rows(text: &str, doc: &Value, skip: u64, stop_after: Option<usize>) -> (Vec<Value>, Flow) {
        let q = parse_query(text).unwrap();
        let meter = Meter::unlimited();
        let params = HashMap::new();
        let ctx = Ctx {
            params: &params,
            aggregates: None,
            work: &meter,
            subquery: crate::sql::collect::run_subquery,
        };
        let mut out = Vec::new();
        let flow = for_each_row(&q, Some(doc), None, &ctx, skip, &mut |row| {
            out.push(Value::Array(
                row.values.iter().map(|v| (*v).clone()).collect(),
            ));
            Ok(if stop_after.is_some_and(|n| out.len() >= n) {
                Flow::Stop
            } else {
                Flow::Go
            })
        })
        .unwrap();
        (out, flow)
    }

    #[test]
    fn rows_are_bound_in_order_and_resume_at_any_row() {
        let doc = json!({"id": "d", "a": [1, 2], "b": [[10], [], [20, 30]]});
        let text = "SELECT VALUE 1 FROM c JOIN x IN c.a JOIN y IN c.b JOIN z IN y";
        let (all, flow) = rows(text, &doc, 0, None);
        assert_eq!(flow, Flow::Go);
        let pairs: Vec<(i64, i64)> = all
            .iter()
            .map(|r| (r[1].as_i64().unwrap(), r[3].as_i64().unwrap()))
            .collect();
        assert_eq!(
            pairs,
            [(1, 10), (1, 20), (1, 30), (2, 10), (2, 20), (2, 30)]
        );
        for skip in 0..=7 {
            let (rest, _) = rows(text, &doc, skip, None);
            assert_eq!(rest, all[(skip as usize).min(6)..], "skip {skip}");
        }
        let (first, flow) = rows(text, &doc, 2, Some(2));
        assert_eq!((first, flow), (all[2..4].to_vec(), Flow::Stop));
        // A FROM over a path and over an array.
        let (inner, _) = rows("SELECT VALUE 1 FROM c.b[2] x", &doc, 0, None);
        assert_eq!(inner, [json!([[20, 30]])]);
        let (elements, _) = rows("SELECT VALUE 1 FROM x IN c.a", &doc, 1, None);
        assert_eq!(elements, [json!([2])]);
        let (none, _) = rows("SELECT VALUE 1 FROM c JOIN x IN c.missing", &doc, 0, None);
        assert!(none.is_empty());
    }

    #[test]
    fn a_join_row_borrows_from_the_document_and_costs_by_the_row_not_the_document() {
        let doc = json!({"pad": "x".repeat(100_000), "a": (0..1000).collect::<Vec<_>>()});
        let q = parse_query("SELECT VALUE COUNT(1) FROM c JOIN x IN c.a").unwrap();
        let meter = Meter::unlimited();
        let out = run_metered(&q, &[doc], &HashMap::new(), &meter).unwrap();
        assert_eq!(out, [json!(1000)]);
        // A copy of the document per row would cost 1000 x 1,500 units.
        assert!(meter.used() < 20_000, "{}", meter.used());
    }

    #[test]
    fn more_rows_than_the_limit_are_refused_and_budgets_stop_a_walk() {
        let big: Vec<i64> = (0..400).collect();
        let doc = json!({"a": big});
        let q = parse_query("SELECT VALUE 1 FROM c JOIN x IN c.a JOIN y IN c.a").unwrap();
        let e = run(&q, std::slice::from_ref(&doc), &HashMap::new()).unwrap_err();
        assert!(e.message.contains("rows, the limit"), "{e}");
        let q = parse_query("SELECT VALUE COUNT(1) FROM c JOIN x IN c.a").unwrap();
        let meter = Meter::new(100, std::time::Duration::from_secs(60));
        let e = run_metered(&q, &[doc], &HashMap::new(), &meter).unwrap_err();
        assert_eq!(e.limit, Some(Limit::Work(100)));
    }

    #[test]
    fn subqueries_stop_once_they_have_what_is_wanted() {
        let doc = json!({"a": (0..10_000).collect::<Vec<_>>()});
        let q =
            parse_query("SELECT VALUE EXISTS(SELECT VALUE x FROM x IN c.a WHERE x >= 0) FROM c")
                .unwrap();
        let meter = Meter::unlimited();
        assert_eq!(
            run_metered(&q, std::slice::from_ref(&doc), &HashMap::new(), &meter).unwrap(),
            [json!(true)]
        );
        assert!(meter.used() < 100, "{}", meter.used());
        let q = parse_query("SELECT VALUE (SELECT VALUE x FROM x IN c.a OFFSET 5 LIMIT 1) FROM c")
            .unwrap();
        assert_eq!(run(&q, &[doc], &HashMap::new()).unwrap(), [json!(5)]);
    }

    #[test]
    fn gathered_answers_order_group_and_window() {
        let docs: Vec<Value> = (0..6)
            .map(|i| json!({"id": format!("d{i}"), "g": i % 2, "n": 10 - i}))
            .collect();
        let table = [
            (
                "SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 2",
                json!(["d4", "d3"]),
            ),
            (
                "SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g DESC",
                json!([1, 0]),
            ),
            (
                "SELECT c.g, COUNT(1) AS n, MAX(c.n) AS hi FROM c GROUP BY c.g",
                json!([{"g": 0, "n": 3, "hi": 10}, {"g": 1, "n": 3, "hi": 9}]),
            ),
            (
                "SELECT TOP 1 VALUE c.id FROM c WHERE c.g = 1",
                json!(["d1"]),
            ),
            ("SELECT VALUE 1 + 1", json!([2])),
        ];
        for (text, want) in table {
            let q = parse_query(text).unwrap();
            assert_eq!(
                Value::Array(run(&q, &docs, &HashMap::new()).unwrap()),
                want,
                "{text}"
            );
        }
    }
}
