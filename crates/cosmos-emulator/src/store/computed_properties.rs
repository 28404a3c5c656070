//! Computed properties (`computedProperties` of a container): named values each item has in
//! queries, defined by `SELECT VALUE <expression> FROM <alias>` over the item. Queries filter,
//! sort and project by them as by stored properties; `SELECT *` leaves them out, as the service
//! does. Checked on create and replace: an invalid definition answers 400.

use serde_json::{Map, Value};

use crate::protocol::ApiError;
use crate::sql::ast::{Expr, Projection, Query, Source};
use crate::sql::parse_query;

/// Most computed properties of one container.
pub(crate) const MAX_COMPUTED_PROPERTIES: usize = 20;
/// Longest computed property name and query, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 255;
pub(crate) const MAX_QUERY_BYTES: usize = 4096;

/// One computed property: its name and the expression over the item bound to `alias`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ComputedProperty {
    pub name: String,
    pub alias: String,
    pub expr: Expr,
}

fn invalid(reason: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "One of the specified inputs is invalid: computedProperties {reason}"
    ))
}

/// The computed properties a container body defines (none when it has no
/// `computedProperties`); 400 naming what is wrong.
pub(crate) fn from_definition(map: &Map<String, Value>) -> Result<Vec<ComputedProperty>, ApiError> {
    let list = match map.get("computedProperties") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(invalid(
                "must be an array of {\"name\", \"query\"} objects.",
            ))
        }
    };
    if list.len() > MAX_COMPUTED_PROPERTIES {
        return Err(invalid(format!(
            "has {} entries; a container has at most {MAX_COMPUTED_PROPERTIES}.",
            list.len()
        )));
    }
    let mut out: Vec<ComputedProperty> = Vec::with_capacity(list.len());
    for entry in list {
        let Value::Object(entry) = entry else {
            return Err(invalid(
                "must be an array of {\"name\", \"query\"} objects.",
            ));
        };
        if let Some(other) = entry.keys().find(|k| *k != "name" && *k != "query") {
            return Err(invalid(format!("entries have no property {other:?}.")));
        }
        let (Some(Value::String(name)), Some(Value::String(text))) =
            (entry.get("name"), entry.get("query"))
        else {
            return Err(invalid("entries need a string name and a string query."));
        };
        check_name(name)?;
        if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return Err(invalid(format!("defines {name:?} twice.")));
        }
        if text.len() > MAX_QUERY_BYTES {
            return Err(invalid(format!(
                "query of {name:?} is longer than {MAX_QUERY_BYTES} bytes."
            )));
        }
        let query = parse_query(text)
            .map_err(|e| invalid(format!("query of {name:?} is not a valid query: {e}")))?;
        let (alias, expr) = value_over_item(query).ok_or_else(|| {
            invalid(format!(
                "query of {name:?} must be SELECT VALUE <expression> FROM <alias>, with no WHERE, JOIN, ORDER BY, GROUP BY, DISTINCT, TOP, OFFSET or aggregates."
            ))
        })?;
        out.push(ComputedProperty {
            name: name.clone(),
            alias,
            expr,
        });
    }
    Ok(out)
}

fn check_name(name: &str) -> Result<(), ApiError> {
    let reserved = ["id", "_rid", "_ts", "_etag", "_self", "_attachments"];
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "names are 1 to {MAX_NAME_BYTES} bytes long."
        )));
    }
    if name.starts_with('_') || reserved.contains(&name) {
        return Err(invalid(format!(
            "name {name:?} is reserved for a system property."
        )));
    }
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !starts_well || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(invalid(format!(
            "name {name:?} must be an identifier (letters, digits and '_', not starting with a digit)."
        )));
    }
    Ok(())
}

/// `SELECT VALUE expr FROM alias` and nothing more: its alias and expression.
fn value_over_item(q: Query) -> Option<(String, Expr)> {
    let from = q.from?;
    let Source::Container { path, alias, .. } = from.source else {
        return None;
    };
    let plain = path.is_empty()
        && from.joins.is_empty()
        && q.filter.is_none()
        && q.group_by.is_empty()
        && q.order_by.is_empty()
        && q.offset.is_none()
        && q.limit.is_none()
        && q.top.is_none()
        && !q.distinct
        && q.aggregates.is_empty();
    match q.projection {
        Projection::Value(expr) if plain => Some((alias, expr)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defined(v: Value) -> Result<Vec<ComputedProperty>, ApiError> {
        let Value::Object(map) = json!({ "id": "c", "computedProperties": v }) else {
            unreachable!()
        };
        from_definition(&map)
    }

    #[test]
    fn valid_definitions() {
        let props = defined(json!([
            {"name": "cp_lower", "query": "SELECT VALUE LOWER(c.db_group) FROM c"},
            {"name": "cp_power", "query": "SELECT VALUE POWER(r.val, 2) FROM r"}
        ]))
        .unwrap();
        assert_eq!(props.len(), 2);
        assert_eq!(props[1].alias, "r");
        assert!(defined(json!([])).unwrap().is_empty());
        assert!(defined(Value::Null).unwrap().is_empty());
    }

    #[test]
    fn invalid_definitions_answer_400() {
        let cases = [
            json!({"name": "cp", "query": "SELECT VALUE LOWER(c.a) FROM c"}),
            json!([{"name": "cp"}]),
            json!([{"name": "cp", "query": "SELECT VALUE c.a FROM c", "extra": 1}]),
            json!([{"name": "id", "query": "SELECT VALUE c.a FROM c"}]),
            json!([{"name": "_x", "query": "SELECT VALUE c.a FROM c"}]),
            json!([{"name": "9x", "query": "SELECT VALUE c.a FROM c"}]),
            json!([{"name": "a b", "query": "SELECT VALUE c.a FROM c"}]),
            json!([{"name": "cp", "query": "SELECT c.a FROM c"}]),
            json!([{"name": "cp", "query": "SELECT VALUE c.a FROM c WHERE c.b = 1"}]),
            json!([{"name": "cp", "query": "SELECT VALUE COUNT(1) FROM c"}]),
            json!([{"name": "cp", "query": "SELECT VALUE t FROM c JOIN t IN c.tags"}]),
            json!([{"name": "cp", "query": "SELECT VALUE c.a FROM c.children c"}]),
            json!([{"name": "cp", "query": "not a query"}]),
            json!([
                {"name": "cp", "query": "SELECT VALUE c.a FROM c"},
                {"name": "CP", "query": "SELECT VALUE c.b FROM c"}
            ]),
        ];
        for case in cases {
            let err = defined(case.clone()).unwrap_err();
            assert_eq!(err.status, 400, "{case}");
            assert!(
                err.message
                    .contains("One of the specified inputs is invalid"),
                "{case}: {}",
                err.message
            );
        }
    }
}
