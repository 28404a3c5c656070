//! Throughput and container settings through the typed handles against the embedded emulator over
//! real HTTP: manual and autoscale throughput of containers and databases replaced and read back,
//! the service's refusals (a switch between manual and autoscale, a container without its own
//! offer), container settings (indexing policy, default TTL) replaced and read back with unique
//! keys and the partition key fixed, and the database and container feeds as typed streams.

use crate::common;

use cosmos_driver::resources::{
    ContainerProperties, IndexPath, IndexingMode, IndexingPolicy, ThroughputProperties,
};
use cosmos_driver::PartitionKeyDefinition;
use cosmos_driver::{CosmosDriver, CosmosOperation, DatabaseReference, OperationOptions};
use cosmos_emulator::EmulatorBuilder;
use futures::TryStreamExt;
use serde_json::Map;

async fn setup() -> (cosmos_emulator::Emulator, CosmosDriver) {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    (emu, driver)
}

async fn create_database(
    driver: &CosmosDriver,
    id: &str,
    throughput: Option<ThroughputProperties>,
) {
    let mut op = CosmosOperation::create_database(DatabaseReference::new(id).unwrap());
    if let Some(t) = throughput {
        let (name, value) = t.create_header();
        op = op.with_header(name, value);
    }
    driver
        .execute(op, &OperationOptions::new())
        .await
        .expect("create database");
}

fn pk() -> PartitionKeyDefinition {
    PartitionKeyDefinition::new("/pk").unwrap()
}

#[tokio::test]
async fn container_throughput_replace_is_visible_to_later_reads() {
    let (_emu, driver) = setup().await;
    create_database(&driver, "db", None).await;
    let db = driver.database("db");
    db.create_container(
        &ContainerProperties::new("manual", &pk()),
        Some(ThroughputProperties::manual(500)),
    )
    .await
    .expect("create manual");
    db.create_container(
        &ContainerProperties::new("auto", &pk()),
        Some(ThroughputProperties::autoscale(4000)),
    )
    .await
    .expect("create autoscale");

    let manual = db.container("manual");
    let read = manual.read_throughput().await.unwrap();
    assert_eq!(read.throughput(), ThroughputProperties::manual(500));
    let replaced = manual
        .replace_throughput(ThroughputProperties::manual(1200))
        .await
        .unwrap();
    assert_eq!(replaced.throughput(), ThroughputProperties::manual(1200));
    assert_eq!(replaced.offer_id(), read.offer_id());
    let again = manual.read_throughput().await.unwrap();
    assert_eq!(again.throughput(), ThroughputProperties::manual(1200));
    assert_eq!(again.current_throughput(), Some(1200));

    let auto = driver.container("db", "auto");
    assert_eq!(
        auto.read_throughput().await.unwrap().throughput(),
        ThroughputProperties::autoscale(4000)
    );
    auto.replace_throughput(ThroughputProperties::autoscale(9000))
        .await
        .unwrap();
    let again = auto.read_throughput().await.unwrap();
    assert_eq!(again.throughput().autoscale_max_throughput(), Some(9000));
    assert_eq!(again.current_throughput(), Some(900));

    // The service keeps manual manual and autoscale autoscale; out-of-range values are refused.
    let switch = manual
        .replace_throughput(ThroughputProperties::autoscale(4000))
        .await
        .unwrap_err();
    assert!(switch.is_bad_request(), "{switch}");
    let switch = auto
        .replace_throughput(ThroughputProperties::manual(400))
        .await
        .unwrap_err();
    assert!(switch.is_bad_request(), "{switch}");
    let low = manual
        .replace_throughput(ThroughputProperties::manual(350))
        .await
        .unwrap_err();
    assert!(low.is_bad_request(), "{low}");
    assert_eq!(
        manual.read_throughput().await.unwrap().throughput(),
        ThroughputProperties::manual(1200),
        "refused replaces change nothing"
    );
    // A container that does not exist is a 404 before any offer is looked for.
    let missing = driver
        .container("db", "nope")
        .read_throughput()
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

#[tokio::test]
async fn database_throughput_manual_and_autoscale() {
    let (_emu, driver) = setup().await;
    create_database(&driver, "shared", Some(ThroughputProperties::manual(1000))).await;
    create_database(
        &driver,
        "shared-auto",
        Some(ThroughputProperties::autoscale(5000)),
    )
    .await;
    create_database(&driver, "plain", None).await;

    let shared = driver.database("shared");
    assert_eq!(
        shared.read_throughput().await.unwrap().throughput(),
        ThroughputProperties::manual(1000)
    );
    shared
        .replace_throughput(ThroughputProperties::manual(2000))
        .await
        .unwrap();
    assert_eq!(
        shared.read_throughput().await.unwrap().throughput(),
        ThroughputProperties::manual(2000)
    );
    // A container in a database with shared throughput has no offer of its own.
    shared
        .create_container(&ContainerProperties::new("inner", &pk()), None)
        .await
        .unwrap();
    let none = shared
        .container("inner")
        .read_throughput()
        .await
        .unwrap_err();
    assert!(none.is_not_found(), "{none}");
    assert!(
        none.message().contains("no throughput of its own"),
        "{none}"
    );

    let auto = driver.database("shared-auto");
    auto.replace_throughput(ThroughputProperties::autoscale(8000))
        .await
        .unwrap();
    assert_eq!(
        auto.read_throughput().await.unwrap().throughput(),
        ThroughputProperties::autoscale(8000)
    );
    let plain = driver
        .database("plain")
        .read_throughput()
        .await
        .unwrap_err();
    assert!(plain.is_not_found(), "{plain}");
}

#[tokio::test]
async fn container_settings_replace_round_trip() {
    let (_emu, driver) = setup().await;
    create_database(&driver, "db", None).await;
    let db = driver.database("db");
    let created = db
        .create_container(
            &ContainerProperties::new("users", &pk())
                .with_unique_key(["/email"])
                .with_default_ttl(Some(3600)),
            None,
        )
        .await
        .unwrap()
        .into_properties();
    assert_eq!(created.default_ttl, Some(3600));

    let users = db.container("users");
    let mut props = users.read_properties().await.unwrap().into_properties();
    assert_eq!(props.unique_key_policy, created.unique_key_policy);
    props.default_ttl = Some(-1);
    props.indexing_policy = Some(IndexingPolicy {
        indexing_mode: Some(IndexingMode::Consistent),
        automatic: Some(true),
        included_paths: vec![IndexPath {
            path: "/email/?".into(),
            other: Map::new(),
        }],
        excluded_paths: vec![IndexPath {
            path: "/*".into(),
            other: Map::new(),
        }],
        ..IndexingPolicy::default()
    });
    let replaced = users.replace_properties(&props).await.unwrap();
    assert_ne!(replaced.properties().etag(), created.etag());
    let back = users.read_properties().await.unwrap().into_properties();
    assert_eq!(back.default_ttl, Some(-1));
    let policy = back.indexing_policy.clone().unwrap();
    assert_eq!(policy.included_paths[0].path, "/email/?");
    assert_eq!(policy.excluded_paths[0].path, "/*");
    assert_eq!(back.resource_id(), created.resource_id());

    // Turning the default TTL off again: absent in the definition.
    let mut off = back.clone();
    off.default_ttl = None;
    users.replace_properties(&off).await.unwrap();
    assert_eq!(
        users
            .read_properties()
            .await
            .unwrap()
            .properties()
            .default_ttl,
        None
    );

    // Unique keys and the partition key are fixed; a bad TTL is refused before sending.
    let mut keys = back.clone();
    keys.unique_key_policy = None;
    let e = users
        .replace_properties(&keys.with_unique_key(["/name"]))
        .await
        .unwrap_err();
    assert!(
        e.is_bad_request() && e.message().contains("unique key"),
        "{e}"
    );
    let mut moved = back.clone();
    moved.partition_key.paths = vec!["/other".into()];
    let e = users.replace_properties(&moved).await.unwrap_err();
    assert!(e.is_bad_request(), "{e}");
    let e = users
        .replace_properties(&back.clone().with_default_ttl(Some(0)))
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let mut renamed = back.clone();
    renamed.id = "someone-else".into();
    let e = users.replace_properties(&renamed).await.unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
}

#[tokio::test]
async fn databases_and_containers_read_as_typed_streams() {
    let (_emu, driver) = setup().await;
    for db in ["a", "b", "c"] {
        create_database(&driver, db, None).await;
    }
    let db = driver.database("b");
    for i in 0..5 {
        db.create_container(&ContainerProperties::new(format!("c{i}"), &pk()), None)
            .await
            .unwrap();
    }
    let mut ids: Vec<String> = driver
        .databases()
        .map_ok(|d| d.id)
        .try_collect()
        .await
        .unwrap();
    ids.sort();
    assert_eq!(ids, ["a", "b", "c"]);
    let containers: Vec<ContainerProperties> = db.containers().try_collect().await.unwrap();
    let mut names: Vec<&str> = containers.iter().map(|c| c.id.as_str()).collect();
    names.sort();
    assert_eq!(names, ["c0", "c1", "c2", "c3", "c4"]);
    assert!(containers.iter().all(|c| c.partition_key.paths == ["/pk"]));
    let empty: Vec<ContainerProperties> = driver
        .database("a")
        .containers()
        .try_collect()
        .await
        .unwrap();
    assert!(empty.is_empty());
    let missing: Result<Vec<_>, _> = driver.database("nope").containers().try_collect().await;
    assert!(missing.unwrap_err().is_not_found());
}
