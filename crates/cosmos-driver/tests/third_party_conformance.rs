//! The driver's wire format checked by a server nobody here wrote (`@vercel/cosmosdb-server`, see
//! `tests/conformance/third-party/run.sh`). Runs when `COSMOS_PEER_ENDPOINT` names the server;
//! otherwise each test says why it is skipped and passes.

use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosOperation, Credential, DatabaseReference,
    DriverOptions, OperationOptions, PartitionKeyDefinition, Precondition,
};
use serde_json::{json, Value};

/// The well-known emulator key; the peer server does not check signatures, the driver still signs.
const KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

async fn peer() -> Option<CosmosDriver> {
    let Ok(endpoint) = std::env::var("COSMOS_PEER_ENDPOINT") else {
        eprintln!("skipped: COSMOS_PEER_ENDPOINT is not set (tests/conformance/third-party/run.sh sets it)");
        return None;
    };
    let options = DriverOptions::new(endpoint, Credential::master_key(KEY).unwrap());
    Some(
        CosmosDriver::new(options)
            .await
            .expect("the driver reads the peer's account"),
    )
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{:08x}", rand_suffix())
}

fn rand_suffix() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos ^ std::process::id().rotate_left(16)
}

async fn setup(driver: &CosmosDriver) -> ContainerReference {
    let db = DatabaseReference::new(unique("conf")).unwrap();
    let o = OperationOptions::new();
    assert_eq!(
        driver
            .execute(CosmosOperation::create_database(db.clone()), &o)
            .await
            .unwrap()
            .status(),
        201
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
    c
}

fn create(c: &ContainerReference, doc: Value) -> CosmosOperation {
    let pk = doc["pk"].as_str().unwrap_or_default().to_string();
    CosmosOperation::create_item(c.clone())
        .with_partition_key(pk)
        .with_json_body(&doc)
        .unwrap()
}

#[tokio::test]
async fn databases_containers_and_items() {
    let Some(driver) = peer().await else { return };
    let o = OperationOptions::new();
    let c = setup(&driver).await;
    let db = c.database().clone();

    let list = driver
        .execute(CosmosOperation::list_databases(), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert!(
        list["Databases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["id"] == db.id()),
        "{list}"
    );
    let read_db = driver
        .execute(CosmosOperation::read_database(db.clone()), &o)
        .await
        .unwrap();
    assert_eq!(read_db.json::<Value>().unwrap()["id"], db.id());
    let colls = driver
        .execute(CosmosOperation::list_containers(db.clone()), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert_eq!(colls["DocumentCollections"][0]["id"], "items");
    let props = driver
        .execute(CosmosOperation::read_container(c.clone()), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert_eq!(props["partitionKey"]["paths"][0], "/pk");
    let ranges = driver
        .execute(CosmosOperation::read_partition_key_ranges(c.clone()), &o)
        .await
        .unwrap();
    assert!(!ranges.json::<Value>().unwrap()["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .is_empty());

    let created = driver
        .execute(create(&c, json!({"id": "a b", "pk": "p", "n": 1})), &o)
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let read = driver
        .execute(
            CosmosOperation::read_item(c.item("a b").unwrap()).with_partition_key("p"),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(
        read.json::<Value>().unwrap()["n"],
        1,
        "ids with spaces survive percent-encoding"
    );
    let replace = CosmosOperation::replace_item(c.item("a b").unwrap())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a b", "pk": "p", "n": 2}))
        .unwrap();
    assert_eq!(
        driver
            .execute(replace, &o)
            .await
            .unwrap()
            .json::<Value>()
            .unwrap()["n"],
        2
    );
    let upsert = CosmosOperation::upsert_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "u", "pk": "p"}))
        .unwrap();
    assert_eq!(
        driver.execute(upsert.clone(), &o).await.unwrap().status(),
        201
    );
    assert_eq!(driver.execute(upsert, &o).await.unwrap().status(), 200);
    let feed = driver
        .execute(CosmosOperation::read_all_items(c.clone()), &o)
        .await
        .unwrap()
        .json::<Value>()
        .unwrap();
    assert_eq!(feed["Documents"].as_array().unwrap().len(), 2, "{feed}");
    let del = driver
        .execute(
            CosmosOperation::delete_item(c.item("u").unwrap()).with_partition_key("p"),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(del.status(), 204);

    driver
        .execute(CosmosOperation::delete_container(c.clone()), &o)
        .await
        .unwrap();
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
async fn preconditions() {
    let Some(driver) = peer().await else { return };
    let o = OperationOptions::new();
    let c = setup(&driver).await;
    let etag = driver
        .execute(create(&c, json!({"id": "x", "pk": "p", "n": 1})), &o)
        .await
        .unwrap()
        .etag()
        .unwrap()
        .to_string();
    let replace = |etag: &str, n: i64| {
        CosmosOperation::replace_item(c.item("x").unwrap())
            .with_partition_key("p")
            .with_json_body(&json!({"id": "x", "pk": "p", "n": n}))
            .unwrap()
            .with_precondition(Precondition::IfMatch(etag.to_string()))
    };
    let ok = driver.execute(replace(&etag, 2), &o).await.unwrap();
    assert_ne!(ok.etag().unwrap(), etag);
    let stale = driver.execute(replace(&etag, 3), &o).await.unwrap_err();
    assert!(stale.is_precondition_failed(), "{stale}");
    let stale_delete = CosmosOperation::delete_item(c.item("x").unwrap())
        .with_partition_key("p")
        .with_precondition(Precondition::IfMatch(etag));
    assert!(driver
        .execute(stale_delete, &o)
        .await
        .unwrap_err()
        .is_precondition_failed());
    let current = driver
        .execute(
            CosmosOperation::read_item(c.item("x").unwrap()).with_partition_key("p"),
            &o,
        )
        .await
        .unwrap();
    assert_eq!(
        current.json::<Value>().unwrap()["n"],
        2,
        "failed preconditions changed nothing"
    );
}

#[tokio::test]
async fn errors() {
    let Some(driver) = peer().await else { return };
    let o = OperationOptions::new();
    let c = setup(&driver).await;
    driver
        .execute(create(&c, json!({"id": "dup", "pk": "p"})), &o)
        .await
        .unwrap();
    let conflict = driver
        .execute(create(&c, json!({"id": "dup", "pk": "p"})), &o)
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    assert!(conflict.body().is_some());
    let missing = driver
        .execute(
            CosmosOperation::read_item(c.item("nope").unwrap()).with_partition_key("p"),
            &o,
        )
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert_eq!(missing.diagnostics().requests().len(), 1);
    let no_db = DatabaseReference::new(unique("missing")).unwrap();
    assert!(driver
        .execute(CosmosOperation::read_database(no_db), &o)
        .await
        .unwrap_err()
        .is_not_found());
    let dup_db = c.database().clone();
    assert!(driver
        .execute(CosmosOperation::create_database(dup_db), &o)
        .await
        .unwrap_err()
        .is_conflict());
}
