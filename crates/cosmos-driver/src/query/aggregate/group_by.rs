//! GROUP BY across ranges: each range answers one row per group it saw,
//! `{"groupByItems": [{"item": k}, ...], "payload": ...}`; rows of the same group (equal keys by
//! the service's equality) are combined column by column, grouping columns keep their value.
//! Groups come out in the order they were first seen. Also serves non-VALUE aggregates without
//! GROUP BY (one group with no key) and `SELECT VALUE` over groups. The table of groups is plain
//! data a continuation token carries ([`GroupByMerge::table`], [`GroupByMerge::resume`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::query::aggregate::aggregates::{partial_of, Aggregator};
use crate::query::continuation::token_text::opt_value_text;
use crate::query::merge::value_order::canonical_text;
use crate::query::plan::query_features::GroupedAggregation;
use crate::query::plan::query_plan::AggregateKind;

/// The most groups one query may produce on the client.
pub(crate) const MAX_GROUPS: usize = 1_000_000;

/// One column of a group: an aggregate's partial, or a grouping key's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Column {
    #[serde(rename = "a")]
    Aggregate(Aggregator),
    #[serde(rename = "k", with = "opt_value_text")]
    Key(Option<Value>),
}

/// One group of the table a token carries: its key (the canonical text of its grouping values)
/// and its columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct GroupEntry {
    #[serde(rename = "k")]
    key: String,
    #[serde(rename = "c")]
    columns: Vec<Column>,
}

impl Column {
    fn new(kind: Option<&AggregateKind>) -> Result<Column, String> {
        match kind {
            None => Ok(Column::Key(None)),
            Some(k) => Aggregator::new(k)
                .map(Column::Aggregate)
                .ok_or_else(|| format!("the aggregate {k:?} cannot be combined")),
        }
    }

    fn add(&mut self, cell: Option<&Value>) -> Result<(), String> {
        match self {
            Column::Aggregate(a) => a.add(cell.and_then(partial_of)),
            Column::Key(v) => {
                if v.is_none() {
                    *v = cell.cloned();
                }
                Ok(())
            }
        }
    }

    fn result(&self) -> Option<Value> {
        match self {
            Column::Aggregate(a) => a.result(),
            Column::Key(v) => v.clone(),
        }
    }

    fn same_kind(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::Aggregate(a), Column::Aggregate(b)) => a.same_kind(b),
            (Column::Key(_), Column::Key(_)) => true,
            _ => false,
        }
    }
}

#[derive(Deserialize)]
struct RawGroupRow {
    #[serde(rename = "groupByItems", default)]
    group_by_items: Option<Value>,
    #[serde(default)]
    payload: Option<Value>,
}

/// The groups seen so far.
#[derive(Debug)]
pub(crate) struct GroupByMerge {
    shape: GroupedAggregation,
    index: HashMap<String, usize>,
    groups: Vec<Vec<Column>>,
}

impl GroupByMerge {
    /// An empty merge for the plan's columns.
    pub(crate) fn new(shape: GroupedAggregation) -> GroupByMerge {
        GroupByMerge {
            shape,
            index: HashMap::new(),
            groups: Vec::new(),
        }
    }

    fn fresh_columns(&self) -> Result<Vec<Column>, String> {
        match &self.shape.select_value {
            Some(kind) => Ok(vec![Column::new(kind.as_ref())?]),
            None => self
                .shape
                .aliases
                .iter()
                .map(|(_, kind)| Column::new(kind.as_ref()))
                .collect(),
        }
    }

    /// A merge for the plan's columns that continues from a token's `table`; refused when the
    /// table does not fit the plan (another column shape, a repeated group, too many groups).
    pub(crate) fn resume(
        shape: GroupedAggregation,
        table: Vec<GroupEntry>,
    ) -> Result<GroupByMerge, String> {
        let mut merge = GroupByMerge::new(shape);
        if table.len() > MAX_GROUPS {
            return Err(format!("it carries {} groups", table.len()));
        }
        let fresh = merge.fresh_columns()?;
        for entry in table {
            let fits = entry.columns.len() == fresh.len()
                && entry
                    .columns
                    .iter()
                    .zip(&fresh)
                    .all(|(a, b)| a.same_kind(b));
            if !fits {
                return Err("its groups do not have the query's columns".into());
            }
            if merge.index.insert(entry.key, merge.groups.len()).is_some() {
                return Err("it repeats a group".into());
            }
            merge.groups.push(entry.columns);
        }
        Ok(merge)
    }

    /// The table of groups in first-seen order, for a token.
    pub(crate) fn table(&self) -> Vec<GroupEntry> {
        let mut keys: Vec<&str> = vec![""; self.groups.len()];
        for (key, &at) in &self.index {
            keys[at] = key;
        }
        keys.into_iter()
            .zip(&self.groups)
            .map(|(key, columns)| GroupEntry {
                key: key.to_owned(),
                columns: columns.clone(),
            })
            .collect()
    }

    /// The bytes the groups' keys alone take in a token: a lower bound of the table's size.
    pub(crate) fn key_bytes(&self) -> usize {
        self.index.keys().map(String::len).sum()
    }

    /// Adds one range row.
    pub(crate) fn add(&mut self, row: Value) -> Result<(), String> {
        let raw: RawGroupRow = serde_json::from_value(row)
            .map_err(|e| format!("a GROUP BY result row is malformed: {e}"))?;
        let key = raw
            .group_by_items
            .as_ref()
            .map(canonical_text)
            .unwrap_or_default();
        let at = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                if self.groups.len() >= MAX_GROUPS {
                    return Err(format!(
                        "the query produces more than {MAX_GROUPS} groups, more than the driver combines"
                    ));
                }
                let columns = self.fresh_columns()?;
                self.groups.push(columns);
                self.index.insert(key, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let payload = raw.payload;
        let columns = &mut self.groups[at];
        match &self.shape.select_value {
            Some(kind) => {
                // An aggregate value arrives as `[{"item": partial}]`, a grouping key as itself.
                let cell = match (kind, payload.as_ref()) {
                    (Some(_), Some(Value::Array(cells))) => cells.first(),
                    (_, p) => p,
                };
                columns[0].add(cell)?;
            }
            None => {
                let object = match payload {
                    Some(Value::Object(o)) => o,
                    None => Map::new(),
                    Some(other) => {
                        return Err(format!("a GROUP BY payload is not an object: {other}"))
                    }
                };
                for ((alias, _), column) in self.shape.aliases.iter().zip(columns.iter_mut()) {
                    column.add(object.get(alias))?;
                }
            }
        }
        Ok(())
    }

    /// The number of groups seen.
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }

    /// The result rows, one per group, in first-seen order. An undefined column is left out of
    /// its row; an undefined `SELECT VALUE` gives no row.
    pub(crate) fn finish(self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.groups.len());
        for columns in self.groups {
            match &self.shape.select_value {
                Some(_) => out.extend(columns.first().and_then(Column::result)),
                None => {
                    let mut row = Map::new();
                    for ((alias, _), column) in self.shape.aliases.iter().zip(&columns) {
                        if let Some(v) = column.result() {
                            row.insert(alias.clone(), v);
                        }
                    }
                    out.push(Value::Object(row));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use AggregateKind::*;

    fn aliases(cols: &[(&str, Option<AggregateKind>)]) -> GroupedAggregation {
        GroupedAggregation {
            select_value: None,
            aliases: cols
                .iter()
                .map(|(a, k)| (a.to_string(), k.clone()))
                .collect(),
        }
    }

    #[test]
    fn groups_from_several_ranges_combine_by_key() {
        let mut m = GroupByMerge::new(aliases(&[
            ("k", None),
            ("n", Some(Count)),
            ("avg", Some(Average)),
            ("lo", Some(Min)),
        ]));
        let rows = [
            json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 2}, "avg": {"item": {"sum": 4, "count": 2}}, "lo": {"item": 1}}}),
            json!({"groupByItems": [{"item": "b"}], "payload": {"k": "b", "n": {"item": 1}, "avg": {"item": {"sum": 9, "count": 1}}, "lo": {"item": 9}}}),
            json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 3}, "avg": {"item": {"sum": 1, "count": 3}}, "lo": {"item": -1}}}),
            json!({"groupByItems": [{}], "payload": {"n": {"item": 1}, "avg": {"item": {"sum": 2, "count": 1}}, "lo": {}}}),
        ];
        for r in rows {
            m.add(r).unwrap();
        }
        assert_eq!(m.len(), 3);
        assert_eq!(
            m.finish(),
            vec![
                json!({"k": "a", "n": 5, "avg": 1, "lo": -1}),
                json!({"k": "b", "n": 1, "avg": 9, "lo": 9}),
                json!({"n": 1, "avg": 2}),
            ]
        );
    }

    #[test]
    fn equal_keys_of_different_spelling_are_one_group() {
        let mut m = GroupByMerge::new(aliases(&[("n", Some(Count))]));
        m.add(
            json!({"groupByItems": [{"item": {"a": 1, "b": 2.0}}], "payload": {"n": {"item": 1}}}),
        )
        .unwrap();
        m.add(json!({"groupByItems": [{"item": {"b": 2, "a": 1}}], "payload": {"n": {"item": 1}}}))
            .unwrap();
        assert_eq!(m.finish(), vec![json!({"n": 2})]);
    }

    #[test]
    fn select_value_over_groups() {
        let shape = GroupedAggregation {
            select_value: Some(Some(Sum)),
            aliases: vec![],
        };
        let mut m = GroupByMerge::new(shape);
        m.add(json!({"groupByItems": [{"item": 1}], "payload": [{"item": 5}]}))
            .unwrap();
        m.add(json!({"groupByItems": [{"item": 2}], "payload": [{"item": 1}]}))
            .unwrap();
        m.add(json!({"groupByItems": [{"item": 1}], "payload": [{"item": 2}]}))
            .unwrap();
        assert_eq!(m.finish(), vec![json!(7), json!(1)]);
        let keys = GroupedAggregation {
            select_value: Some(None),
            aliases: vec![],
        };
        let mut m = GroupByMerge::new(keys);
        m.add(json!({"groupByItems": [{"item": "x"}], "payload": "x"}))
            .unwrap();
        m.add(json!({"groupByItems": [{"item": "x"}], "payload": "x"}))
            .unwrap();
        m.add(json!({"groupByItems": [{}]})).unwrap();
        assert_eq!(m.finish(), vec![json!("x")]);
    }

    #[test]
    fn a_non_value_aggregate_without_group_by_is_one_group() {
        let mut m = GroupByMerge::new(aliases(&[("total", Some(Sum))]));
        m.add(json!({"payload": {"total": {"item": 3}}})).unwrap();
        m.add(json!({"payload": {"total": {"item": 4}}})).unwrap();
        assert_eq!(m.finish(), vec![json!({"total": 7})]);
    }

    #[test]
    fn malformed_rows_are_errors() {
        let mut m = GroupByMerge::new(aliases(&[("n", Some(Count))]));
        assert!(m.add(json!("x")).unwrap_err().contains("malformed"));
        assert!(m
            .add(json!({"payload": 3}))
            .unwrap_err()
            .contains("not an object"));
        assert!(m
            .add(json!({"payload": {"n": {"item": "x"}}}))
            .unwrap_err()
            .contains("COUNT"));
    }
}
