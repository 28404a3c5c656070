//! Bulk planning: a caller's operations, each already mapped to its partition key range, grouped
//! into non-atomic batches per range (each within the service's 100 operations and 2 MB, in the
//! caller's order within a range), and the batches' results put back in the caller's order.

use std::collections::BTreeMap;

use super::bulk_operation::BulkOperation;
use crate::batch::wire::{array_len, MAX_BODY_BYTES, MAX_OPERATIONS};
use crate::error::CosmosError;

/// One non-atomic batch to send to one range: the caller's indices of its operations and its body.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedBatch<K> {
    /// The partition key range the batch goes to.
    pub range: K,
    /// The caller's index of each operation, in the batch's order.
    pub indices: Vec<usize>,
    /// The request body: the JSON array of the operations.
    pub body: Vec<u8>,
}

/// Groups `operations` (the caller's index is the position) into batches per range. An operation
/// too large for any batch is refused on its own, with its index; the others still go.
pub fn plan_batches<K: Ord + Clone>(
    operations: Vec<(K, BulkOperation)>,
) -> (Vec<PlannedBatch<K>>, Vec<(usize, CosmosError)>) {
    let mut by_range: BTreeMap<K, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
    let mut refused = Vec::new();
    for (index, (range, op)) in operations.into_iter().enumerate() {
        let op = op.wire;
        match serde_json::to_vec(&op) {
            Ok(bytes) if array_len(bytes.len(), 1) <= MAX_BODY_BYTES => {
                by_range.entry(range).or_default().push((index, bytes));
            }
            Ok(bytes) => refused.push((
                index,
                CosmosError::invalid_input(format!(
                    "bulk {} is {} bytes; a batch body is at most {MAX_BODY_BYTES}",
                    op.describe(index),
                    bytes.len()
                )),
            )),
            Err(e) => refused.push((
                index,
                CosmosError::invalid_input(format!("bulk {} is not JSON: {e}", op.describe(index))),
            )),
        }
    }
    let mut batches = Vec::new();
    for (range, ops) in by_range {
        let mut current: Option<(Vec<usize>, Vec<Vec<u8>>, usize)> = None;
        for (index, bytes) in ops {
            if let Some((indices, parts, size)) = &current {
                let fits = indices.len() < MAX_OPERATIONS
                    && array_len(size + bytes.len(), parts.len() + 1) <= MAX_BODY_BYTES;
                if !fits {
                    let (indices, parts, _) = current.take().expect("checked above");
                    batches.push(finish(range.clone(), indices, &parts));
                }
            }
            let entry = current.get_or_insert_with(|| (Vec::new(), Vec::new(), 0));
            entry.0.push(index);
            entry.2 += bytes.len();
            entry.1.push(bytes);
        }
        if let Some((indices, parts, _)) = current {
            batches.push(finish(range, indices, &parts));
        }
    }
    (batches, refused)
}

fn finish<K>(range: K, indices: Vec<usize>, parts: &[Vec<u8>]) -> PlannedBatch<K> {
    let mut body = Vec::with_capacity(array_len(parts.iter().map(Vec::len).sum(), parts.len()));
    body.push(b'[');
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(part);
    }
    body.push(b']');
    PlannedBatch {
        range,
        indices,
        body,
    }
}

/// Puts per-batch results back in the caller's order: `finished` holds each batch's indices with
/// its results (one per index, in the same order). A position no batch answered is `None`.
pub fn in_caller_order<R>(
    total: usize,
    finished: impl IntoIterator<Item = (Vec<usize>, Vec<R>)>,
) -> Vec<Option<R>> {
    let mut out: Vec<Option<R>> = (0..total).map(|_| None).collect();
    for (indices, results) in finished {
        for (index, result) in indices.into_iter().zip(results) {
            if let Some(slot) = out.get_mut(index) {
                *slot = Some(result);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn create(id: &str, pad: usize) -> BulkOperation {
        BulkOperation::create(id, &json!({"id": id, "pad": "x".repeat(pad)})).unwrap()
    }

    fn shape(batches: &[PlannedBatch<&'static str>]) -> Vec<(&'static str, Vec<usize>)> {
        batches
            .iter()
            .map(|b| (b.range, b.indices.clone()))
            .collect()
    }

    #[test]
    fn operations_group_by_range_in_the_callers_order() {
        let ops = vec![
            ("r1", create("a", 0)),
            ("r0", create("b", 0)),
            ("r1", create("c", 0)),
            ("r0", create("d", 0)),
            ("r2", create("e", 0)),
        ];
        let (batches, refused) = plan_batches(ops);
        assert!(refused.is_empty());
        assert_eq!(
            shape(&batches),
            vec![("r0", vec![1, 3]), ("r1", vec![0, 2]), ("r2", vec![4])]
        );
        let body: Value = serde_json::from_slice(&batches[0].body).unwrap();
        assert_eq!(
            body,
            json!([
                {"operationType": "Create", "id": "b", "resourceBody": {"id": "b", "pad": ""}, "partitionKey": "[\"b\"]"},
                {"operationType": "Create", "id": "d", "resourceBody": {"id": "d", "pad": ""}, "partitionKey": "[\"d\"]"}
            ])
        );
    }

    #[test]
    fn batches_split_at_100_operations_and_at_2_mb() {
        let many: Vec<_> = (0..250)
            .map(|i| ("r", create(&format!("i{i}"), 0)))
            .collect();
        let (batches, _) = plan_batches(many);
        let sizes: Vec<usize> = batches.iter().map(|b| b.indices.len()).collect();
        assert_eq!(sizes, vec![100, 100, 50]);
        assert_eq!(batches[2].indices.first(), Some(&200));

        let big: Vec<_> = (0..5)
            .map(|i| ("r", create(&format!("b{i}"), 800 * 1024)))
            .collect();
        let (batches, refused) = plan_batches(big);
        assert!(refused.is_empty());
        assert_eq!(
            shape(&batches),
            vec![("r", vec![0, 1]), ("r", vec![2, 3]), ("r", vec![4])]
        );
        for b in &batches {
            assert!(b.body.len() <= MAX_BODY_BYTES);
            let parsed: Vec<Value> = serde_json::from_slice(&b.body).unwrap();
            assert_eq!(parsed.len(), b.indices.len());
        }
    }

    #[test]
    fn an_operation_too_large_for_any_batch_is_refused_alone() {
        let ops = vec![
            ("r", create("ok", 0)),
            ("r", create("huge", MAX_BODY_BYTES)),
            ("r", create("ok2", 0)),
        ];
        let (batches, refused) = plan_batches(ops);
        assert_eq!(shape(&batches), vec![("r", vec![0, 2])]);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, 1);
        assert!(
            refused[0]
                .1
                .message()
                .contains("operation 1 (Create \"huge\")"),
            "{}",
            refused[0].1
        );
    }

    #[test]
    fn results_return_in_the_callers_order() {
        let finished = vec![(vec![1, 3], vec!["b", "d"]), (vec![0, 2], vec!["a", "c"])];
        assert_eq!(
            in_caller_order(5, finished),
            vec![Some("a"), Some("b"), Some("c"), Some("d"), None]
        );
        // Indices out of bounds are ignored rather than panicking.
        assert_eq!(in_caller_order(1, vec![(vec![7], vec![1])]), vec![None]);
    }
}
