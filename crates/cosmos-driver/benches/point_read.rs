//! Point-read cost on loopback against the embedded emulator (profile `local`): CPU time
//! (getrusage, client thread only) and heap allocations per read, for the driver next to a minimal
//! hyper client that sends the same pre-signed request to the same emulator in the same run.
//!
//!     cargo bench -p cosmos-driver --bench point_read [-- --reads N --rounds R]
//!
//! How the clients are measured and compared: `support/mod.rs`. A round is 20 000 reads by default
//! (about 200 ms of CPU). This is a measurement, not a test: nothing fails when the machine is slow.

mod support;

use bytes::Bytes;
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKeyDefinition,
};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{arg, compare, signed_document_headers, start_emulator};

fn main() {
    let reads = arg("--reads", 20_000);
    let rounds = arg("--rounds", 7) as usize;
    let (endpoint, key) = start_emulator();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let driver = CosmosDriver::new(DriverOptions::new(&endpoint, Credential::master_key(&key).unwrap())).await.unwrap();
        let o = OperationOptions::new();
        let db = DatabaseReference::new("bench").unwrap();
        driver.execute(CosmosOperation::create_database(db.clone()), &o).await.unwrap();
        let c = db.container("items").unwrap();
        driver
            .execute(CosmosOperation::create_container(c.clone(), PartitionKeyDefinition::new("/pk").unwrap()), &o)
            .await
            .unwrap();
        let doc = serde_json::json!({"id": "item-1", "pk": "p1", "payload": "x".repeat(200), "n": 42});
        let created = driver
            .execute(CosmosOperation::create_item(c.clone()).with_partition_key("p1").with_json_body(&doc).unwrap(), &o)
            .await
            .unwrap();
        let session_token = created.session_token().unwrap().to_string();
        let item = c.item("item-1").unwrap();

        // The minimal client: the same request, signed once, sent as is.
        let hub = driver.account().hub().endpoint.clone();
        let uri: Uri = format!("{}{}", hub.as_str().trim_end_matches('/'), item.path()).parse().unwrap();
        let headers = signed_document_headers(&key, "get", item.link(), "p1", &session_token);
        let minimal: Client<HttpConnector, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        let minimal_read = || {
            let mut req = Request::new(Full::new(Bytes::new()));
            *req.uri_mut() = uri.clone();
            *req.headers_mut() = headers.clone();
            let client = &minimal;
            async move {
                let resp = client.request(req).await.expect("minimal read");
                assert_eq!(resp.status(), 200);
                let body = resp.into_body().collect().await.expect("body").to_bytes();
                std::hint::black_box(body);
            }
        };
        let driver_read = || {
            let op = CosmosOperation::read_item(item.clone()).with_partition_key("p1");
            let driver = &driver;
            let o = &o;
            async move {
                let r = driver.execute(op, o).await.expect("driver read");
                std::hint::black_box(r);
            }
        };

        compare(reads.min(2_000), reads, rounds, minimal_read, driver_read)
            .await
            .print(
                &format!("point read, loopback, emulator profile local: {} rounds x {reads} reads per client (median round)", rounds.max(1)),
                "read",
                Some("at most 1.25x"),
            );
    });
}
