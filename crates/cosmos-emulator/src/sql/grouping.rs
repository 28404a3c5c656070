//! What a query that must see every row gathers before it can answer, one row at a time: the
//! groups and their aggregate accumulators (aggregates, GROUP BY), the distinct projected values
//! (DISTINCT without ORDER BY), or each row's sort keys and projected value (DISTINCT with ORDER
//! BY, ORDER BY inside a subquery). [`super::collect::finish_gathered`] turns it into the answer, so
//! an answer gathered in several steps (pages of a long scan) equals one gathered in one go.
//!
//! A row is added in two steps: [`Gathered::prepare`] evaluates everything the row contributes
//! (it may stop at the page's budget and leaves the state untouched), then [`Gathered::commit`]
//! adds it (it cannot fail), so a page that stops mid-row resumes at that row exactly. What is
//! kept is only what the answer needs: a group keeps the parts of its first row its projection
//! reads (not the whole document), and [`Gathered::held`] is the memory it all holds.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::aggregate::Accumulator;
use super::ast::{AggregateKind, Expr, Projection, Query, Step};
use super::eval::{eval, Ctx, Scope};
use super::exec::{order_keys, project, source_names, Row};
use super::meter::{heap_size, weight};
use super::sql_error::SqlError;
use super::value::{canonical, Val};

/// Bytes of bookkeeping per gathered entry, besides its values.
const ENTRY_BYTES: usize = 64;

/// Groups in first-seen order: each group's first row (the parts the projection reads) and its
/// accumulators.
#[derive(Debug)]
pub(crate) struct Grouping {
    index: HashMap<String, usize>,
    groups: Vec<(Row, Vec<Accumulator>)>,
    keep: Vec<Keep>,
    kinds: Vec<AggregateKind>,
    held: usize,
}

/// What a group keeps of one source's value.
#[derive(Clone, Debug, PartialEq)]
enum Keep {
    /// All of it (the projection reads it whole, or in a way not worked out here).
    All,
    /// Only these property paths (none: the projection does not read it).
    Paths(Vec<Vec<String>>),
}

/// The rows (or groups, or distinct values) gathered so far.
#[derive(Debug)]
pub(crate) enum Gathered {
    Groups(Grouping),
    /// Each distinct projected value once, in first-seen order, with the canonical forms seen.
    Distinct {
        seen: HashSet<String>,
        values: Vec<Value>,
        held: usize,
    },
    /// Each row's sort keys and projected value, in scan order.
    Sorted {
        rows: Vec<(Vec<Val>, Val)>,
        held: usize,
    },
}

/// What one row adds, evaluated but not yet added.
pub(crate) enum Contribution {
    Nothing,
    Group {
        key: String,
        /// The row's kept parts, when it starts a new group.
        row: Option<Row>,
        inputs: Vec<Val>,
    },
    Distinct(String, Value),
    Sorted(Vec<Val>, Val),
}

impl Gathered {
    /// Nothing gathered yet: one empty group for an aggregate without GROUP BY.
    pub(crate) fn new(q: &Query) -> Self {
        if q.aggregates.is_empty() && q.group_by.is_empty() {
            if q.distinct && q.order_by.is_empty() {
                return Self::Distinct {
                    seen: HashSet::new(),
                    values: Vec::new(),
                    held: 0,
                };
            }
            return Self::Sorted {
                rows: Vec::new(),
                held: 0,
            };
        }
        let keep = keep_plan(q);
        let mut grouping = Grouping {
            index: HashMap::new(),
            groups: Vec::new(),
            keep,
            kinds: q.aggregates.iter().map(|a| a.kind).collect(),
            held: 0,
        };
        if q.group_by.is_empty() {
            grouping.index.insert(String::new(), 0);
            grouping.groups.push((Vec::new(), fresh(q)));
            grouping.held = ENTRY_BYTES;
        }
        Self::Groups(grouping)
    }

    /// Evaluates what `row` (which passed the filter) adds, without changing the state.
    pub(crate) fn prepare<'v>(
        &self,
        q: &'v Query,
        row: &Scope<'v>,
        ctx: &Ctx<'v>,
    ) -> Result<Contribution, SqlError> {
        match self {
            Self::Sorted { .. } => {
                let keys = order_keys(q, row, ctx)?;
                Ok(Contribution::Sorted(keys, project(q, row, ctx)?))
            }
            Self::Distinct { seen, .. } => {
                let Some(v) = project(q, row, ctx)? else {
                    return Ok(Contribution::Nothing);
                };
                ctx.work.charge(weight(&v))?;
                let form = canonical(Some(&v));
                Ok(if seen.contains(&form) {
                    Contribution::Nothing
                } else {
                    Contribution::Distinct(form, v)
                })
            }
            Self::Groups(g) => {
                let mut key = String::new();
                for e in &q.group_by {
                    let v = eval(e, row, ctx)?;
                    if let Some(v) = &v {
                        ctx.work.charge(weight(v))?;
                    }
                    key.push_str(&canonical(v.as_ref()));
                    key.push('|');
                }
                let needs_row = match g.index.get(&key) {
                    None => true,
                    Some(&slot) => g.groups[slot].0.is_empty() && !g.keep.is_empty(),
                };
                let kept = if needs_row {
                    Some(g.kept(row, ctx)?)
                } else {
                    None
                };
                let mut inputs = Vec::with_capacity(q.aggregates.len());
                for call in &q.aggregates {
                    inputs.push(eval(&call.arg, row, ctx)?);
                }
                Ok(Contribution::Group {
                    key,
                    row: kept,
                    inputs,
                })
            }
        }
    }

    /// Adds what [`Gathered::prepare`] evaluated.
    pub(crate) fn commit(&mut self, c: Contribution) {
        match (self, c) {
            (_, Contribution::Nothing) => {}
            (Self::Sorted { rows, held }, Contribution::Sorted(keys, v)) => {
                *held += ENTRY_BYTES
                    + keys.iter().flatten().map(heap_size).sum::<usize>()
                    + v.as_ref().map_or(0, heap_size);
                rows.push((keys, v));
            }
            (Self::Distinct { seen, values, held }, Contribution::Distinct(form, v)) => {
                if seen.contains(&form) {
                    return;
                }
                *held += ENTRY_BYTES + form.len() + heap_size(&v);
                seen.insert(form);
                values.push(v);
            }
            (Self::Groups(g), Contribution::Group { key, row, inputs }) => g.add(key, row, inputs),
            _ => {}
        }
    }

    /// Adds one row that passed the filter.
    pub(crate) fn add<'v>(
        &mut self,
        q: &'v Query,
        row: &Scope<'v>,
        ctx: &Ctx<'v>,
    ) -> Result<(), SqlError> {
        let c = self.prepare(q, row, ctx)?;
        self.commit(c);
        Ok(())
    }

    /// Bytes of memory, about, what was gathered holds.
    pub(crate) fn held(&self) -> usize {
        match self {
            Self::Groups(g) => g.held,
            Self::Distinct { held, .. } | Self::Sorted { held, .. } => *held,
        }
    }

    /// Rows (groups, values) gathered so far.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Groups(g) => g.groups.len(),
            Self::Distinct { values, .. } => values.len(),
            Self::Sorted { rows, .. } => rows.len(),
        }
    }
}

impl Grouping {
    /// The parts of `row` a group keeps.
    fn kept(&self, row: &Scope<'_>, ctx: &Ctx<'_>) -> Result<Row, SqlError> {
        let mut out = Vec::with_capacity(row.values.len());
        for (value, keep) in row.values.iter().zip(&self.keep) {
            let kept = match keep {
                Keep::All => (*value).clone(),
                Keep::Paths(paths) if paths.is_empty() => Value::Null,
                Keep::Paths(paths) => prune(value, paths),
            };
            ctx.work.charge(weight(&kept))?;
            out.push(kept);
        }
        Ok(out)
    }

    fn add(&mut self, key: String, row: Option<Row>, inputs: Vec<Val>) {
        let slot = match self.index.get(&key) {
            Some(&slot) => {
                if let (Some(row), true) = (row, self.groups[slot].0.is_empty()) {
                    self.held += row.iter().map(heap_size).sum::<usize>();
                    self.groups[slot].0 = row;
                }
                slot
            }
            None => {
                let row = row.unwrap_or_default();
                self.held += ENTRY_BYTES
                    + 2 * key.len()
                    + row.iter().map(heap_size).sum::<usize>()
                    + self.kinds.len() * std::mem::size_of::<Accumulator>();
                self.index.insert(key, self.groups.len());
                let accs = self.kinds.iter().map(|k| Accumulator::new(*k)).collect();
                self.groups.push((row, accs));
                self.groups.len() - 1
            }
        };
        for (acc, input) in self.groups[slot].1.iter_mut().zip(inputs) {
            let before = acc.held();
            acc.add(input);
            self.held = (self.held + acc.held()).saturating_sub(before);
        }
    }

    /// Each group's first row and its aggregate results, in first-seen order.
    pub(crate) fn results(self) -> Vec<(Row, Vec<Val>)> {
        self.groups
            .into_iter()
            .map(|(row, accs)| (row, accs.iter().map(Accumulator::result).collect()))
            .collect()
    }
}

/// What a group keeps of each source: the property paths its projection reads, or everything
/// when the projection reads a source whole (or through a computed index or a subquery).
fn keep_plan(q: &Query) -> Vec<Keep> {
    let names = source_names(q);
    let mut keep: Vec<Keep> = names.iter().map(|_| Keep::Paths(Vec::new())).collect();
    let all = |name: &str, keep: &mut Vec<Keep>| {
        if let Some(i) = names.iter().position(|n| *n == name) {
            keep[i] = Keep::All;
        }
    };
    let roots: Vec<&Expr> = match &q.projection {
        Projection::Star => {
            if let Some(first) = names.first() {
                all(first, &mut keep);
            }
            Vec::new()
        }
        Projection::Value(e) => vec![e],
        Projection::Items(items) => items.iter().map(|i| &i.expr).collect(),
    };
    let mut stack = roots;
    while let Some(e) = stack.pop() {
        match e {
            Expr::Exists(_) | Expr::ArrayQuery(_) | Expr::Scalar(_) => {
                // A subquery may read any source in any way.
                return names.iter().map(|_| Keep::All).collect();
            }
            Expr::Ident(name, _) => all(name, &mut keep),
            Expr::Path(base, steps) => match (e.plain_path(), base.as_ref()) {
                (Some((root, path)), _) => {
                    if let Some(i) = names.iter().position(|n| *n == root) {
                        if let Keep::Paths(paths) = &mut keep[i] {
                            paths.push(path.iter().map(|s| (*s).to_owned()).collect());
                        }
                    }
                }
                (None, _) => {
                    stack.push(base);
                    stack.extend(steps.iter().filter_map(|s| match s {
                        Step::Index(e) => Some(e),
                        Step::Name(_) => None,
                    }));
                }
            },
            other => stack.extend(super::walk::children(other)),
        }
    }
    keep
}

/// The parts of `v` at `paths` (each a list of property names; an empty path keeps all of `v`).
fn prune(v: &Value, paths: &[Vec<String>]) -> Value {
    if paths.iter().any(Vec::is_empty) {
        return v.clone();
    }
    let Value::Object(map) = v else {
        // A property of anything but an object is undefined.
        return Value::Null;
    };
    let mut out = Map::new();
    for path in paths {
        let first = &path[0];
        if out.contains_key(first) {
            continue;
        }
        if let Some(child) = map.get(first) {
            let tails: Vec<Vec<String>> = paths
                .iter()
                .filter(|p| &p[0] == first)
                .map(|p| p[1..].to_vec())
                .collect();
            out.insert(first.clone(), prune(child, &tails));
        }
    }
    Value::Object(out)
}

/// Whether `q` has the shape of the per-range aggregate queries of a query plan
/// ([`super::plan`]): `SELECT VALUE [{"item": <aggregates>}]`, or `... AS groupByItems, ... AS
/// payload` with GROUP BY or aggregates, without DISTINCT, ORDER BY, TOP or OFFSET/LIMIT. Partial
/// answers of such a query over parts of its rows combine into its answer (the SDKs sum, merge and
/// group the rows of every page and range), so the service answers each page with the partial
/// aggregates of the documents that page read.
pub(crate) fn combines_across_pages(q: &Query) -> bool {
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

fn fresh(q: &Query) -> Vec<Accumulator> {
    q.aggregates
        .iter()
        .map(|a| Accumulator::new(a.kind))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::meter::Meter;
    use crate::sql::parse_query;
    use serde_json::json;

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

    #[test]
    fn a_group_keeps_only_what_its_projection_reads() {
        let table = [
            ("SELECT VALUE COUNT(1) FROM c", vec![Keep::Paths(vec![])]),
            (
                "SELECT c.g, c.a.b AS b, COUNT(1) AS n FROM c GROUP BY c.g, c.a.b",
                vec![Keep::Paths(vec![
                    vec!["a".into(), "b".into()],
                    vec!["g".into()],
                ])],
            ),
            ("SELECT VALUE c FROM c GROUP BY c", vec![Keep::All]),
            ("SELECT c[c.k] AS v FROM c GROUP BY c[c.k]", vec![Keep::All]),
            (
                "SELECT t, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t",
                vec![Keep::Paths(vec![]), Keep::All],
            ),
        ];
        for (text, want) in table {
            let q = parse_query(text).unwrap();
            let mut got = keep_plan(&q);
            for k in &mut got {
                if let Keep::Paths(p) = k {
                    p.sort();
                }
            }
            assert_eq!(got, want, "{text}");
        }
        let doc = json!({"g": 1, "a": {"b": 2, "c": "x".repeat(1000)}, "pad": "y".repeat(1000)});
        assert_eq!(
            prune(&doc, &[vec!["a".into(), "b".into()], vec!["g".into()]]),
            json!({"g": 1, "a": {"b": 2}})
        );
        assert_eq!(prune(&json!([1]), &[vec!["a".into()]]), Value::Null);
    }

    #[test]
    fn a_prepared_row_changes_nothing_until_committed_and_held_tracks_what_is_kept() {
        let q =
            parse_query("SELECT c.g, COUNT(1) AS n, MAX(c.s) AS s FROM c GROUP BY c.g").unwrap();
        let mut g = Gathered::new(&q);
        let meter = Meter::unlimited();
        let params = HashMap::new();
        let ctx = Ctx {
            params: &params,
            aggregates: None,
            work: &meter,
            subquery: crate::sql::collect::run_subquery,
        };
        let docs = [
            json!({"g": "a", "s": "x", "pad": "p".repeat(10_000)}),
            json!({"g": "a", "s": "y".repeat(500)}),
            json!({"g": "b", "s": "z"}),
        ];
        for doc in &docs {
            let values = [doc];
            let row = Scope {
                names: &["c"],
                values: &values,
                outer: None,
            };
            let c = g.prepare(&q, &row, &ctx).unwrap();
            let before = g.held();
            g.commit(c);
            assert!(g.held() >= before || g.len() == 2);
        }
        assert_eq!(g.len(), 2);
        assert!(g.held() < 5_000, "the padding is not kept: {}", g.held());
        let out = crate::sql::collect::finish_gathered(&q, g, None, &ctx).unwrap();
        assert_eq!(out[0]["n"], json!(2));
        assert_eq!(out[0]["s"], json!("y".repeat(500)));
        assert_eq!(out[1], json!({"g": "b", "n": 1, "s": "z"}));
    }
}
