//! The cross-partition merge of a vector search (a plan with `hasNonStreamingOrderBy`): each
//! range answers its rows ordered by their vector score, but a range's pages are not promised to
//! come in one global order, so every row of every range is read and only the best `k` (TOP, or
//! OFFSET + LIMIT) are kept. Memory is bounded by `k` whatever the container holds: a sorted
//! list of at most `k` rows, each new row inserted by binary search or dropped. Ties keep the
//! row read first. Pure data; the blocking stage feeds it and a continuation token carries it.

use std::cmp::Ordering;

use serde::Deserialize;
use serde_json::Value;

use crate::query::merge::value_order::compare_keys;
use crate::query::plan::query_plan::SortOrder;

/// Most rows a vector search may keep (as the official SDKs bound it by default).
pub(crate) const MAX_TOP_K: u64 = 50_000;

/// One kept row: its score key and the payload the query answers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ranked {
    /// The score (one value per ORDER BY key).
    pub keys: Vec<Option<Value>>,
    /// What the query answers for the row.
    pub payload: Value,
}

#[derive(Deserialize)]
struct Item {
    item: Option<Value>,
}

#[derive(Deserialize)]
struct RawRow {
    #[serde(rename = "orderByItems")]
    order_by_items: Vec<Item>,
    payload: Option<Value>,
}

impl Ranked {
    /// A range row `{"orderByItems": [{"item": score}], "payload": ...}`; a row of another shape
    /// is an error (never dropped silently).
    pub(crate) fn from_row(row: Value, key_count: usize) -> Result<Ranked, String> {
        let raw: RawRow = serde_json::from_value(row)
            .map_err(|e| format!("a vector search row is not {{orderByItems, payload}}: {e}"))?;
        if raw.order_by_items.len() != key_count {
            return Err(format!(
                "a vector search row has {} order-by items, the plan {key_count}",
                raw.order_by_items.len()
            ));
        }
        Ok(Ranked {
            keys: raw.order_by_items.into_iter().map(|i| i.item).collect(),
            payload: raw.payload.unwrap_or(Value::Null),
        })
    }

    /// The row as a range answered it (what a continuation token keeps).
    pub(crate) fn to_row(&self) -> Value {
        let items: Vec<Value> = self
            .keys
            .iter()
            .map(|k| match k {
                Some(v) => serde_json::json!({ "item": v }),
                None => serde_json::json!({}),
            })
            .collect();
        serde_json::json!({"orderByItems": items, "payload": self.payload})
    }
}

/// The best `k` rows seen, in answer order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TopK {
    orders: Vec<SortOrder>,
    k: usize,
    rows: Vec<Ranked>,
}

impl TopK {
    /// An empty merge keeping the best `k` rows under `orders`.
    pub(crate) fn new(orders: Vec<SortOrder>, k: usize) -> TopK {
        TopK {
            orders,
            k,
            rows: Vec::with_capacity(k.min(1024)),
        }
    }

    /// Offers one row: kept when it ranks among the best `k` so far.
    pub(crate) fn push(&mut self, row: Ranked) {
        if self.k == 0 {
            return;
        }
        if self.rows.len() == self.k {
            let worst = &self.rows[self.k - 1];
            if compare_keys(&row.keys, &worst.keys, &self.orders) != Ordering::Less {
                return;
            }
        }
        // After every row ranking equal or better: ties keep arrival order.
        let at = self.rows.partition_point(|r| {
            compare_keys(&r.keys, &row.keys, &self.orders) != Ordering::Greater
        });
        self.rows.insert(at, row);
        self.rows.truncate(self.k);
    }

    /// How many ORDER BY keys each row carries.
    pub(crate) fn orders_len(&self) -> usize {
        self.orders.len()
    }

    /// Rows kept now.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The kept rows, best first.
    pub(crate) fn rows(&self) -> &[Ranked] {
        &self.rows
    }

    /// The answer: the payloads, best first.
    pub(crate) fn into_payloads(self) -> Vec<Value> {
        self.rows.into_iter().map(|r| r.payload).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(score: f64, id: u32) -> Ranked {
        Ranked::from_row(
            json!({"orderByItems": [{"item": score}], "payload": {"id": id}}),
            1,
        )
        .unwrap()
    }

    #[test]
    fn keeps_the_best_k_in_order_whatever_the_arrival() {
        let scores = [0.3, 0.9, 0.1, 0.7, 0.9, 0.5, 0.2, 0.8];
        for (orders, want) in [
            (vec![SortOrder::Descending], vec![1, 4, 7]),
            (vec![SortOrder::Ascending], vec![2, 6, 0]),
        ] {
            let mut top = TopK::new(orders, 3);
            for (i, s) in scores.iter().enumerate() {
                top.push(row(*s, i as u32));
                assert!(top.len() <= 3);
            }
            let ids: Vec<u64> = top
                .into_payloads()
                .iter()
                .map(|p| p["id"].as_u64().unwrap())
                .collect();
            assert_eq!(ids, want.iter().map(|&i| i as u64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn rows_round_trip_and_bad_rows_are_errors() {
        let r = row(0.5, 1);
        assert_eq!(Ranked::from_row(r.to_row(), 1).unwrap(), r);
        assert!(Ranked::from_row(json!({"payload": 1}), 1).is_err());
        assert!(Ranked::from_row(json!({"orderByItems": [], "payload": 1}), 1).is_err());
        let mut zero = TopK::new(vec![SortOrder::Descending], 0);
        zero.push(row(1.0, 1));
        assert_eq!(zero.len(), 0);
    }
}
