//! Computed properties in queries: each item gets its container's computed properties before
//! the query sees it, and `SELECT *` results leave them out again, as the service's do.

use serde_json::Value;

use crate::sql::ast::{Projection, Query, Source};
use crate::sql::eval::{eval, Ctx, Scope};
use crate::sql::SqlError;
use crate::store::computed_properties::ComputedProperty;

/// Adds each computed property's value (when defined) to the item `doc`.
pub(super) fn add(
    doc: &mut Value,
    props: &[ComputedProperty],
    ctx: &Ctx<'_>,
) -> Result<(), SqlError> {
    if props.is_empty() || !doc.is_object() {
        return Ok(());
    }
    let mut values = Vec::with_capacity(props.len());
    for p in props {
        let names = [p.alias.as_str()];
        let bound = [&*doc];
        let scope = Scope {
            names: &names,
            values: &bound,
            outer: None,
        };
        values.push(eval(&p.expr, &scope, ctx)?);
    }
    if let Value::Object(map) = doc {
        for (p, v) in props.iter().zip(values) {
            match v {
                Some(v) => {
                    map.insert(p.name.clone(), v);
                }
                None => {
                    map.shift_remove(&p.name);
                }
            }
        }
    }
    Ok(())
}

/// Takes the computed properties out of a `SELECT *` result of `q` (the item itself, or with
/// JOINs the item under its alias). Other projections keep what they name.
pub(super) fn hide(q: &Query, result: &mut Value, props: &[ComputedProperty]) {
    if props.is_empty() || !matches!(q.projection, Projection::Star) {
        return;
    }
    let Some(from) = &q.from else { return };
    let Source::Container { path, alias, .. } = &from.source else {
        return;
    };
    if !path.is_empty() {
        return;
    }
    let item = if from.joins.is_empty() {
        Some(result)
    } else {
        result.get_mut(alias.as_str())
    };
    if let Some(Value::Object(map)) = item {
        for p in props {
            map.shift_remove(&p.name);
        }
    }
}
