//! Single-partition query page cost on loopback against the embedded emulator (profile `local`):
//! CPU time (getrusage, client thread only) and heap allocations per page, for the driver's query
//! stream (`ContainerClient::query_items_with(..).into_pages()`, one page of 10 items) next to a
//! minimal hyper client that sends the same pre-signed query request to the same emulator in the
//! same run and reads the page's `Documents` into JSON values, as any client must to use them.
//!
//!     cargo bench -p cosmos-driver --bench query_page [-- --reads N --rounds R]
//!
//! How the clients are measured and compared: `support/mod.rs`. A round is 5 000 pages by default.
//! This is a measurement, not a test: nothing fails when the machine is slow.

mod support;

use bytes::Bytes;
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKeyDefinition,
};
use futures::TryStreamExt;
use http::{HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{arg, compare, signed_document_headers, start_emulator};

fn main() {
    let reads = arg("--reads", 5_000);
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
        let mut session_token = String::new();
        for i in 0..10 {
            let doc = serde_json::json!({"id": format!("item-{i}"), "pk": "p1", "payload": "x".repeat(200), "n": i});
            let created = driver
                .execute(CosmosOperation::create_item(c.clone()).with_partition_key("p1").with_json_body(&doc).unwrap(), &o)
                .await
                .unwrap();
            session_token = created.session_token().unwrap().to_string();
        }
        let query = Query::new("SELECT * FROM c WHERE c.n >= @lo").with_parameter("@lo", 0).unwrap();
        let body = query.to_body().unwrap();

        // The minimal client: the same query request, signed once, sent as is.
        let hub = driver.account().hub().endpoint.clone();
        let uri: Uri = format!("{}{}/docs", hub.as_str().trim_end_matches('/'), c.path()).parse().unwrap();
        let mut headers = signed_document_headers(&key, "post", c.link(), "p1", &session_token);
        headers.insert("content-type", HeaderValue::from_static("application/query+json"));
        headers.insert("x-ms-documentdb-isquery", HeaderValue::from_static("True"));
        let minimal: Client<HttpConnector, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(rename = "Documents")]
            documents: Vec<serde_json::Value>,
        }
        let minimal_read = || {
            let mut req = Request::new(Full::new(body.clone()));
            *req.method_mut() = http::Method::POST;
            *req.uri_mut() = uri.clone();
            *req.headers_mut() = headers.clone();
            let client = &minimal;
            async move {
                let resp = client.request(req).await.expect("minimal query");
                assert_eq!(resp.status(), 200);
                let bytes = resp.into_body().collect().await.expect("body").to_bytes();
                let page: Page = serde_json::from_slice(&bytes).expect("a page");
                assert_eq!(page.documents.len(), 10);
                std::hint::black_box(page.documents);
            }
        };
        let container = driver.container("bench", "items");
        let driver_read = || {
            let mut pages = container
                .query_items_with::<serde_json::Value>(query.clone(), QueryScope::PartitionKey("p1".into()), QueryOptions::new())
                .into_pages();
            async move {
                let page = pages.try_next().await.expect("driver query").expect("a page");
                assert_eq!(page.items().len(), 10);
                std::hint::black_box(page);
            }
        };

        compare(reads.min(1_000), reads, rounds, minimal_read, driver_read)
            .await
            .print(
                &format!("single-partition query page of 10 items, loopback, emulator profile local: {} rounds x {reads} pages per client (median round)", rounds.max(1)),
                "page",
                None,
            );
    });
}
