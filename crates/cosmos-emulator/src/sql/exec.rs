//! Carrying a query out over rows: binding `FROM`/`JOIN`, filtering, grouping and aggregating,
//! ordering, `DISTINCT`, `OFFSET`/`LIMIT`/`TOP` and projection.
//!
//! The endpoint streams documents through [`bind`], [`passes`] and [`project`] page by page; a
//! subquery, and a query that must see every row before answering (aggregates, GROUP BY,
//! DISTINCT), goes through [`finish`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::ast::{Expr, Projection, Query, Source, Step};
use super::eval::{eval, Ctx, Scope};
use super::grouping::Gathered;
use super::limits::MAX_ROWS_PER_DOCUMENT;
use super::sql_error::SqlError;
use super::value::{canonical, is_true, order, Val};

/// One row: the values bound to the query's source names, in order.
pub type Row = Vec<Value>;

/// The names the sources of `q` bind, in order.
pub fn source_names(q: &Query) -> Vec<String> {
    match &q.from {
        None => Vec::new(),
        Some(from) => std::iter::once(&from.source)
            .chain(from.joins.iter())
            .map(|s| s.alias().to_owned())
            .collect(),
    }
}

/// Whether the query must see all its rows before it can answer.
pub fn needs_all_rows(q: &Query) -> bool {
    !q.aggregates.is_empty() || !q.group_by.is_empty() || q.distinct
}

/// The rows `q`'s FROM clause binds: from `doc` for a top-level query (moved into the row when
/// the source is the document itself), from the enclosing row for a subquery (`doc` None).
pub fn bind(
    q: &Query,
    doc: Option<Value>,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<Row>, SqlError> {
    let Some(from) = &q.from else {
        return Ok(vec![Vec::new()]);
    };
    let names = source_names(q);
    let empty = Scope::EMPTY;
    let outer_scope = outer.unwrap_or(&empty);
    let mut rows: Vec<Row> = match &from.source {
        Source::Container {
            container, path, ..
        } => {
            let base = match doc {
                Some(d) => Some(d),
                None => outer_scope.lookup(container).cloned(),
            };
            let Some(base) = base else {
                return Err(SqlError::new(format!(
                    "Identifier '{container}' could not be resolved."
                )));
            };
            walk(base, path, outer_scope, ctx)?
                .map(|v| vec![vec![v]])
                .unwrap_or_default()
        }
        Source::In { expr, .. } => {
            let root_name = [root_ident(expr).unwrap_or_default().to_owned()];
            let is_top = doc.is_some();
            let root_value = doc.into_iter().collect::<Vec<_>>();
            let scope = if is_top {
                Scope {
                    names: &root_name,
                    values: &root_value,
                    outer,
                }
            } else {
                Scope {
                    names: &[],
                    values: &[],
                    outer,
                }
            };
            elements(eval(expr, &scope, ctx)?)
                .into_iter()
                .map(|v| vec![v])
                .collect()
        }
    };
    for (j, join) in from.joins.iter().enumerate() {
        let bound = &names[..=j];
        let mut next = Vec::new();
        for row in rows {
            let scope = Scope {
                names: bound,
                values: &row,
                outer,
            };
            let values: Vec<Value> = match join {
                Source::In { expr, .. } => elements(eval(expr, &scope, ctx)?),
                Source::Container {
                    container, path, ..
                } => {
                    let base = scope.lookup(container).cloned().ok_or_else(|| {
                        SqlError::new(format!("Identifier '{container}' could not be resolved."))
                    })?;
                    walk(base, path, &scope, ctx)?.into_iter().collect()
                }
            };
            for v in values {
                if next.len() >= MAX_ROWS_PER_DOCUMENT {
                    return Err(SqlError::new(format!(
                        "The JOINs of one document produce more than {MAX_ROWS_PER_DOCUMENT} rows, the limit."
                    )));
                }
                let mut extended = row.clone();
                extended.push(v);
                next.push(extended);
            }
        }
        rows = next;
    }
    ctx.work.set(ctx.work.get() + rows.len() as u64);
    Ok(rows)
}

fn root_ident(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Ident(n, _) => Some(n),
        Expr::Path(base, _) => root_ident(base),
        _ => None,
    }
}

fn elements(v: Val) -> Vec<Value> {
    match v {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

fn walk(
    mut v: Value,
    path: &[Step],
    scope: &Scope<'_>,
    ctx: &Ctx<'_>,
) -> Result<Option<Value>, SqlError> {
    for step in path {
        let next = match step {
            Step::Name(n) => match v {
                Value::Object(mut m) => m.remove(n),
                _ => None,
            },
            Step::Index(e) => match (v, eval(e, scope, ctx)?) {
                (Value::Array(mut items), Some(Value::Number(n))) => n
                    .as_u64()
                    .filter(|i| (*i as usize) < items.len())
                    .map(|i| items.swap_remove(i as usize)),
                (Value::Object(mut m), Some(Value::String(s))) => m.remove(&s),
                _ => None,
            },
        };
        match next {
            Some(n) => v = n,
            None => return Ok(None),
        }
    }
    Ok(Some(v))
}

/// Whether `row` passes the WHERE clause.
pub fn passes(
    q: &Query,
    names: &[String],
    row: &Row,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<bool, SqlError> {
    let Some(filter) = &q.filter else {
        return Ok(true);
    };
    let scope = Scope {
        names,
        values: row,
        outer,
    };
    Ok(is_true(&eval(filter, &scope, ctx)?))
}

/// The ORDER BY key values of `row`.
pub fn order_keys(
    q: &Query,
    names: &[String],
    row: &Row,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<Val>, SqlError> {
    let scope = Scope {
        names,
        values: row,
        outer,
    };
    q.order_by
        .iter()
        .map(|k| eval(&k.expr, &scope, ctx))
        .collect()
}

/// Compares two key lists by the query's directions.
pub fn compare_keys(q: &Query, a: &[Val], b: &[Val]) -> std::cmp::Ordering {
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

/// The projected value of `row` (`None`: the row yields nothing).
pub fn project(
    q: &Query,
    names: &[String],
    row: &Row,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Val, SqlError> {
    let scope = Scope {
        names,
        values: row,
        outer,
    };
    match &q.projection {
        Projection::Star => Ok(row.first().cloned()),
        Projection::Value(e) => eval(e, &scope, ctx),
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
                if let Some(v) = eval(&item.expr, &scope, ctx)? {
                    out.insert(name, v);
                }
            }
            Ok(Some(Value::Object(out)))
        }
    }
}

/// A TOP/OFFSET/LIMIT count.
pub fn count_of(expr: Option<&Expr>, ctx: &Ctx<'_>) -> Result<Option<u64>, SqlError> {
    let Some(expr) = expr else { return Ok(None) };
    match eval(expr, &Scope::EMPTY, ctx)? {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        other => Err(SqlError::new(format!(
            "TOP, OFFSET and LIMIT take a non-negative integer, not {}.",
            other.map_or("undefined".to_owned(), |v| v.to_string())
        ))),
    }
}

/// Answers a query from all its filtered rows (in scan order): groups and aggregates, orders,
/// applies DISTINCT, OFFSET/LIMIT and TOP, and projects.
pub fn finish(
    q: &Query,
    rows: Vec<Row>,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<Value>, SqlError> {
    let names = source_names(q);
    let mut gathered = Gathered::new(q);
    for row in rows {
        gathered.add(q, &names, row, 0, outer, ctx)?;
    }
    finish_gathered(q, gathered, outer, ctx)
}

/// Answers a query from what was gathered from all its filtered rows (see [`Gathered`]).
pub fn finish_gathered(
    q: &Query,
    gathered: Gathered,
    outer: Option<&Scope<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<Value>, SqlError> {
    let names = source_names(q);
    let mut values: Vec<Value> = Vec::new();
    match gathered {
        Gathered::Groups(grouping) => {
            for (row, results) in grouping.results() {
                let inner = ctx.with_aggregates(&results);
                if let Some(v) = project(q, &names, &row, outer, &inner)? {
                    values.push(v);
                }
            }
        }
        Gathered::Distinct(_, distinct) => values = distinct,
        Gathered::Rows(rows) => {
            let mut keyed = Vec::with_capacity(rows.len());
            for row in rows {
                let keys = if q.order_by.is_empty() {
                    Vec::new()
                } else {
                    order_keys(q, &names, &row, outer, ctx)?
                };
                keyed.push((keys, row));
            }
            if !q.order_by.is_empty() {
                keyed.sort_by(|a, b| compare_keys(q, &a.0, &b.0));
            }
            for (_, row) in keyed {
                if let Some(v) = project(q, &names, &row, outer, ctx)? {
                    values.push(v);
                }
            }
        }
    }
    if q.distinct {
        let mut seen = std::collections::HashSet::new();
        values.retain(|v| seen.insert(canonical(Some(v))));
    }
    let offset = count_of(q.offset.as_ref(), ctx)?.unwrap_or(0) as usize;
    let limit = count_of(q.limit.as_ref(), ctx)?;
    let top = count_of(q.top.as_ref(), ctx)?;
    let take = [limit, top]
        .into_iter()
        .flatten()
        .min()
        .map_or(usize::MAX, |n| n as usize);
    Ok(values.into_iter().skip(offset).take(take).collect())
}

/// Runs a subquery in the scope of the enclosing row.
pub fn run_subquery(q: &Query, outer: &Scope<'_>, ctx: &Ctx<'_>) -> Result<Vec<Value>, SqlError> {
    let names = source_names(q);
    let inner = Ctx {
        params: ctx.params,
        aggregates: None,
        work: ctx.work,
    };
    let mut kept = Vec::new();
    for row in bind(q, None, Some(outer), &inner)? {
        if passes(q, &names, &row, Some(outer), &inner)? {
            kept.push(row);
        }
    }
    finish(q, kept, Some(outer), &inner)
}

/// Runs a whole query over `docs` (tests and the differential corpus use this).
pub fn run(
    q: &Query,
    docs: &[Value],
    params: &HashMap<String, Value>,
) -> Result<Vec<Value>, SqlError> {
    let work = std::cell::Cell::new(0);
    let ctx = Ctx {
        params,
        aggregates: None,
        work: &work,
    };
    let names = source_names(q);
    let mut kept = Vec::new();
    if q.from.is_none() {
        return finish(q, vec![Vec::new()], None, &ctx);
    }
    for doc in docs {
        for row in bind(q, Some(doc.clone()), None, &ctx)? {
            if passes(q, &names, &row, None, &ctx)? {
                kept.push(row);
            }
        }
    }
    finish(q, kept, None, &ctx)
}
