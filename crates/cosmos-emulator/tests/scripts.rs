//! Stored procedures, triggers and user-defined functions over real HTTP: their CRUD, execution
//! as one transaction, continuation through the accepted flag, triggers around writes, UDFs in
//! cross-partition queries, and runaway scripts stopped while other requests keep being served.

use crate::common;

use std::time::Duration;

use common::{pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const COLL: &str = "/dbs/db/colls/c";

async fn create_script(c: &TestClient, base: &str, kind: &str, body: &Value) -> Resp {
    c.post_json(base, &format!("{COLL}/{kind}"), &[], body)
        .await
}

async fn execute(
    c: &TestClient,
    base: &str,
    id: &str,
    pk: &Value,
    args: &Value,
    extra: &[(&str, &str)],
) -> Resp {
    c.send_with_pk(
        base,
        Method::POST,
        &format!("{COLL}/sprocs/{id}"),
        pk,
        extra,
        Some(args),
    )
    .await
}

async fn count_in(c: &TestClient, base: &str, pk: &str) -> u64 {
    let r = c
        .query(
            base,
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT VALUE COUNT(1) FROM c"}),
            &[("x-ms-documentdb-partitionkey", &pk_header(&json!(pk)))],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Documents"][0].as_u64().unwrap()
}

async fn scripts_are_created_read_replaced_listed_queried_and_deleted(builder: EmulatorBuilder) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint();
    for (kind, feed, extra) in [
        ("sprocs", "StoredProcedures", json!({})),
        (
            "triggers",
            "Triggers",
            json!({"triggerType": "Pre", "triggerOperation": "All"}),
        ),
        ("udfs", "UserDefinedFunctions", json!({})),
    ] {
        let mut def = json!({"id": "s 1", "body": "function () { var x = 10; }"});
        for (k, v) in extra.as_object().unwrap() {
            def[k] = v.clone();
        }
        let r = create_script(&c, base, kind, &def).await;
        assert_eq!(r.status, 201, "{kind}: {r:?}");
        let made = r.json();
        assert_eq!(made["body"], def["body"]);
        for p in ["_rid", "_self", "_etag", "_ts"] {
            assert!(!made[p].is_null(), "{kind} lacks {p}");
        }
        assert!(made["_self"]
            .as_str()
            .unwrap()
            .contains(&format!("/{kind}/")));
        assert_eq!(r.header("etag"), made["_etag"].as_str());
        assert_eq!(
            create_script(&c, base, kind, &def).await.status,
            409,
            "{kind} duplicate"
        );
        let list = c.get(base, &format!("{COLL}/{kind}"), &[]).await;
        assert_eq!(list.status, 200);
        assert_eq!(list.json()["_count"], 1);
        assert_eq!(list.json()[feed][0]["id"], "s 1");
        let q = c
            .query(
                base,
                &format!("{COLL}/{kind}"),
                &json!({"query": "SELECT * FROM root r WHERE r.id = @id", "parameters": [{"name": "@id", "value": "s 1"}]}),
                &[],
            )
            .await;
        assert_eq!(q.status, 200, "{q:?}");
        assert_eq!(q.json()[feed][0]["id"], "s 1");
        let path = format!("{COLL}/{kind}/s%201");
        let read = c.get(base, &path, &[]).await;
        assert_eq!(read.status, 200);
        let etag = made["_etag"].as_str().unwrap().to_owned();
        assert_eq!(
            c.get(base, &path, &[("if-none-match", &etag)]).await.status,
            304
        );
        let mut changed = made.clone();
        changed["body"] = json!("function () { var x = 20; }");
        let stale = [("if-match", "\"stale\"")];
        let r = c
            .send(
                base,
                Method::PUT,
                &path,
                &stale,
                Some(changed.to_string().as_bytes()),
            )
            .await;
        assert_eq!(r.status, 412, "{kind}");
        let r = c
            .send(
                base,
                Method::PUT,
                &path,
                &[("if-match", &etag)],
                Some(changed.to_string().as_bytes()),
            )
            .await;
        assert_eq!(r.status, 200, "{kind}: {r:?}");
        assert_eq!(r.json()["body"], "function () { var x = 20; }");
        assert_eq!(r.json()["_rid"], made["_rid"]);
        assert_ne!(r.json()["_etag"], made["_etag"]);
        assert_eq!(
            c.send(base, Method::DELETE, &path, &[], None).await.status,
            204
        );
        assert_eq!(c.get(base, &path, &[]).await.status, 404);
        assert_eq!(
            c.send(base, Method::DELETE, &path, &[], None).await.status,
            404
        );
        let r = c
            .send(
                base,
                Method::PUT,
                &path,
                &[],
                Some(changed.to_string().as_bytes()),
            )
            .await;
        assert_eq!(r.status, 404);
    }
    // The service's validation.
    let bad = [
        ("sprocs", json!({"id": "x"}), "body"),
        ("sprocs", json!({"body": "function(){}"}), "id"),
        (
            "sprocs",
            json!({"id": "a#b", "body": "function(){}"}),
            "invalid character",
        ),
        (
            "triggers",
            json!({"id": "t", "body": "function(){}", "triggerOperation": "All"}),
            "triggerType",
        ),
        (
            "triggers",
            json!({"id": "t", "body": "function(){}", "triggerType": "Pre", "triggerOperation": "Read"}),
            "triggerOperation",
        ),
    ];
    for (kind, def, word) in bad {
        let r = create_script(&c, base, kind, &def).await;
        assert_eq!(r.status, 400, "{def}");
        assert!(r.message().contains(word), "{def}: {}", r.message());
    }
    let r = c.get(base, "/dbs/db/colls/missing/sprocs", &[]).await;
    assert_eq!(r.status, 404);
}

/// The bulk import the service's documentation describes: insert from the parameter until a
/// collection call is not accepted, answer how many went in; the caller calls again with the rest.
const BULK_IMPORT: &str = r#"function bulkImport(docs) {
    var collection = getContext().getCollection();
    var link = collection.getSelfLink();
    var count = 0;
    if (!docs || docs.length === 0) { getContext().getResponse().setBody(0); return; }
    tryCreate(docs[count], callback);
    function tryCreate(doc, callback) {
        var accepted = collection.createDocument(link, doc, callback);
        if (!accepted) getContext().getResponse().setBody(count);
    }
    function callback(err, doc, options) {
        if (err) throw err;
        count++;
        if (count >= docs.length) getContext().getResponse().setBody(count);
        else tryCreate(docs[count], callback);
    }
}"#;

async fn a_bulk_import_continues_across_calls_until_every_document_is_in(builder: EmulatorBuilder) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint();
    let r = create_script(
        &c,
        base,
        "sprocs",
        &json!({"id": "bulk", "body": BULK_IMPORT}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    let docs: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": format!("d{i:05}"), "pk": "bulk", "n": i}))
        .collect();
    let pk = json!("bulk");
    let mut done = 0usize;
    let mut calls = 0;
    let mut charges = 0.0;
    while done < docs.len() {
        calls += 1;
        assert!(calls <= 50, "no progress after {calls} calls ({done} in)");
        let rest = Value::Array(vec![Value::Array(docs[done..].to_vec())]);
        let r = execute(&c, base, "bulk", &pk, &rest, &[]).await;
        assert_eq!(r.status, 200, "{}", r.message());
        let inserted = r.json().as_u64().expect("a count") as usize;
        assert!(inserted > 0, "call {calls} inserted nothing");
        charges += r
            .header("x-ms-request-charge")
            .unwrap()
            .parse::<f64>()
            .unwrap();
        done += inserted;
    }
    assert_eq!(done, 10_000);
    assert!(
        calls > 1,
        "the budget should stop a call before 10,000 inserts (took {calls})"
    );
    assert_eq!(count_in(&c, base, "bulk").await, 10_000);
    // Each insert is charged as a write.
    assert!(charges >= 10_000.0 * 5.0, "charged {charges}");
    let r = c.read_item(base, "db", "c", "d09999", &pk, &[]).await;
    assert_eq!(r.json()["n"], 9999);
}

async fn a_procedure_that_throws_halfway_leaves_nothing_behind(builder: EmulatorBuilder) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint();
    let pk = json!("t");
    c.create_item(base, "db", "c", &json!({"id": "keep", "pk": "t", "v": 1}))
        .await;
    let body = r#"function (n) {
        var coll = getContext().getCollection();
        var link = coll.getAltLink();
        for (var i = 0; i < n; i++) {
            coll.createDocument(link, {id: 'new' + i, pk: 't'}, function (err) { if (err) throw err; });
        }
        coll.readDocument(link + '/docs/keep', function (err, doc) {
            if (err) throw err;
            doc.v = 2;
            coll.replaceDocument(doc._self, doc, function (err) {
                if (err) throw err;
                coll.queryDocuments(link, {query: 'SELECT VALUE COUNT(1) FROM c WHERE STARTSWITH(c.id, @p)', parameters: [{name: '@p', value: 'new'}]},
                    function (err, rows) {
                        if (err) throw err;
                        throw new Error('stopping after ' + rows[0] + ' inserts');
                    });
            });
        });
    }"#;
    assert_eq!(
        create_script(&c, base, "sprocs", &json!({"id": "half", "body": body}))
            .await
            .status,
        201
    );
    let r = execute(&c, base, "half", &pk, &json!([5]), &[]).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message().contains("stopping after 5 inserts"),
        "{}",
        r.message()
    );
    assert_eq!(count_in(&c, base, "t").await, 1);
    let kept = c.read_item(base, "db", "c", "keep", &pk, &[]).await;
    assert_eq!(kept.json()["v"], 1);
    assert_eq!(
        c.read_item(base, "db", "c", "new0", &pk, &[]).await.status,
        404
    );

    // The same work without the throw commits every write, at one LSN.
    let fine = body.replace(
        "throw new Error('stopping after ' + rows[0] + ' inserts');",
        "getContext().getResponse().setBody(rows[0]);",
    );
    assert_eq!(
        create_script(&c, base, "sprocs", &json!({"id": "whole", "body": fine}))
            .await
            .status,
        201
    );
    let r = execute(
        &c,
        base,
        "whole",
        &pk,
        &json!([5]),
        &[("x-ms-documentdb-script-enable-logging", "true")],
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json(), json!(5));
    assert_eq!(count_in(&c, base, "t").await, 6);
    assert_eq!(
        c.read_item(base, "db", "c", "keep", &pk, &[]).await.json()["v"],
        2
    );

    // A write to another partition key is refused inside the script.
    let other = r#"function () { var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'x', pk: 'elsewhere'}, function (err) { if (err) throw new Error('refused: ' + err.number); }); }"#;
    assert_eq!(
        create_script(&c, base, "sprocs", &json!({"id": "other", "body": other}))
            .await
            .status,
        201
    );
    let r = execute(&c, base, "other", &pk, &json!([]), &[]).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("refused: 400"), "{}", r.message());
    // Logging goes to the header only when asked for.
    let logs = r#"function () { console.log('The value of %s is %s.', 'x', 1); getContext().getResponse().setBody('Success!'); }"#;
    assert_eq!(
        create_script(&c, base, "sprocs", &json!({"id": "logs", "body": logs}))
            .await
            .status,
        201
    );
    let quiet = execute(&c, base, "logs", &pk, &json!([]), &[]).await;
    assert_eq!(quiet.json(), json!("Success!"));
    assert_eq!(quiet.header("x-ms-documentdb-script-log-results"), None);
    let loud = execute(
        &c,
        base,
        "logs",
        &pk,
        &json!([]),
        &[("x-ms-documentdb-script-enable-logging", "true")],
    )
    .await;
    assert_eq!(
        loud.header("x-ms-documentdb-script-log-results"),
        Some("The%20value%20of%20x%20is%201.")
    );
    // Missing procedure, missing partition key.
    assert_eq!(
        execute(&c, base, "nope", &pk, &json!([]), &[]).await.status,
        404
    );
    let r = c
        .send(
            base,
            Method::POST,
            &format!("{COLL}/sprocs/logs"),
            &[],
            Some(b"[]"),
        )
        .await;
    assert_eq!(r.status, 400);
}

async fn triggers_stamp_the_item_and_keep_a_metadata_document_in_the_same_transaction(
    builder: EmulatorBuilder,
) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint();
    let stamp = r#"function () {
        var item = getContext().getRequest().getBody();
        item.stamped = 'by-trigger';
        getContext().getRequest().setBody(item);
    }"#;
    let meta = r#"function () {
        var coll = getContext().getCollection();
        var created = getContext().getResponse().getBody();
        var link = coll.getAltLink() + '/docs/meta';
        var ok = coll.readDocument(link, {}, function (err, doc) {
            if (err && err.number !== 404) throw err;
            var m = err ? {id: 'meta', pk: created.pk, count: 0, last: null} : doc;
            m.count += 1;
            m.last = created.id;
            coll.upsertDocument(coll.getSelfLink(), m, function (err) { if (err) throw err; });
        });
        if (!ok) throw new Error('not accepted');
    }"#;
    let fail = r#"function () { throw new Error('post-trigger says no'); }"#;
    for def in [
        json!({"id": "stamp", "body": stamp, "triggerType": "Pre", "triggerOperation": "Create"}),
        json!({"id": "meta", "body": meta, "triggerType": "Post", "triggerOperation": "All"}),
        json!({"id": "fail", "body": fail, "triggerType": "Post", "triggerOperation": "All"}),
        json!({"id": "onDelete", "body": "function () {}", "triggerType": "Post", "triggerOperation": "Delete"}),
    ] {
        let r = create_script(&c, base, "triggers", &def).await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    let pk = json!("m");
    let docs = format!("{COLL}/docs");
    let both = [
        ("x-ms-documentdb-pre-trigger-include", "stamp"),
        ("x-ms-documentdb-post-trigger-include", "meta"),
    ];
    for id in ["a", "b"] {
        let r = c
            .send_with_pk(
                base,
                Method::POST,
                &docs,
                &pk,
                &both,
                Some(&json!({"id": id, "pk": "m"})),
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        assert_eq!(r.json()["stamped"], "by-trigger");
    }
    let stored = c.read_item(base, "db", "c", "b", &pk, &[]).await.json();
    assert_eq!(stored["stamped"], "by-trigger");
    let m = c.read_item(base, "db", "c", "meta", &pk, &[]).await.json();
    assert_eq!(
        (m["count"].clone(), m["last"].clone()),
        (json!(2), json!("b"))
    );

    // A post-trigger that throws fails the write: neither the item nor the metadata change.
    let failing = [
        ("x-ms-documentdb-pre-trigger-include", "stamp"),
        ("x-ms-documentdb-post-trigger-include", "meta,fail"),
    ];
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            &docs,
            &pk,
            &failing,
            Some(&json!({"id": "c", "pk": "m"})),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message().contains("post-trigger says no"),
        "{}",
        r.message()
    );
    assert_eq!(
        c.read_item(base, "db", "c", "c", &pk, &[]).await.status,
        404
    );
    assert_eq!(
        c.read_item(base, "db", "c", "meta", &pk, &[]).await.json()["count"],
        2
    );

    // A trigger must be registered for the operation and named where its type belongs.
    let wrong_op = [("x-ms-documentdb-post-trigger-include", "onDelete")];
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            &docs,
            &pk,
            &wrong_op,
            Some(&json!({"id": "d", "pk": "m"})),
        )
        .await;
    assert_eq!(r.status, 400);
    let wrong_type = [("x-ms-documentdb-pre-trigger-include", "meta")];
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            &docs,
            &pk,
            &wrong_type,
            Some(&json!({"id": "d", "pk": "m"})),
        )
        .await;
    assert_eq!(r.status, 400);
    let missing = [("x-ms-documentdb-pre-trigger-include", "ghost")];
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            &docs,
            &pk,
            &missing,
            Some(&json!({"id": "d", "pk": "m"})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        c.read_item(base, "db", "c", "d", &pk, &[]).await.status,
        404
    );

    // Replace and delete run the triggers named for them.
    let post_meta = [("x-ms-documentdb-post-trigger-include", "meta")];
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{docs}/a"),
            &pk,
            &post_meta,
            Some(&json!({"id": "a", "pk": "m", "v": 2})),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = c
        .send_with_pk(
            base,
            Method::DELETE,
            &format!("{docs}/b"),
            &pk,
            &[("x-ms-documentdb-post-trigger-include", "onDelete")],
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        c.read_item(base, "db", "c", "b", &pk, &[]).await.status,
        404
    );
    let m = c.read_item(base, "db", "c", "meta", &pk, &[]).await.json();
    assert_eq!(
        (m["count"].clone(), m["last"].clone()),
        (json!(3), json!("a"))
    );
}

async fn udfs_answer_in_cross_partition_queries(builder: EmulatorBuilder) {
    let (emu, c) = start_with_container(builder.partitions(4)).await;
    let base = emu.endpoint();
    let tax = json!({"id": "tax", "body": "function (price) { return Math.round(price * 1.2 * 100) / 100; }"});
    assert_eq!(create_script(&c, base, "udfs", &tax).await.status, 201);
    for i in 0..40 {
        let r = c
            .create_item(
                base,
                "db",
                "c",
                &json!({"id": format!("i{i}"), "pk": format!("k{}", i % 7), "price": i}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let q = json!({"query": "SELECT c.id, udf.tax(c.price) AS gross FROM c WHERE udf.tax(c.price) > @min", "parameters": [{"name": "@min", "value": 30}]});
    // The query plan the SDKs ask for first.
    let plan = c
        .query(base, &format!("{COLL}/docs"), &q, &[
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("x-ms-cosmos-supported-query-features", "Aggregate, CompositeAggregate, Distinct, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, GroupBy"),
        ])
        .await;
    assert_eq!(plan.status, 200, "{plan:?}");
    // Then every range, across pages.
    let mut rows = Vec::new();
    for range in ["0", "1", "2", "3"] {
        let mut continuation: Option<String> = None;
        loop {
            let mut headers = vec![
                ("x-ms-documentdb-partitionkeyrangeid", range),
                ("x-ms-max-item-count", "3"),
            ];
            if let Some(t) = &continuation {
                headers.push(("x-ms-continuation", t.as_str()));
            }
            let r = c.query(base, &format!("{COLL}/docs"), &q, &headers).await;
            assert_eq!(r.status, 200, "{}", r.message());
            rows.extend(r.json()["Documents"].as_array().unwrap().clone());
            continuation = r.header("x-ms-continuation").map(str::to_owned);
            if continuation.is_none() {
                break;
            }
        }
    }
    let mut got: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["gross"].as_f64().unwrap(),
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want: Vec<(String, f64)> = (0..40)
        .map(|i| (format!("i{i}"), (i as f64 * 1.2 * 100.0).round() / 100.0))
        .filter(|(_, g)| *g > 30.0)
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, want);
    // A UDF that throws, or one that does not exist, fails the query with its message.
    let boom = json!({"id": "boom", "body": "function () { throw new Error('udf failed'); }"});
    assert_eq!(create_script(&c, base, "udfs", &boom).await.status, 201);
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    let r = c
        .query(
            base,
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT VALUE udf.boom() FROM c"}),
            &cross,
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("udf failed"), "{}", r.message());
    let r = c
        .query(
            base,
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT VALUE udf.ghost(c.id) FROM c"}),
            &cross,
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("ghost"), "{}", r.message());
}

/// Starts `id` (which never ends on its own), and while it runs, reads an item of another
/// partition key: each read is answered, the script is stopped with `status`, and what it wrote
/// before it ran away is not kept.
async fn stopped_while_others_are_served(
    builder: EmulatorBuilder,
    id: &str,
    body: &str,
    status: u16,
    word: &str,
) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint().to_owned();
    assert_eq!(
        create_script(&c, &base, "sprocs", &json!({"id": id, "body": body}))
            .await
            .status,
        201
    );
    c.create_item(&base, "db", "c", &json!({"id": "other", "pk": "calm"}))
        .await;
    let runaway = {
        let (c, base, id) = (c.clone(), base.clone(), id.to_owned());
        tokio::spawn(async move { execute(&c, &base, &id, &json!("wild"), &json!([]), &[]).await })
    };
    // Reads of another partition key, in the same physical partition, while the script runs.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let read = tokio::time::timeout(
            Duration::from_secs(3),
            c.read_item(&base, "db", "c", "other", &json!("calm"), &[]),
        )
        .await
        .expect("a read was not answered while the script ran");
        assert_eq!(read.status, 200);
        assert!(
            !runaway.is_finished(),
            "the script ended before the reads were done"
        );
    }
    let r = runaway.await.unwrap();
    assert_eq!(r.status, status, "{r:?}");
    assert!(r.message().contains(word), "{}", r.message());
    assert_eq!(count_in(&c, &base, "wild").await, 0);
}

async fn an_endless_loop_is_stopped_with_a_timeout_while_reads_are_served(
    builder: EmulatorBuilder,
) {
    let body = r#"function () { var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'before', pk: 'wild'});
        while (true) {} }"#;
    stopped_while_others_are_served(builder, "loop", body, 408, "ran longer").await;
}

async fn unbounded_allocation_is_stopped_at_the_memory_cap_while_reads_are_served(
    builder: EmulatorBuilder,
) {
    // Allocates slowly enough that the reads run while it grows (about 8 KiB a step, the cap reached in about two seconds).
    let body = r#"function () { var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'before', pk: 'wild'});
        var hoard = [];
        var t = Date.now();
        while (true) {
            hoard.push(new Array(512).fill(hoard.length));
            while (Date.now() - t < hoard.length / 4) {}
        } }"#;
    stopped_while_others_are_served(builder, "hog", body, 400, "memory").await;
}

/// The emulator as its binary runs it: each script in a child process of the binary, killed at
/// its time limit.
fn in_processes() -> EmulatorBuilder {
    EmulatorBuilder::new().script_worker(env!("CARGO_BIN_EXE_cosmos-emulator"))
}

/// Each test twice: scripts on threads of the emulator's process (the embedded default) and in
/// child processes (the binary's default).
macro_rules! on_threads_and_in_processes {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn on_threads() {
                    super::$name(cosmos_emulator::EmulatorBuilder::new()).await
                }

                #[tokio::test]
                async fn in_processes() {
                    super::$name(super::in_processes()).await
                }
            }
        )*
    };
}

on_threads_and_in_processes!(
    scripts_are_created_read_replaced_listed_queried_and_deleted,
    a_bulk_import_continues_across_calls_until_every_document_is_in,
    a_procedure_that_throws_halfway_leaves_nothing_behind,
    triggers_stamp_the_item_and_keep_a_metadata_document_in_the_same_transaction,
    udfs_answer_in_cross_partition_queries,
    an_endless_loop_is_stopped_with_a_timeout_while_reads_are_served,
    unbounded_allocation_is_stopped_at_the_memory_cap_while_reads_are_served
);
