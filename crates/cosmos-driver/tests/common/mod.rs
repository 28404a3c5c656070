//! Shared setup for the integration tests: an embedded emulator and a driver pointed at it.
#![allow(dead_code)]

use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosOperation, Credential, DatabaseReference,
    DriverOptions, OperationOptions, PartitionKeyDefinition,
};
use cosmos_emulator::{Emulator, EmulatorBuilder, SessionWait};
use serde_json::json;

/// Starts an emulator from `builder`. A read ahead of a lagging replica answers 404/1002 at once
/// (no session wait): these tests drive the driver's own handling of 1002 (hub retry, hedging,
/// session routing), which the service's gateway wait would otherwise hide.
pub async fn start(builder: EmulatorBuilder) -> Emulator {
    builder
        .session_wait(SessionWait::OFF)
        .start()
        .await
        .expect("the emulator starts")
}

/// Driver options for `emu`'s global endpoint and key.
pub fn options(emu: &Emulator) -> DriverOptions {
    let mut o = DriverOptions::new(
        emu.endpoint(),
        Credential::master_key(emu.key()).expect("valid key"),
    );
    if let Some(pem) = emu.tls_cert_pem() {
        o = o.with_extra_trusted_cert_pem(pem.as_bytes().to_vec());
    }
    o
}

/// A driver for `emu` built from `options`.
pub async fn driver(options: DriverOptions) -> CosmosDriver {
    CosmosDriver::new(options)
        .await
        .expect("the driver connects")
}

/// Creates database `db` and container `c` partitioned on `/pk`.
pub async fn container(driver: &CosmosDriver, db: &str, c: &str) -> ContainerReference {
    let dbr = DatabaseReference::new(db).unwrap();
    driver
        .execute(
            CosmosOperation::create_database(dbr.clone()),
            &OperationOptions::new(),
        )
        .await
        .expect("create database");
    let cr = dbr.container(c).unwrap();
    driver
        .execute(
            CosmosOperation::create_container(
                cr.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &OperationOptions::new(),
        )
        .await
        .expect("create container");
    cr
}

/// Creates item `id` with partition key `pk` and `extra` fields.
pub async fn create_item(
    driver: &CosmosDriver,
    c: &ContainerReference,
    id: &str,
    pk: &str,
    n: i64,
) -> cosmos_driver::CosmosResponse {
    let body = json!({ "id": id, "pk": pk, "n": n });
    driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key(pk)
                .with_json_body(&body)
                .unwrap(),
            &OperationOptions::new(),
        )
        .await
        .expect("create item")
}

/// A point read of `id`.
pub fn read(c: &ContainerReference, id: &str, pk: &str) -> CosmosOperation {
    CosmosOperation::read_item(c.item(id).unwrap()).with_partition_key(pk)
}

/// The regions the attempts of a diagnostics context went to.
pub fn regions_of(d: &cosmos_driver::DiagnosticsContext) -> Vec<String> {
    d.requests()
        .iter()
        .map(|r| r.region().map(|r| r.to_string()).unwrap_or_default())
        .collect()
}

/// Creates database `db` and container `c` partitioned on `/pk` with `throughput` RU/s.
pub async fn container_with_throughput(
    driver: &CosmosDriver,
    db: &str,
    c: &str,
    throughput: u32,
) -> ContainerReference {
    let dbr = DatabaseReference::new(db).unwrap();
    driver
        .execute(
            CosmosOperation::create_database(dbr.clone()),
            &OperationOptions::new(),
        )
        .await
        .expect("create database");
    let cr = dbr.container(c).unwrap();
    driver
        .execute(
            CosmosOperation::create_container(
                cr.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            )
            .with_header(
                http::HeaderName::from_static("x-ms-offer-throughput"),
                http::HeaderValue::from(throughput),
            ),
            &OperationOptions::new(),
        )
        .await
        .expect("create container");
    cr
}

/// Splits partition key range `range` of container `c` of database `db` in two
/// (`POST /_emulator/split`, the emulator's admin API authorized with the account key).
pub async fn split_range(emu: &Emulator, db: &str, c: &str, range: &str) {
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let body = json!({"db": db, "container": c, "range": range}).to_string();
    let req = http::Request::post(format!(
        "{}/_emulator/split",
        emu.endpoint().trim_end_matches('/')
    ))
    .header("authorization", format!("Bearer {}", emu.key()))
    .header("content-type", "application/json")
    .body(Full::new(bytes::Bytes::from(body)))
    .unwrap();
    let resp = client
        .request(req)
        .await
        .expect("the split request is answered");
    let status = resp.status();
    let text = resp.into_body().collect().await.unwrap().to_bytes();
    assert!(
        status.is_success(),
        "split: {status} {}",
        String::from_utf8_lossy(&text)
    );
}
