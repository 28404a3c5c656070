//! Shared helpers of the PATCH tests: setup, the PATCH call, reading items back, and a raw HTTP
//! client for a server's native PATCH.

use bytes::Bytes;
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosError, CosmosOperation, CosmosResponse,
    OperationOptions,
};
use cosmos_emulator::faults::OpKind;
use cosmos_emulator::{Emulator, EmulatorBuilder};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::common;

/// An emulator from `builder`, a driver for it, and container `db/c` partitioned on `/pk`.
pub async fn setup(builder: EmulatorBuilder) -> (Emulator, CosmosDriver, ContainerReference) {
    let emu = common::start(builder).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    (emu, driver, c)
}

/// [`setup`] on a default emulator, with counter item `a` in partition `p` (`n: 1`, `log: []`).
pub async fn counter_setup() -> (Emulator, CosmosDriver, ContainerReference) {
    counter_setup_with(EmulatorBuilder::new(), |o| o).await
}

/// [`counter_setup`] with `builder`'s emulator and the driver options changed by `options`.
pub async fn counter_setup_with(
    builder: EmulatorBuilder,
    options: impl FnOnce(cosmos_driver::DriverOptions) -> cosmos_driver::DriverOptions,
) -> (Emulator, CosmosDriver, ContainerReference) {
    let emu = common::start(builder).await;
    let driver = common::driver(options(common::options(&emu))).await;
    let c = common::container(&driver, "db", "c").await;
    create(
        &driver,
        &c,
        &serde_json::json!({"id": "a", "pk": "p", "n": 1, "log": []}),
    )
    .await;
    (emu, driver, c)
}

/// Creates `doc` (which names its `id` and `pk`).
pub async fn create(driver: &CosmosDriver, c: &ContainerReference, doc: &Value) -> CosmosResponse {
    let pk = doc["pk"]
        .as_str()
        .expect("the document has a string pk")
        .to_owned();
    let op = CosmosOperation::create_item(c.clone())
        .with_partition_key(pk)
        .with_json_body(doc)
        .unwrap();
    driver
        .execute(op, &OperationOptions::new())
        .await
        .expect("create item")
}

/// The PATCH operation of `spec` on item `id`.
pub fn patch_op(
    c: &ContainerReference,
    id: &str,
    pk: &str,
    spec: &PatchInstructions,
) -> CosmosOperation {
    CosmosOperation::patch_item(c.item(id).unwrap())
        .with_partition_key(pk)
        .with_json_body(spec)
        .unwrap()
}

/// Options that run a PATCH as the read-modify-write loop (the default, `Auto`, sends the
/// service's verb where the emulator serves it): the loop's own tests use these.
pub fn loop_options() -> OperationOptions {
    OperationOptions::new().with_patch_strategy(cosmos_driver::PatchStrategy::ReadModifyWrite)
}

/// Runs `spec` on item `id` through the driver.
pub async fn patch(
    driver: &CosmosDriver,
    c: &ContainerReference,
    id: &str,
    pk: &str,
    spec: &PatchInstructions,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    driver.execute(patch_op(c, id, pk, spec), options).await
}

/// Item `id` as stored now (read through the driver, so with its session token).
pub async fn read_doc(
    driver: &CosmosDriver,
    c: &ContainerReference,
    id: &str,
    pk: &str,
) -> (Value, String) {
    let r = driver
        .execute(common::read(c, id, pk), &OperationOptions::new())
        .await
        .expect("read item");
    (r.json().unwrap(), r.etag().expect("an etag").to_owned())
}

/// The document without its system properties (which differ between two items by nature).
pub fn user_part(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Value::Object(map) = &mut doc {
        for name in ["_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"] {
            map.shift_remove(name);
        }
    }
    doc
}

/// Requests the emulator saw for items (reads, replaces, native patches and the rest), summed over
/// its regions.
pub fn item_requests(emu: &Emulator) -> u64 {
    let kinds = [
        OpKind::Read,
        OpKind::Create,
        OpKind::Replace,
        OpKind::Upsert,
        OpKind::Delete,
        OpKind::Patch,
    ];
    emu.regions()
        .iter()
        .map(|r| kinds.iter().map(|k| emu.counters().get(r, *k)).sum::<u64>())
        .sum()
}

/// Every request the emulator saw, summed over its regions.
pub fn all_requests(emu: &Emulator) -> u64 {
    emu.regions()
        .iter()
        .map(|r| emu.counters().region_total(r))
        .sum()
}

/// Requests of one kind, summed over the emulator's regions.
pub fn requests_of(emu: &Emulator, kind: OpKind) -> u64 {
    emu.regions()
        .iter()
        .map(|r| emu.counters().get(r, kind))
        .sum()
}

/// A server's native PATCH, over plain HTTP without a signature (for an emulator started with
/// `no_auth`, or a server that does not check signatures). Returns status and body.
pub async fn native_patch(
    endpoint: &str,
    c: &ContainerReference,
    id: &str,
    pk: &str,
    body: &Value,
) -> (u16, Value) {
    let uri = format!("{}/{}/docs/{id}", endpoint.trim_end_matches('/'), c.link());
    let request = http::Request::builder()
        .method(http::Method::PATCH)
        .uri(uri)
        .header(
            "x-ms-documentdb-partitionkey",
            Value::Array(vec![Value::from(pk)]).to_string(),
        )
        .header("x-ms-version", "2020-07-15")
        .header(
            "x-ms-date",
            httpdate::fmt_http_date(std::time::SystemTime::now()),
        )
        .header("content-type", "application/json_patch+json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let response = client
        .request(request)
        .await
        .expect("the native PATCH is answered");
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the body is read")
        .to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// `spec` in the service's own wire spelling (`incr` for increments), for a native PATCH.
pub fn service_body(spec: &PatchInstructions) -> Value {
    let mut body = serde_json::to_value(spec).unwrap();
    if let Some(ops) = body["operations"].as_array_mut() {
        for op in ops {
            if op["op"] == "increment" {
                op["op"] = Value::from("incr");
            }
        }
    }
    body
}
