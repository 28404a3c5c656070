//! Single-partition query page cost on loopback against the embedded emulator (profile `local`):
//! CPU time (getrusage, client thread only) and heap allocations per page, for the driver's query
//! stream (`ContainerClient::query_items_with(..).into_pages()`, one page of 10 items) next to a
//! minimal hyper client that sends the same pre-signed query request to the same emulator in the
//! same run and reads the page's `Documents` into JSON values, as any client must to use them.
//!
//!     cargo bench -p cosmos-driver --bench query_page [-- --reads N --rounds R]
//!
//! The emulator runs on its own thread and runtime; both clients run on the main thread's
//! current-thread runtime, so the thread's CPU time and allocations are the client's alone
//! (connection tasks included). Rounds alternate between the clients; each driver round is compared
//! with the minimal round just before it, and the median of those ratios is reported.
//! Thread CPU time advances in scheduler ticks (4 ms here), so a round is 20 000 reads by default
//! (about 200 ms of CPU for point reads) to keep the tick error near 2%.
//! This is a measurement, not a test: nothing fails when the machine is slow.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cosmos_driver::auth::MasterKey;
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKey, PartitionKeyDefinition,
};
use cosmos_driver::{API_VERSION, USER_AGENT_VALUE};
use futures::TryStreamExt;
use http::{HeaderMap, HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

struct CountingAllocator;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static ALLOCATED_BYTES: Cell<u64> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = TRACKING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
            let _ = ALLOCATED_BYTES.try_with(|b| b.set(b.get() + size as u64));
        }
    });
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// CPU time (user + system) of the calling thread.
fn thread_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[derive(Clone, Copy, Debug)]
struct Round {
    cpu: Duration,
    wall: Duration,
    allocations: u64,
    bytes: u64,
    reads: u64,
}

impl Round {
    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.reads as f64
    }
    fn wall_us(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.reads as f64
    }
    fn allocs(&self) -> f64 {
        self.allocations as f64 / self.reads as f64
    }
    fn bytes(&self) -> f64 {
        self.bytes as f64 / self.reads as f64
    }
}

async fn measure<F, Fut>(reads: u64, mut read: F) -> Round
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    ALLOCATIONS.with(|a| a.set(0));
    ALLOCATED_BYTES.with(|b| b.set(0));
    let cpu0 = thread_cpu();
    let wall0 = Instant::now();
    TRACKING.with(|t| t.set(true));
    for _ in 0..reads {
        read().await;
    }
    TRACKING.with(|t| t.set(false));
    Round {
        cpu: thread_cpu() - cpu0,
        wall: wall0.elapsed(),
        allocations: ALLOCATIONS.with(Cell::get),
        bytes: ALLOCATED_BYTES.with(Cell::get),
        reads,
    }
}

fn median(mut rounds: Vec<Round>) -> Round {
    rounds.sort_by_key(|r| r.cpu);
    rounds[rounds.len() / 2]
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn start_emulator() -> (String, String) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let emu = cosmos_emulator::EmulatorBuilder::new()
                .profile("local")
                .start()
                .await
                .expect("emulator");
            tx.send((emu.endpoint().to_string(), emu.key().to_string()))
                .expect("send endpoint");
            std::future::pending::<()>().await;
        });
    });
    rx.recv().expect("the emulator started")
}

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
        let query = Query::new("SELECT * FROM c WHERE c.n >= @lo").with_parameter("@lo", &0).unwrap();
        let body = query.to_body().unwrap();

        // The minimal client: the same query request, signed once, sent as is.
        let hub = driver.account().hub().endpoint.clone();
        let uri: Uri = format!("{}{}/docs", hub.as_str().trim_end_matches('/'), c.path()).parse().unwrap();
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let auth = MasterKey::new(&key).unwrap().authorization("post", "docs", c.link(), &date.to_ascii_lowercase());
        let mut headers = HeaderMap::new();
        headers.insert("x-ms-version", HeaderValue::from_static(API_VERSION));
        headers.insert("x-ms-date", HeaderValue::from_str(&date).unwrap());
        headers.insert("authorization", auth);
        headers.insert("user-agent", HeaderValue::from_static(USER_AGENT_VALUE));
        headers.insert("accept", HeaderValue::from_static("application/json"));
        headers.insert("content-type", HeaderValue::from_static("application/query+json"));
        headers.insert("x-ms-documentdb-isquery", HeaderValue::from_static("True"));
        headers.insert("x-ms-documentdb-partitionkey", PartitionKey::from("p1").header_value().clone());
        headers.insert("x-ms-session-token", HeaderValue::from_str(&session_token).unwrap());
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

        measure(reads.min(1_000), minimal_read).await;
        measure(reads.min(1_000), driver_read).await;
        let mut minimal_rounds = Vec::new();
        let mut driver_rounds = Vec::new();
        for _ in 0..rounds.max(1) {
            minimal_rounds.push(measure(reads, minimal_read).await);
            driver_rounds.push(measure(reads, driver_read).await);
        }
        let mut ratios: Vec<f64> =
            minimal_rounds.iter().zip(&driver_rounds).map(|(m, d)| d.cpu_us() / m.cpu_us()).collect();
        ratios.sort_by(f64::total_cmp);
        let ratio = ratios[ratios.len() / 2];
        let m = median(minimal_rounds);
        let d = median(driver_rounds);
        println!(
            "single-partition query page of 10 items, loopback, emulator profile local: {} rounds x {reads} pages per client (median round)",
            rounds.max(1)
        );
        println!("{:<22} {:>12} {:>12} {:>12} {:>12}", "client", "cpu/page", "allocs/page", "bytes/page", "wall/page");
        for (name, r) in [("minimal hyper client", m), ("cosmos-driver", d)] {
            println!(
                "{name:<22} {:>9.1} us {:>12.1} {:>12.0} {:>9.1} us",
                r.cpu_us(),
                r.allocs(),
                r.bytes(),
                r.wall_us()
            );
        }
        println!(
            "driver / minimal CPU per page: {ratio:.2}x, median of paired rounds (range {:.2}x to {:.2}x)",
            ratios[0],
            ratios[ratios.len() - 1]
        );
    });
}
