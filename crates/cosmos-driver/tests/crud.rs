//! Databases, containers and items over real HTTP against the embedded emulator.

use crate::common;

use cosmos_driver::{
    AttemptReason, CosmosOperation, DatabaseReference, OperationOptions, PartitionKeyDefinition,
    Precondition,
};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

#[tokio::test]
async fn databases_and_containers() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let o = OperationOptions::new();
    let db = DatabaseReference::new("crud-db").unwrap();
    let created = driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let again = driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap_err();
    assert!(again.is_conflict(), "{again}");
    let read = driver
        .execute(CosmosOperation::read_database(db.clone()), &o)
        .await
        .unwrap();
    assert_eq!(read.json::<Value>().unwrap()["id"], "crud-db");
    let list = driver
        .execute(CosmosOperation::list_databases(), &o)
        .await
        .unwrap();
    let dbs = list.json::<Value>().unwrap();
    assert!(
        dbs["Databases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["id"] == "crud-db"),
        "{dbs}"
    );

    let c = db.container("items").unwrap();
    let made = driver
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    let props = driver
        .execute(CosmosOperation::read_container(c.clone()), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert_eq!(props["partitionKey"]["paths"][0], "/pk");
    let colls = driver
        .execute(CosmosOperation::list_containers(db.clone()), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert_eq!(
        colls["DocumentCollections"].as_array().unwrap().len(),
        1,
        "{colls}"
    );
    let ranges = driver
        .execute(CosmosOperation::read_partition_key_ranges(c.clone()), &o)
        .await
        .unwrap();
    let ranges = ranges.json::<Value>().unwrap();
    assert!(
        !ranges["PartitionKeyRanges"].as_array().unwrap().is_empty(),
        "{ranges}"
    );

    driver
        .execute(CosmosOperation::delete_container(c.clone()), &o)
        .await
        .unwrap();
    let gone = driver
        .execute(CosmosOperation::read_container(c), &o)
        .await
        .unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    driver
        .execute(CosmosOperation::delete_database(db.clone()), &o)
        .await
        .unwrap();
    assert!(driver
        .execute(CosmosOperation::read_database(db), &o)
        .await
        .unwrap_err()
        .is_not_found());
}

#[tokio::test]
async fn items_create_read_replace_upsert_delete() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    let o = OperationOptions::new();

    let created = common::create_item(&driver, &c, "a", "p1", 1).await;
    assert_eq!(created.status(), 201);
    assert!(created.etag().is_some());
    assert!(created.session_token().is_some());
    assert!(created.request_charge() > 0.0);
    assert!(created.activity_id().is_some());

    let read = driver
        .execute(common::read(&c, "a", "p1"), &o)
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    let doc: Value = read.json().unwrap();
    assert_eq!(doc["n"], 1);
    assert_eq!(read.etag(), doc["_etag"].as_str());
    assert!(read.partition_key_range_id().is_some());
    let d = read.diagnostics();
    assert_eq!(d.requests().len(), 1);
    assert_eq!(d.requests()[0].reason(), AttemptReason::FirstAttempt);
    assert_eq!(d.requests()[0].status().unwrap().status, 200);
    assert_eq!(d.request_charge(), read.request_charge());
    let json: Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(json["requests"][0]["region"], "East US");

    let replace = CosmosOperation::replace_item(c.item("a").unwrap())
        .with_partition_key("p1")
        .with_json_body(&json!({"id": "a", "pk": "p1", "n": 2}))
        .unwrap();
    assert_eq!(driver.execute(replace, &o).await.unwrap().status(), 200);

    let upsert = |n: i64| {
        CosmosOperation::upsert_item(c.clone())
            .with_partition_key("p1")
            .with_json_body(&json!({"id": "b", "pk": "p1", "n": n}))
            .unwrap()
    };
    assert_eq!(driver.execute(upsert(1), &o).await.unwrap().status(), 201);
    assert_eq!(driver.execute(upsert(2), &o).await.unwrap().status(), 200);

    let minimal = OperationOptions::new().with_content_response_on_write(false);
    let quiet = driver.execute(upsert(3), &minimal).await.unwrap();
    assert!(
        quiet.body().is_empty(),
        "Prefer: return=minimal suppresses the body"
    );

    let feed = driver
        .execute(CosmosOperation::read_all_items(c.clone()), &o)
        .await
        .unwrap();
    let docs = feed.json::<Value>().unwrap();
    assert_eq!(docs["Documents"].as_array().unwrap().len(), 2, "{docs}");

    let del = driver
        .execute(
            CosmosOperation::delete_item(c.item("a").unwrap()).with_partition_key("p1"),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(del.status(), 204);
    let missing = driver
        .execute(common::read(&c, "a", "p1"), &o)
        .await
        .unwrap_err();
    assert!(
        missing.is_not_found() && missing.sub_status() == Some(0),
        "{missing}"
    );
    assert_eq!(
        missing.diagnostics().requests().len(),
        1,
        "a plain 404 is not retried"
    );
    let wrong_pk = driver
        .execute(common::read(&c, "b", "other"), &o)
        .await
        .unwrap_err();
    assert!(wrong_pk.is_not_found());
    let dup = driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p1")
                .with_json_body(&json!({"id": "b", "pk": "p1"}))
                .unwrap(),
            &o,
        )
        .await
        .unwrap_err();
    assert!(dup.is_conflict(), "{dup}");
}

#[tokio::test]
async fn preconditions_412_and_304() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    let o = OperationOptions::new();
    let etag = common::create_item(&driver, &c, "a", "p", 1)
        .await
        .etag()
        .unwrap()
        .to_string();

    let not_modified = driver
        .execute(
            common::read(&c, "a", "p").with_precondition(Precondition::IfNoneMatch(etag.clone())),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(not_modified.status(), 304);
    assert!(not_modified.body().is_empty());

    let replace = |etag: &str, n: i64| {
        CosmosOperation::replace_item(c.item("a").unwrap())
            .with_partition_key("p")
            .with_json_body(&json!({"id": "a", "pk": "p", "n": n}))
            .unwrap()
            .with_precondition(Precondition::IfMatch(etag.to_string()))
    };
    let ok = driver.execute(replace(&etag, 2), &o).await.unwrap();
    let new_etag = ok.etag().unwrap().to_string();
    assert_ne!(new_etag, etag);
    let stale = driver.execute(replace(&etag, 3), &o).await.unwrap_err();
    assert!(stale.is_precondition_failed(), "{stale}");
    assert_eq!(
        stale.diagnostics().requests().len(),
        1,
        "412 is never retried"
    );
    assert!(stale.headers().is_some());

    let fresh = driver
        .execute(
            common::read(&c, "a", "p").with_precondition(Precondition::IfNoneMatch(etag)),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(fresh.status(), 200, "a changed item is returned");

    let exists = driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_json_body(&json!({"id": "a", "pk": "p"}))
                .unwrap()
                .with_precondition(Precondition::IfNoneMatch("*".into())),
            &o,
        )
        .await
        .unwrap_err();
    assert!(
        exists.is_conflict() || exists.is_precondition_failed(),
        "{exists}"
    );
}
