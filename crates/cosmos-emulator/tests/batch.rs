//! Transactional batch and bulk over real HTTP: all-or-nothing with 207/424, each operation kind,
//! limits, bulk's per-operation outcomes, session tokens and charges.

use crate::common;

use common::{pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn batch(c: &TestClient, base: &str, pk: &str, atomic: &str, ops: &Value) -> Resp {
    let pk = pk_header(&json!(pk));
    c.post_json(
        base,
        DOCS,
        &[
            ("x-ms-documentdb-partitionkey", &pk),
            ("x-ms-cosmos-is-batch-request", "True"),
            ("x-ms-cosmos-batch-atomic", atomic),
        ],
        ops,
    )
    .await
}

fn statuses(r: &Resp) -> Vec<u64> {
    r.json()
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {r:?}"))
        .iter()
        .map(|e| e["statusCode"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn an_atomic_batch_applies_every_operation_in_order() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "r", "pk": "b", "v": 1}))
        .await;
    c.create_item(base, "db", "c", &json!({"id": "gone", "pk": "b"}))
        .await;
    let ops = json!([
        {"operationType": "Create", "resourceBody": {"id": "n1", "pk": "b", "v": 1}},
        {"operationType": "Upsert", "resourceBody": {"id": "n2", "pk": "b"}},
        {"operationType": "Replace", "id": "r", "resourceBody": {"id": "r", "pk": "b", "v": 2}},
        {"operationType": "Read", "id": "r"},
        {"operationType": "Delete", "id": "gone"},
        {"operationType": "Patch", "id": "n1", "resourceBody": {"operations": [{"op": "incr", "path": "/v", "value": 4}]}},
        {"operationType": "Read", "id": "n1"}
    ]);
    let r = batch(&c, base, "b", "True", &ops).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(statuses(&r), vec![201, 201, 200, 200, 204, 200, 200]);
    let results = r.json();
    // Later operations see earlier ones.
    assert_eq!(results[3]["resourceBody"]["v"], 2);
    assert_eq!(results[6]["resourceBody"]["v"], 5);
    assert!(results[0]["eTag"].as_str().is_some_and(|e| e.len() > 2));
    let charge: f64 = r.header("x-ms-request-charge").unwrap().parse().unwrap();
    let sum: f64 = results
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["requestCharge"].as_f64().unwrap())
        .sum();
    assert_eq!(charge, sum);
    // The session token covers the batch's writes: a read with it is served.
    let token = r.header("x-ms-session-token").unwrap().to_owned();
    let n1 = c
        .read_item(
            base,
            "db",
            "c",
            "n1",
            &json!("b"),
            &[("x-ms-session-token", &token)],
        )
        .await;
    assert_eq!((n1.status, n1.json()["v"].clone()), (200, json!(5)));
    let gone = c.read_item(base, "db", "c", "gone", &json!("b"), &[]).await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn a_failing_operation_rolls_the_whole_batch_back() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "taken", "pk": "b", "v": 1}))
        .await;
    let ops = json!([
        {"operationType": "Create", "resourceBody": {"id": "x1", "pk": "b"}},
        {"operationType": "Replace", "id": "taken", "resourceBody": {"id": "taken", "pk": "b", "v": 2}},
        {"operationType": "Create", "resourceBody": {"id": "taken", "pk": "b"}},
        {"operationType": "Create", "resourceBody": {"id": "x2", "pk": "b"}}
    ]);
    let r = batch(&c, base, "b", "True", &ops).await;
    assert_eq!(r.status, 207, "{r:?}");
    assert_eq!(statuses(&r), vec![424, 424, 409, 424]);
    for id in ["x1", "x2"] {
        assert_eq!(
            c.read_item(base, "db", "c", id, &json!("b"), &[])
                .await
                .status,
            404,
            "{id}"
        );
    }
    let taken = c
        .read_item(base, "db", "c", "taken", &json!("b"), &[])
        .await;
    assert_eq!(
        taken.json()["v"],
        1,
        "the replace before the failure stayed"
    );
    // Stale etags, missing items and refused patches fail the same way.
    let etag = taken.header("etag").unwrap().to_owned();
    for (op, status) in [
        (
            json!({"operationType": "Replace", "id": "taken", "ifMatch": "\"stale\"", "resourceBody": {"id": "taken", "pk": "b"}}),
            412,
        ),
        (json!({"operationType": "Delete", "id": "missing"}), 404),
        (
            json!({"operationType": "Patch", "id": "taken", "resourceBody": {"operations": [{"op": "incr", "path": "/v", "value": 1}], "condition": "from c where c.v = 9"}}),
            412,
        ),
    ] {
        let ops = json!([{"operationType": "Upsert", "resourceBody": {"id": "y", "pk": "b"}}, op]);
        let r = batch(&c, base, "b", "True", &ops).await;
        assert_eq!(statuses(&r), vec![424, status], "{ops}");
        assert_eq!(
            c.read_item(base, "db", "c", "y", &json!("b"), &[])
                .await
                .status,
            404
        );
    }
    let ok = json!([{"operationType": "Replace", "id": "taken", "ifMatch": etag, "resourceBody": {"id": "taken", "pk": "b", "v": 3}}]);
    assert_eq!(
        statuses(&batch(&c, base, "b", "True", &ok).await),
        vec![200]
    );
}

/// An operation's If-Match / If-None-Match is compared with the item as the batch's earlier
/// operations left it: after a replace in the same batch, the ETag from before the batch no
/// longer matches (the Python SDK's document_management sample sends exactly this batch, and
/// fails at its index 5 as it does against the service).
#[tokio::test]
async fn a_later_operations_etag_condition_sees_the_earlier_writes_of_the_batch() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for id in ["read_item", "delete_item", "replace_item"] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": "Account1"}))
            .await;
        assert_eq!(r.status, 201);
    }
    let before = c
        .read_item(base, "db", "c", "replace_item", &json!("Account1"), &[])
        .await
        .header("etag")
        .unwrap()
        .to_owned();
    let replace = |cond: Option<(&str, &str)>| {
        let mut op = json!({"operationType": "Replace", "id": "replace_item",
            "resourceBody": {"id": "replace_item", "pk": "Account1", "message": "item was replaced"}});
        if let Some((name, etag)) = cond {
            op[name] = json!(etag);
        }
        op
    };
    let sample = json!([
        {"operationType": "Create", "resourceBody": {"id": "create_item", "pk": "Account1"}},
        {"operationType": "Upsert", "resourceBody": {"id": "upsert_item", "pk": "Account1"}},
        {"operationType": "Read", "id": "read_item"},
        {"operationType": "Delete", "id": "delete_item"},
        replace(None),
        replace(Some(("ifMatch", &before))),
        replace(Some(("ifNoneMatch", &before)))
    ]);
    let r = batch(&c, base, "Account1", "True", &sample).await;
    assert_eq!(r.status, 207, "{r:?}");
    assert_eq!(statuses(&r), vec![424, 424, 424, 424, 424, 412, 424]);
    // Nothing applied: the item keeps its ETag.
    let now = c
        .read_item(base, "db", "c", "replace_item", &json!("Account1"), &[])
        .await;
    assert_eq!(now.header("etag"), Some(before.as_str()));
    // If-None-Match with the ETag from before the batch holds after the batch's own replace.
    let ops = json!([replace(None), replace(Some(("ifNoneMatch", &before)))]);
    let r = batch(&c, base, "Account1", "True", &ops).await;
    assert_eq!((r.status, statuses(&r)), (200, vec![200, 200]), "{r:?}");
    // And If-Match with the ETag the batch's earlier operation wrote holds: a read in the batch
    // reports it, and a single-operation batch before it proves the comparison is exact.
    let current = c
        .read_item(base, "db", "c", "replace_item", &json!("Account1"), &[])
        .await
        .header("etag")
        .unwrap()
        .to_owned();
    assert_ne!(current, before);
    let ops = json!([replace(Some(("ifMatch", &current))), {"operationType": "Read", "id": "replace_item"}]);
    let r = batch(&c, base, "Account1", "True", &ops).await;
    assert_eq!((r.status, statuses(&r)), (200, vec![200, 200]), "{r:?}");
    let results = r.json();
    assert_eq!(results[0]["eTag"], results[1]["eTag"]);
    let ops = json!([replace(Some(("ifMatch", &current)))]);
    let r = batch(&c, base, "Account1", "True", &ops).await;
    assert_eq!(statuses(&r), vec![412], "{r:?}");
    // An upsert of a missing item creates it whatever its If-Match says, as the service does.
    let ops = json!([{"operationType": "Upsert", "ifMatch": current,
        "resourceBody": {"id": "upsert_missing", "pk": "Account1"}}]);
    let r = batch(&c, base, "Account1", "True", &ops).await;
    assert_eq!((r.status, statuses(&r)), (200, vec![201]), "{r:?}");
}

#[tokio::test]
async fn bad_batches_are_400s_before_anything_applies() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"operationType": "Create", "resourceBody": {"id": format!("m{i}"), "pk": "b"}}))
        .collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"operationType": "Create"}), "JSON array"),
        (json!([]), "Batch request has no operations."),
        (Value::Array(many), "at most 100"),
        (
            json!([{"operationType": "Create", "resourceBody": {"id": "z", "pk": "b"}, "partitionKey": "[\"other\"]"}]),
            "another partition key",
        ),
    ];
    for (body, reason) in cases {
        let r = batch(&c, base, "b", "True", &body).await;
        assert_eq!(r.status, 400, "{body}: {r:?}");
        assert!(r.message().contains(reason), "{body}: {}", r.message());
    }
    // Operation-level mistakes fail that operation (and so the batch), with a 400 in its place.
    for op in [
        json!({"operationType": "Truncate", "id": "a"}),
        json!({"operationType": "Create", "resourceBody": {"id": "a", "pk": "elsewhere"}}),
        json!({"operationType": "Read"}),
        json!({"operationType": "Patch", "id": "a", "resourceBody": {"operations": []}}),
    ] {
        let r = batch(&c, base, "b", "True", &json!([op])).await;
        assert_eq!((r.status, statuses(&r)), (207, vec![400]), "{op}");
    }
    let r = batch(
        &c,
        base,
        "b",
        "maybe",
        &json!([{"operationType": "Read", "id": "a"}]),
    )
    .await;
    assert_eq!(r.status, 400);
    let no_pk = c
        .post_json(
            base,
            DOCS,
            &[("x-ms-cosmos-is-batch-request", "True")],
            &json!([{"operationType": "Read", "id": "a"}]),
        )
        .await;
    assert_eq!(no_pk.status, 400, "{no_pk:?}");
}

#[tokio::test]
async fn bulk_applies_each_operation_on_its_own_partition_key() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "dup", "pk": "p2"}))
        .await;
    let ops = json!([
        {"operationType": "Create", "partitionKey": "[\"p1\"]", "resourceBody": {"id": "a", "pk": "p1"}},
        {"operationType": "Create", "partitionKey": "[\"p2\"]", "resourceBody": {"id": "dup", "pk": "p2"}},
        {"operationType": "Upsert", "partitionKey": "[\"p3\"]", "resourceBody": {"id": "b", "pk": "p3"}}
    ]);
    let r = c
        .post_json(
            base,
            DOCS,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "False"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ],
            &ops,
        )
        .await;
    assert_eq!(statuses(&r), vec![201, 409, 201], "{r:?}");
    for (id, pk) in [("a", "p1"), ("b", "p3")] {
        assert_eq!(
            c.read_item(base, "db", "c", id, &json!(pk), &[])
                .await
                .status,
            200
        );
    }
    let gone = c
        .post_json(
            base,
            DOCS,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "False"),
                ("x-ms-documentdb-partitionkeyrangeid", "7"),
            ],
            &ops,
        )
        .await;
    assert_eq!((gone.status, gone.sub_status()), (410, 1002));
}

#[tokio::test]
async fn bulk_told_not_to_continue_stops_at_the_first_failure() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "dup", "pk": "p"}))
        .await;
    let ops = json!([
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "dup", "pk": "p"}},
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "never", "pk": "p"}}
    ]);
    let send = |flag: &'static str| {
        let c = c.clone();
        let ops = ops.clone();
        async move {
            c.post_json(
                base,
                DOCS,
                &[
                    ("x-ms-cosmos-is-batch-request", "True"),
                    ("x-ms-cosmos-batch-atomic", "False"),
                    ("x-ms-cosmos-batch-continue-on-error", flag),
                ],
                &ops,
            )
            .await
        }
    };
    assert_eq!(statuses(&send("False").await), vec![409, 424]);
    let never = c
        .read_item(base, "db", "c", "never", &json!("p"), &[])
        .await;
    assert_eq!(never.status, 404);
    assert_eq!(send("sometimes").await.status, 400);
    // An operation without any partition key refuses the whole request before anything applies.
    let unkeyed = json!([
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "first", "pk": "p"}},
        {"operationType": "Create", "resourceBody": {"id": "second", "pk": "p"}}
    ]);
    let r = c
        .post_json(
            base,
            DOCS,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "False"),
            ],
            &unkeyed,
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    let first = c
        .read_item(base, "db", "c", "first", &json!("p"), &[])
        .await;
    assert_eq!(first.status, 404);
    assert_eq!(statuses(&send("True").await), vec![409, 201]);
}

#[tokio::test]
async fn an_atomic_batch_commits_at_one_lsn_seen_whole_by_the_change_feed() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let lsn_of = |r: &Resp| -> u64 { r.header("lsn").unwrap().parse().unwrap() };
    let first = c
        .create_item(base, "db", "c", &json!({"id": "x", "pk": "b"}))
        .await;
    assert_eq!(first.status, 201, "{first:?}");
    let before = lsn_of(&first);
    let ops = json!([
        {"operationType": "Create", "resourceBody": {"id": "a", "pk": "b", "v": 1}},
        {"operationType": "Create", "resourceBody": {"id": "b", "pk": "b"}},
        {"operationType": "Upsert", "resourceBody": {"id": "c", "pk": "b"}},
        {"operationType": "Replace", "id": "a", "resourceBody": {"id": "a", "pk": "b", "v": 2}}
    ]);
    let r = batch(&c, base, "b", "True", &ops).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(lsn_of(&r), before + 1, "the batch is one commit");
    let token = r.header("x-ms-session-token").unwrap();
    assert!(token.ends_with(&format!("#{}", before + 1)), "{token}");
    let after = c
        .create_item(base, "db", "c", &json!({"id": "y", "pk": "b"}))
        .await;
    assert_eq!(lsn_of(&after), before + 2);

    // One item per page asked for: the batch's three items still come in one page, at its LSN.
    let pk = pk_header(&json!("b"));
    let mut pages: Vec<Vec<(String, u64)>> = Vec::new();
    let mut etag: Option<String> = None;
    for _ in 0..10 {
        let mut headers = vec![
            ("a-im", "Incremental feed"),
            ("x-ms-documentdb-partitionkey", pk.as_str()),
            ("x-ms-max-item-count", "1"),
        ];
        if let Some(tag) = &etag {
            headers.push(("if-none-match", tag.as_str()));
        }
        let r = c.get(base, DOCS, &headers).await;
        if r.status == 304 {
            break;
        }
        assert_eq!(r.status, 200, "{r:?}");
        etag = r.header("etag").map(str::to_owned);
        pages.push(
            r.json()["Documents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    (
                        d["id"].as_str().unwrap().to_owned(),
                        d["_lsn"].as_u64().unwrap(),
                    )
                })
                .collect(),
        );
    }
    let l = before + 1;
    assert_eq!(
        pages,
        vec![
            vec![("x".to_owned(), before)],
            vec![
                ("a".to_owned(), l),
                ("b".to_owned(), l),
                ("c".to_owned(), l)
            ],
            vec![("y".to_owned(), before + 2)],
        ]
    );
    let read = c.read_item(base, "db", "c", "a", &json!("b"), &[]).await;
    assert_eq!(read.json()["v"], 2);
}
