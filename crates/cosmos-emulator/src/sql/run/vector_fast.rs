//! Vector searches that measure items without parsing them.
//!
//! A top-k query ordered by one `VectorDistance` between a property path of the item and a
//! constant vector (`SELECT TOP k ... FROM c [WHERE true] ORDER BY VectorDistance(c.path,
//! @vector [, bruteForce [, options]])`) scores each item from its embedding as the item version
//! keeps it ([`crate::store::embeddings`]): the numbers at that one path, read from the item's
//! text the first time and exact, so the score is the one `VectorDistance` gives over the parsed
//! item, bit for bit. Once the ORDER BY build holds its best k rows, an item whose score sorts
//! after the k-th is passed over unparsed; the others (the few that may still be in the answer)
//! go through the general evaluation, which projects them. Any other shape (a filter, a JOIN,
//! several keys, a vector that is not constant, a computed property) is evaluated in general.
//!
//! Scoring one item costs one unit of work per 64 dimensions (the numbers are read from memory,
//! as cheap as that many bytes of text), plus reading its text the first time.

use serde_json::Value;

use super::Execution;
use crate::sql::ast::{Expr, Query, Source, Step};
use crate::sql::eval::{eval, Ctx, Scope};
use crate::sql::meter::{units_of, Meter};
use crate::sql::value::Val;
use crate::sql::vector::{read_options, DataType, Distance, Probe, Resolved};
use crate::sql::{any_in, SqlError};
use crate::store::computed_properties::ComputedProperty;
use crate::store::embeddings::{Embedding, Numbers};
use crate::store::StoredDoc;

/// How the items of a fast vector search are measured.
pub(super) struct FastVector {
    /// The property names of the measured path, from the item's root.
    path: Vec<String>,
    probe: Probe,
}

impl FastVector {
    /// The plan for the page's query, when it has the shape this module serves.
    pub(super) fn of(ex: &Execution<'_>) -> Option<Self> {
        Self::plan(ex.query, &ex.container.computed(), &ex.ctx())
    }

    /// The plan for `q` over a container with the computed properties `computed`, its
    /// parameters and budget in `ctx`.
    fn plan(q: &Query, computed: &[ComputedProperty], ctx: &Ctx<'_>) -> Option<Self> {
        let (path, args) = shape(q)?;
        if computed.iter().any(|p| path.first() == Some(&p.name)) {
            return None;
        }
        let scope = Scope {
            names: &[],
            values: &[],
            outer: None,
        };
        let constant = |e: &Expr| -> Option<Value> {
            let row_free = !any_in(e, &|x| {
                matches!(
                    x,
                    Expr::Ident(..)
                        | Expr::Udf(..)
                        | Expr::Aggregate(_)
                        | Expr::Exists(_)
                        | Expr::ArrayQuery(_)
                        | Expr::Scalar(_)
                )
            });
            if row_free {
                eval(e, &scope, ctx).ok().flatten()
            } else {
                None
            }
        };
        let options = match args.options {
            None => None,
            Some(e) => Some(constant(e)?),
        };
        let (distance, data_type) = read_options(options.as_ref()).ok()?;
        let resolved = Resolved {
            distance: distance.unwrap_or(Distance::Cosine),
            data_type: data_type.unwrap_or(DataType::Float32),
        };
        let probe = Probe::new(&constant(args.vector)?, resolved, args.item_first)?;
        Some(Self { path, probe })
    }

    /// The ORDER BY key of the item `doc` (its score), or `None` when its text is not JSON (the
    /// general evaluation reports that).
    pub(super) fn key(&self, meter: &Meter, doc: &StoredDoc) -> Result<Option<Val>, SqlError> {
        let embedding = match doc.vectors.kept(&self.path) {
            Some(e) => e,
            None => {
                meter.charge_bytes(doc.body.len())?;
                match doc.vectors.get(&doc.body, &self.path) {
                    Some(e) => e,
                    None => return Ok(None),
                }
            }
        };
        meter.charge(units_of(self.probe.dimensions()))?;
        Ok(Some(score(&self.probe, &embedding)))
    }
}

/// The arguments of the measured call besides the item's path.
struct Args<'q> {
    vector: &'q Expr,
    options: Option<&'q Expr>,
    item_first: bool,
}

/// The measured path and the call's other arguments, when `q` is a vector search of the served
/// shape.
fn shape(q: &Query) -> Option<(Vec<String>, Args<'_>)> {
    let from = q.from.as_ref()?;
    let Source::Container { path, alias, .. } = &from.source else {
        return None;
    };
    if !path.is_empty()
        || !from.joins.is_empty()
        || q.distinct
        || !q.group_by.is_empty()
        || !q.aggregates.is_empty()
    {
        return None;
    }
    if !matches!(&q.filter, None | Some(Expr::Literal(Value::Bool(true)))) {
        return None;
    }
    let [key] = q.order_by.as_slice() else {
        return None;
    };
    let Expr::Call(name, args) = &key.expr else {
        return None;
    };
    if key.rank || name != "VECTORDISTANCE" || !(2..=4).contains(&args.len()) {
        return None;
    }
    if !matches!(args.get(2), None | Some(Expr::Literal(Value::Bool(_)))) {
        return None;
    }
    let options = args.get(3);
    match (
        property_path(&args[0], alias),
        property_path(&args[1], alias),
    ) {
        (Some(p), None) => Some((
            p,
            Args {
                vector: &args[1],
                options,
                item_first: true,
            },
        )),
        (None, Some(p)) => Some((
            p,
            Args {
                vector: &args[0],
                options,
                item_first: false,
            },
        )),
        _ => None,
    }
}

/// The property names of `alias.a["b"]...` (at least one).
fn property_path(e: &Expr, alias: &str) -> Option<Vec<String>> {
    let Expr::Path(base, steps) = e else {
        return None;
    };
    if !matches!(base.as_ref(), Expr::Ident(name, _) if name == alias) || steps.is_empty() {
        return None;
    }
    steps
        .iter()
        .map(|s| match s {
            Step::Name(n) | Step::Index(Expr::Literal(Value::String(n))) => Some(n.clone()),
            Step::Index(_) => None,
        })
        .collect()
}

/// What `VectorDistance` gives for an item holding `embedding` at the measured path.
fn score(probe: &Probe, embedding: &Embedding) -> Val {
    let Embedding::Numbers {
        numbers,
        int8,
        uint8,
    } = embedding
    else {
        return None;
    };
    let holds = match probe.resolved.data_type {
        // Every number read from JSON text is finite.
        DataType::Float32 | DataType::Float16 => true,
        DataType::Int8 => *int8,
        DataType::Uint8 => *uint8,
    };
    if !holds {
        return None;
    }
    match numbers {
        Numbers::F32(xs) => probe.score(xs),
        Numbers::F64(xs) => probe.score(xs),
    }
}

#[cfg(test)]
#[path = "vector_fast_tests.rs"]
mod tests;
