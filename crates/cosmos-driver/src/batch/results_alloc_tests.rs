//! A bulk run that keeps no bodies reads the service's answer without building the written
//! documents it carries back (counted by the crate's test allocator, `alloc_counter`).

use serde_json::json;

use super::*;
use crate::alloc_counter::allocations_of;

/// The answer to `n` creates, each with the document written (about 300 bytes, as the
/// service sends it back).
fn answer(n: usize) -> Vec<u8> {
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            json!({"statusCode": 201, "requestCharge": 5.0, "eTag": format!("\"e{i}\""),
                "resourceBody": {"id": format!("doc-{i}"), "pk": format!("key-{}", i % 7), "n": i,
                "price": i as f64 * 0.25, "tags": ["alpha", "beta", "3"], "active": true,
                "text": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod",
                "_rid": "AAAA", "_self": "dbs/x/colls/y/docs/z", "_etag": "\"e\"", "_ts": 1}})
        })
        .collect();
    serde_json::to_vec(&entries).unwrap()
}

#[test]
fn an_answer_read_without_bodies_builds_none_of_the_documents() {
    let n = 100;
    let body = answer(n);
    let ids: Vec<String> = (0..n).map(|i| format!("doc-{i}")).collect();
    let ops = || {
        ids.iter()
            .map(|id| (BatchOperationKind::Create, Some(id.as_str())))
            .collect::<Vec<_>>()
            .into_iter()
    };
    let (count, results) = allocations_of(|| parse_results_of(&body, ops(), Bodies::Skip));
    let results = results.unwrap();
    assert!(results.iter().all(|r| r.resource_body.is_none()));
    assert_eq!(results[7].etag.as_deref(), Some("\"e7\""));
    // Per result: its id and etag, plus the vectors; a document would add a dozen or more.
    assert!(count <= 4 * n as u64, "{count} allocations for {n} results");
    // Kept, the bodies are there.
    let kept = parse_results_of(&body, ops(), Bodies::Keep).unwrap();
    assert_eq!(kept[3].resource_body.as_ref().unwrap()["id"], "doc-3");
}
