//! `container.scripts()` against the embedded emulator: CRUD of stored procedures, triggers and
//! UDFs; a bulk import that continues across calls; a procedure that throws and leaves nothing; the
//! script log; pre- and post-triggers named on item options; a UDF in a cross-partition query;
//! execution sent once, to the write region, never hedged.

use crate::hedging::support;

use crate::common;

use cosmos_driver::query::{Query, QueryScope};
use cosmos_driver::{
    ContainerClient, ExecuteOptions, ItemOptions, StoredProcedureProperties, TriggerOperation,
    TriggerProperties, TriggerType, UserDefinedFunctionProperties,
};
use cosmos_emulator::faults::{FaultRule, Reaction};
use cosmos_emulator::EmulatorBuilder;
use futures::StreamExt;
use serde_json::{json, Value};

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

async fn setup(builder: EmulatorBuilder) -> (cosmos_emulator::Emulator, ContainerClient) {
    let emu = common::start(builder).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    (emu, c)
}

async fn count(c: &ContainerClient, pk: &str) -> u64 {
    let mut rows = c.query_items::<u64>(
        Query::new("SELECT VALUE COUNT(1) FROM c"),
        QueryScope::PartitionKey(pk.into()),
    );
    rows.next()
        .await
        .expect("a count")
        .expect("the count query")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_is_created_read_replaced_listed_and_deleted() {
    let (_emu, c) = setup(EmulatorBuilder::new()).await;
    let s = c.scripts();

    let sproc = StoredProcedureProperties::new("s1", "function () { var x = 1; }");
    let made = s.create_stored_procedure(&sproc).await.unwrap();
    assert_eq!(made.status(), 201);
    let made = made.into_item().unwrap();
    assert_eq!(
        (made.id.as_str(), made.body.as_str()),
        ("s1", sproc.body.as_str())
    );
    assert!(made.etag.is_some() && made.rid.is_some());
    assert!(s
        .create_stored_procedure(&sproc)
        .await
        .unwrap_err()
        .is_conflict());
    let replaced = StoredProcedureProperties::new("s1", "function () { var x = 2; }");
    s.replace_stored_procedure(&replaced).await.unwrap();
    let read = s
        .read_stored_procedure("s1")
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(read.body, replaced.body);

    let trigger = TriggerProperties::new(
        "t1",
        "function () {}",
        TriggerType::Post,
        TriggerOperation::Delete,
    );
    s.create_trigger(&trigger).await.unwrap();
    let t = s.read_trigger("t1").await.unwrap().into_item().unwrap();
    assert_eq!(
        (t.trigger_type, t.trigger_operation),
        (TriggerType::Post, TriggerOperation::Delete)
    );
    let mut pre = trigger.clone();
    pre.trigger_type = TriggerType::Pre;
    s.replace_trigger(&pre).await.unwrap();
    assert_eq!(
        s.read_trigger("t1")
            .await
            .unwrap()
            .into_item()
            .unwrap()
            .trigger_type,
        TriggerType::Pre
    );

    let udf = UserDefinedFunctionProperties::new("u1", "function (x) { return x; }");
    s.create_user_defined_function(&udf).await.unwrap();
    s.replace_user_defined_function(&UserDefinedFunctionProperties::new(
        "u1",
        "function (x) { return x + 1; }",
    ))
    .await
    .unwrap();

    let sprocs: Vec<_> = s.stored_procedures().map(|r| r.unwrap().id).collect().await;
    let triggers: Vec<_> = s.triggers().map(|r| r.unwrap().id).collect().await;
    let udfs: Vec<_> = s
        .user_defined_functions()
        .map(|r| r.unwrap().body)
        .collect()
        .await;
    assert_eq!(
        (sprocs, triggers),
        (vec!["s1".to_string()], vec!["t1".to_string()])
    );
    assert_eq!(udfs, ["function (x) { return x + 1; }"]);

    s.delete_stored_procedure("s1").await.unwrap();
    s.delete_trigger("t1").await.unwrap();
    s.delete_user_defined_function("u1").await.unwrap();
    assert!(s
        .read_stored_procedure("s1")
        .await
        .unwrap_err()
        .is_not_found());
    assert!(s.read_trigger("t1").await.unwrap_err().is_not_found());
    assert!(s
        .read_user_defined_function("u1")
        .await
        .unwrap_err()
        .is_not_found());
    assert!(s
        .delete_stored_procedure("s1")
        .await
        .unwrap_err()
        .is_not_found());
    assert!(s
        .create_stored_procedure(&StoredProcedureProperties::new("a/b", "function () {}"))
        .await
        .unwrap_err()
        .is_invalid_input());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_import_inserts_ten_thousand_documents_across_calls() {
    let (_emu, c) = setup(EmulatorBuilder::new()).await;
    let s = c.scripts();
    s.create_stored_procedure(&StoredProcedureProperties::new("bulk", BULK_IMPORT))
        .await
        .unwrap();
    let docs: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": format!("d{i:05}"), "pk": "bulk", "n": i}))
        .collect();
    let (mut done, mut calls, mut charge) = (0usize, 0, 0.0);
    while done < docs.len() {
        calls += 1;
        assert!(calls <= 50, "no progress after {calls} calls ({done} in)");
        let r = s
            .execute_stored_procedure::<usize>("bulk", "bulk", &[&docs[done..]])
            .await
            .unwrap();
        assert!(*r.result() > 0, "call {calls} inserted nothing");
        charge += r.request_charge();
        done += r.into_result();
    }
    assert_eq!(done, 10_000);
    assert!(
        calls > 1,
        "the execution budget stops a call before 10,000 inserts"
    );
    assert!(charge >= 10_000.0, "each insert is charged: {charge}");
    assert_eq!(count(&c, "bulk").await, 10_000);
    let last = c.read_item::<Value>("bulk", "d09999", None).await.unwrap();
    assert_eq!(last.into_item().unwrap()["n"], 9999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_that_throws_leaves_nothing_and_the_log_comes_back_when_asked() {
    let (_emu, c) = setup(EmulatorBuilder::new()).await;
    let s = c.scripts();
    let half = r#"function (prefix, n, fail) {
        var coll = getContext().getCollection();
        for (var i = 0; i < n; i++) {
            coll.createDocument(coll.getSelfLink(), {id: prefix + i, pk: 't'}, function (err) { if (err) throw err; });
        }
        console.log('created ' + n);
        if (fail) throw new Error('stopping after ' + n + ' inserts');
        getContext().getResponse().setBody({created: n});
    }"#;
    s.create_stored_procedure(&StoredProcedureProperties::new("half", half))
        .await
        .unwrap();
    let e = s
        .execute_stored_procedure::<Value>("half", "t", &json!(["a", 5, true]))
        .await
        .unwrap_err();
    assert!(e.is_bad_request(), "{e}");
    assert!(
        e.message().contains("stopping after 5 inserts"),
        "{}",
        e.message()
    );
    assert_eq!(
        count(&c, "t").await,
        0,
        "nothing of a failed execution persists"
    );

    let quiet = s
        .execute_stored_procedure::<Value>("half", "t", &json!(["b", 2, false]))
        .await
        .unwrap();
    assert_eq!(quiet.result(), &json!({"created": 2}));
    assert_eq!(quiet.script_log(), None);
    assert!(quiet.request_charge() > 0.0);
    assert!(!quiet.diagnostics().requests().is_empty());
    let loud = s
        .execute_stored_procedure_with::<Value>(
            "half",
            "t",
            &json!(["c", 1, false]),
            &ExecuteOptions::new().with_script_logging(true),
        )
        .await
        .unwrap();
    assert_eq!(loud.script_log(), Some("created 1"));
    assert_eq!(count(&c, "t").await, 3);

    assert!(s
        .execute_stored_procedure::<Value>("ghost", "t", &json!([]))
        .await
        .unwrap_err()
        .is_not_found());
    let e = s
        .execute_stored_procedure::<Value>("half", "t", &json!({"n": 1}))
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "refused before sending: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triggers_named_on_item_options_run_inside_the_write() {
    let (_emu, c) = setup(EmulatorBuilder::new()).await;
    let s = c.scripts();
    let stamp = r#"function () {
        var item = getContext().getRequest().getBody();
        item.stamped = 'by-trigger';
        getContext().getRequest().setBody(item);
    }"#;
    let meta = r#"function () {
        var coll = getContext().getCollection();
        var created = getContext().getResponse().getBody();
        coll.readDocument(coll.getAltLink() + '/docs/meta', {}, function (err, doc) {
            if (err && err.number !== 404) throw err;
            var m = err ? {id: 'meta', pk: created.pk, count: 0, last: null} : doc;
            m.count += 1;
            m.last = created.id;
            coll.upsertDocument(coll.getSelfLink(), m, function (err) { if (err) throw err; });
        });
    }"#;
    for t in [
        TriggerProperties::new("stamp", stamp, TriggerType::Pre, TriggerOperation::Create),
        TriggerProperties::new("meta", meta, TriggerType::Post, TriggerOperation::All),
        TriggerProperties::new(
            "fail",
            "function () { throw new Error('post-trigger says no'); }",
            TriggerType::Post,
            TriggerOperation::All,
        ),
    ] {
        s.create_trigger(&t).await.unwrap();
    }
    let both = || {
        ItemOptions::new()
            .with_pre_triggers(["stamp"])
            .with_post_triggers(["meta"])
    };
    for id in ["a", "b"] {
        let r = c
            .create_item("m", &json!({"id": id, "pk": "m"}), Some(both()))
            .await
            .unwrap();
        assert_eq!(r.item().unwrap()["stamped"], "by-trigger");
    }
    let m = c
        .read_item::<Value>("m", "meta", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(
        (m["count"].clone(), m["last"].clone()),
        (json!(2), json!("b"))
    );

    let failing = ItemOptions::new()
        .with_pre_triggers(["stamp"])
        .with_post_triggers(["meta", "fail"]);
    let e = c
        .create_item("m", &json!({"id": "c", "pk": "m"}), Some(failing))
        .await
        .unwrap_err();
    assert!(
        e.message().contains("post-trigger says no"),
        "{}",
        e.message()
    );
    assert!(c
        .read_item::<Value>("m", "c", None)
        .await
        .unwrap_err()
        .is_not_found());
    let m = c
        .read_item::<Value>("m", "meta", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(
        m["count"], 2,
        "the failed write left the metadata as it was"
    );
    // Without the options, no trigger runs.
    let plain = c
        .create_item("m", &json!({"id": "d", "pk": "m"}), None)
        .await
        .unwrap();
    assert!(plain.item().unwrap().get("stamped").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_udf_answers_in_a_cross_partition_query() {
    let (_emu, c) = setup(EmulatorBuilder::new().partitions(4)).await;
    c.scripts()
        .create_user_defined_function(&UserDefinedFunctionProperties::new(
            "tax",
            "function (price) { return Math.round(price * 1.2 * 100) / 100; }",
        ))
        .await
        .unwrap();
    for i in 0..40 {
        c.create_item(
            format!("k{}", i % 7).as_str(),
            &json!({"id": format!("i{i}"), "pk": format!("k{}", i % 7), "price": i}),
            None,
        )
        .await
        .unwrap();
    }
    let query =
        Query::new("SELECT c.id, udf.tax(c.price) AS gross FROM c WHERE udf.tax(c.price) > @min")
            .with_parameter("@min", 30)
            .unwrap();
    let rows: Vec<Value> = c
        .query_items::<Value>(query, QueryScope::CrossPartition)
        .map(|r| r.unwrap())
        .collect()
        .await;
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execution_with_a_slow_write_region_is_sent_once_and_never_hedged() {
    let s = support::Setup::three_regions(20).await;
    let c = s.driver.container(s.c.database().id(), s.c.id());
    c.scripts()
        .create_stored_procedure(&StoredProcedureProperties::new(
            "one",
            "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'once', pk: 'p'}, function (e) { if (e) throw e; }); getContext().getResponse().setBody('ok'); }",
        ))
        .await
        .unwrap();
    // Every request to the write region now takes 200 ms, far past the 20 ms hedging threshold.
    let _slow = s
        .emu
        .faults()
        .add(FaultRule::new(Reaction::delay_ms(200)).in_regions([support::EAST]));
    let r = c
        .scripts()
        .execute_stored_procedure::<String>("one", "p", &json!([]))
        .await
        .unwrap();
    assert_eq!(r.result(), "ok");
    assert!(
        r.diagnostics().hedge().is_none(),
        "a stored procedure is never hedged"
    );
    assert_eq!(
        common::regions_of(r.diagnostics()),
        [support::EAST],
        "one request, to the write region"
    );
    let item = c.read_item::<Value>("p", "once", None).await.unwrap();
    assert_eq!(item.into_item().unwrap()["id"], "once");
}
