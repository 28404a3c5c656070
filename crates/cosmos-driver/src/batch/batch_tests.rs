//! Table tests of the batch builder's wire output, its limits and the reading of responses.

use serde_json::{json, Value};

use super::results::committed;
use super::wire::{MAX_BODY_BYTES, MAX_OPERATIONS};
use super::*;
use crate::operation::Precondition;
use crate::patch::PatchInstructions;

fn body_json(batch: &TransactionalBatch) -> Value {
    serde_json::from_slice(&batch.body().unwrap()).unwrap()
}

#[test]
fn each_operation_has_the_service_wire_shape() {
    let patch = PatchInstructions::new()
        .set("/n", json!(1))
        .increment("/c", 2);
    let cases: Vec<(TransactionalBatch, Value)> = vec![
        (
            TransactionalBatch::new("p")
                .create(&json!({"id": "a", "pk": "p"}))
                .unwrap(),
            json!([{"operationType": "Create", "id": "a", "resourceBody": {"id": "a", "pk": "p"}}]),
        ),
        (
            TransactionalBatch::new("p")
                .upsert(&json!({"id": "a"}))
                .unwrap(),
            json!([{"operationType": "Upsert", "id": "a", "resourceBody": {"id": "a"}}]),
        ),
        (
            TransactionalBatch::new("p")
                .replace("a", &json!({"id": "a", "v": 2}))
                .unwrap(),
            json!([{"operationType": "Replace", "id": "a", "resourceBody": {"id": "a", "v": 2}}]),
        ),
        (
            TransactionalBatch::new("p").delete("a").unwrap(),
            json!([{"operationType": "Delete", "id": "a"}]),
        ),
        (
            TransactionalBatch::new("p").read("a").unwrap(),
            json!([{"operationType": "Read", "id": "a"}]),
        ),
        (
            TransactionalBatch::new("p").patch("a", &patch).unwrap(),
            json!([{"operationType": "Patch", "id": "a", "resourceBody": {"operations": [
                {"op": "set", "path": "/n", "value": 1},
                {"op": "increment", "path": "/c", "value": 2}]}}]),
        ),
        (
            TransactionalBatch::new("p")
                .replace("a", &json!({"id": "a"}))
                .unwrap()
                .with_precondition(Precondition::IfMatch("\"e1\"".into()))
                .unwrap()
                .read("b")
                .unwrap()
                .with_precondition(Precondition::IfNoneMatch("\"e2\"".into()))
                .unwrap(),
            json!([
                {"operationType": "Replace", "id": "a", "resourceBody": {"id": "a"}, "ifMatch": "\"e1\""},
                {"operationType": "Read", "id": "b", "ifNoneMatch": "\"e2\""}]),
        ),
    ];
    for (batch, expected) in cases {
        assert_eq!(body_json(&batch), expected);
    }
}

#[test]
fn bad_operations_are_refused_with_what_was_wrong() {
    let cases: Vec<(Result<TransactionalBatch, crate::error::CosmosError>, &str)> = vec![
        (
            TransactionalBatch::new("p").create(&json!([1])),
            "not a JSON object",
        ),
        (
            TransactionalBatch::new("p").create(&json!({"id": 5})),
            "no string \"id\"",
        ),
        (
            TransactionalBatch::new("p").upsert(&json!({"x": 1})),
            "no string \"id\"",
        ),
        (
            TransactionalBatch::new("p").replace("a", &json!({"id": "b"})),
            "whose id is \"b\"",
        ),
        (TransactionalBatch::new("p").delete(""), "id is empty"),
        (
            TransactionalBatch::new("p").patch("a", &PatchInstructions::new()),
            "no patch operations",
        ),
        (
            TransactionalBatch::new("p").with_precondition(Precondition::IfMatch("e".into())),
            "the batch has none",
        ),
        (
            TransactionalBatch::new("p")
                .read("a")
                .unwrap()
                .with_precondition(Precondition::IfMatch(String::new())),
            "empty ETag",
        ),
    ];
    for (result, words) in cases {
        let e = result.expect_err(words);
        assert!(e.is_invalid_input(), "{e}");
        assert!(e.message().contains(words), "{e} should say {words}");
    }
    let empty = TransactionalBatch::new("p").body().unwrap_err();
    assert!(
        empty.message().contains("at least one operation"),
        "{empty}"
    );
}

#[test]
fn the_101st_operation_is_refused_and_the_first_100_kept() {
    let mut batch = TransactionalBatch::new("p");
    for i in 0..MAX_OPERATIONS {
        batch = batch.read(&format!("i{i}")).unwrap();
    }
    let e = batch.clone().delete("last").unwrap_err();
    assert!(e.message().contains("at most 100 operations"), "{e}");
    assert!(e.message().contains("Delete \"last\""), "{e}");
    assert_eq!(batch.len(), 100);
    assert_eq!(body_json(&batch).as_array().unwrap().len(), 100);
}

#[test]
fn a_body_past_2_mb_is_refused_and_the_size_count_is_exact() {
    // Two items that fit, then a third that would pass the limit.
    let big = "x".repeat(900 * 1024);
    let batch = TransactionalBatch::new("p")
        .create(&json!({"id": "a", "v": big}))
        .unwrap()
        .create(&json!({"id": "b", "v": big}))
        .unwrap();
    let e = batch
        .clone()
        .create(&json!({"id": "c", "v": big}))
        .unwrap_err();
    assert!(e.message().contains("at most 2097152 bytes"), "{e}");
    assert!(e.message().contains("operation 2 (Create \"c\")"), "{e}");
    // The tracked size is the real body size: fill to exactly the limit, then one byte more.
    let used = batch.body().unwrap().len();
    let probe = TransactionalBatch::new("p")
        .create(&json!({"id": "d", "v": ""}))
        .unwrap();
    let probe_len = probe.body().unwrap().len() - 2; // without the brackets
    let pad = MAX_BODY_BYTES - used - 1 - probe_len; // one comma before it
    let exact = batch
        .clone()
        .create(&json!({"id": "d", "v": "y".repeat(pad)}))
        .unwrap();
    assert_eq!(exact.body().unwrap().len(), MAX_BODY_BYTES);
    assert!(batch
        .create(&json!({"id": "d", "v": "y".repeat(pad + 1)}))
        .is_err());
}

#[test]
fn headers_mark_an_atomic_batch() {
    let h = TransactionalBatch::headers();
    assert_eq!(h[0].0.as_str(), "x-ms-cosmos-is-batch-request");
    assert_eq!(h[0].1, "True");
    assert_eq!(h[1].0.as_str(), "x-ms-cosmos-batch-atomic");
    assert_eq!(h[1].1, "True");
}

fn three_ops() -> TransactionalBatch {
    TransactionalBatch::new("p")
        .create(&json!({"id": "a"}))
        .unwrap()
        .replace("b", &json!({"id": "b"}))
        .unwrap()
        .read("c")
        .unwrap()
}

#[test]
fn a_committed_response_gives_one_result_per_operation() {
    let batch = three_ops();
    let body = json!([
        {"statusCode": 201, "requestCharge": 5.5, "eTag": "\"1\"", "resourceBody": {"id": "a"}},
        {"statusCode": 200, "requestCharge": 6.0, "eTag": "\"2\"", "resourceBody": {"id": "b"}},
        {"statusCode": 304, "requestCharge": 1.0}
    ]);
    let results = batch.parse_response(body.to_string().as_bytes()).unwrap();
    assert!(committed(&results).is_ok());
    let summary: Vec<_> = results
        .iter()
        .map(|r| {
            (
                r.index,
                r.kind,
                r.id.as_deref(),
                r.status.status,
                r.etag.as_deref(),
                r.request_charge,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                0,
                BatchOperationKind::Create,
                Some("a"),
                201,
                Some("\"1\""),
                5.5
            ),
            (
                1,
                BatchOperationKind::Replace,
                Some("b"),
                200,
                Some("\"2\""),
                6.0
            ),
            (2, BatchOperationKind::Read, Some("c"), 304, None, 1.0),
        ]
    );
    let item: Option<Value> = results[1].item().unwrap();
    assert_eq!(item, Some(json!({"id": "b"})));
}

#[test]
fn a_rolled_back_response_names_the_failing_operation() {
    let batch = three_ops();
    let body = json!([
        {"statusCode": 424, "requestCharge": 0.0},
        {"statusCode": 404, "subStatusCode": 0, "requestCharge": 1.0, "message": "Entity not found"},
        {"statusCode": 424, "requestCharge": 0.0}
    ]);
    let results = batch.parse_response(body.to_string().as_bytes()).unwrap();
    let e = committed(&results).unwrap_err();
    assert_eq!(e.status(), Some(404));
    let same = batch
        .committed_results(body.to_string().as_bytes())
        .unwrap_err();
    assert_eq!(same.message(), e.message());
    assert!(
        e.message()
            .contains("operation 1 (Replace \"b\") failed with status 404/0"),
        "{e}"
    );
    assert!(e.message().contains("Entity not found"), "{e}");
    let throttled = json!([
        {"statusCode": 429, "subStatusCode": 3200, "retryAfterMilliseconds": 40},
        {"statusCode": 424}, {"statusCode": 424}
    ]);
    let results = batch
        .parse_response(throttled.to_string().as_bytes())
        .unwrap();
    assert_eq!(
        results[0].retry_after,
        Some(std::time::Duration::from_millis(40))
    );
    let e = committed(&results).unwrap_err();
    assert_eq!(e.sub_status(), Some(3200));
    assert!(e.message().contains("operation 0 (Create \"a\")"), "{e}");
}

#[test]
fn malformed_responses_are_errors_not_panics() {
    let batch = three_ops();
    let cases = [
        ("", "JSON array"),
        ("{}", "JSON array"),
        ("[{\"statusCode\": 200}]", "1 results for 3 operations"),
        ("[{\"statusCode\": \"x\"},{},{}]", "JSON array"),
    ];
    for (body, words) in cases {
        let e = batch.parse_response(body.as_bytes()).unwrap_err();
        assert!(e.message().contains(words), "{body}: {e}");
    }
}
