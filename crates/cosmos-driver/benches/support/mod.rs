//! What the cost benchmarks share: the counting allocator, the thread CPU clock, one measured round,
//! paired rounds of the driver against a minimal hyper client, the report, the embedded emulator and
//! the minimal client's pre-signed headers.
//!
//! Both clients run on the main thread's current-thread runtime while the emulator runs on its own
//! thread and runtime, so the thread's CPU time and allocations are the client's alone (connection
//! tasks included). Rounds alternate between the clients; each driver round is compared with the
//! minimal round just before it, and the median of those ratios is reported. Thread CPU time
//! advances in scheduler ticks (4 ms here), so rounds are long (20 000 requests by default) to keep
//! the tick error near 2%. These are measurements, not tests: nothing fails when the machine is slow.

use std::future::Future;
use std::time::{Duration, Instant};

use cosmos_driver::auth::MasterKey;
use cosmos_driver::{PartitionKey, API_VERSION, USER_AGENT_VALUE};
use http::{HeaderMap, HeaderValue};

#[path = "../../src/alloc_counter.rs"]
#[allow(dead_code)]
mod alloc_counter;

use alloc_counter::{start_counting, stop_counting, CountingAllocator};

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

/// One measured round of one client.
#[derive(Clone, Copy, Debug)]
pub struct Round {
    cpu: Duration,
    wall: Duration,
    allocations: u64,
    bytes: u64,
    requests: u64,
}

impl Round {
    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.requests as f64
    }
    fn wall_us(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.requests as f64
    }
    fn allocs(&self) -> f64 {
        self.allocations as f64 / self.requests as f64
    }
    fn bytes(&self) -> f64 {
        self.bytes as f64 / self.requests as f64
    }
}

/// Runs `request` `requests` times in a row and measures the thread's CPU time, wall time and
/// allocations.
pub async fn measure<F, Fut>(requests: u64, mut request: F) -> Round
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let cpu0 = thread_cpu();
    let wall0 = Instant::now();
    start_counting();
    for _ in 0..requests {
        request().await;
    }
    let allocated = stop_counting();
    Round {
        cpu: thread_cpu() - cpu0,
        wall: wall0.elapsed(),
        allocations: allocated.count,
        bytes: allocated.bytes,
        requests,
    }
}

fn median(mut rounds: Vec<Round>) -> Round {
    rounds.sort_by_key(|r| r.cpu);
    rounds[rounds.len() / 2]
}

/// The driver against the minimal client over paired rounds.
pub struct Comparison {
    minimal: Round,
    driver: Round,
    /// Driver / minimal CPU per request of each pair, sorted.
    ratios: Vec<f64>,
}

/// Warms both clients up with `warm_up` requests each, then runs `rounds` pairs of rounds of
/// `requests` requests: the minimal client's round, then the driver's.
pub async fn compare<M, MF, D, DF>(
    warm_up: u64,
    requests: u64,
    rounds: usize,
    mut minimal: M,
    mut driver: D,
) -> Comparison
where
    M: FnMut() -> MF,
    MF: Future<Output = ()>,
    D: FnMut() -> DF,
    DF: Future<Output = ()>,
{
    measure(warm_up, &mut minimal).await;
    measure(warm_up, &mut driver).await;
    let (mut minimal_rounds, mut driver_rounds) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        minimal_rounds.push(measure(requests, &mut minimal).await);
        driver_rounds.push(measure(requests, &mut driver).await);
    }
    // Each driver round is compared with the minimal round just before it (same machine
    // conditions); the median of those ratios is the figure.
    let mut ratios: Vec<f64> = minimal_rounds
        .iter()
        .zip(&driver_rounds)
        .map(|(m, d)| d.cpu_us() / m.cpu_us())
        .collect();
    ratios.sort_by(f64::total_cmp);
    Comparison {
        minimal: median(minimal_rounds),
        driver: median(driver_rounds),
        ratios,
    }
}

impl Comparison {
    /// Prints the table: `title` first, costs per `unit` (`read`, `page`), then the ratio line with
    /// `goal` appended when given.
    pub fn print(&self, title: &str, unit: &str, goal: Option<&str>) {
        self.print_named(title, unit, ("minimal hyper client", "cosmos-driver"), goal);
    }

    /// [`Comparison::print`] with the two clients' names (first, second).
    pub fn print_named(&self, title: &str, unit: &str, names: (&str, &str), goal: Option<&str>) {
        println!("{title}");
        println!(
            "{:<22} {:>12} {:>12} {:>12} {:>12}",
            "client",
            format!("cpu/{unit}"),
            format!("allocs/{unit}"),
            format!("bytes/{unit}"),
            format!("wall/{unit}")
        );
        for (name, r) in [(names.0, self.minimal), (names.1, self.driver)] {
            println!(
                "{name:<22} {:>9.1} us {:>12.1} {:>12.0} {:>9.1} us",
                r.cpu_us(),
                r.allocs(),
                r.bytes(),
                r.wall_us()
            );
        }
        let ratio = self.ratios[self.ratios.len() / 2];
        let goal = goal.map(|g| format!("; goal: {g}")).unwrap_or_default();
        println!(
            "{} / {} CPU per {unit}: {ratio:.2}x, median of paired rounds (range {:.2}x to {:.2}x{goal})",
            names.1,
            names.0,
            self.ratios[0],
            self.ratios[self.ratios.len() - 1]
        );
    }
}

/// The value following `name` on the command line, or `default`.
pub fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Starts the emulator (profile `local`) on its own thread and runtime; its endpoint and key.
pub fn start_emulator() -> (String, String) {
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .profile("local")
        .start_detached()
        .expect("emulator");
    (emu.endpoint().to_owned(), emu.key().to_owned())
}

/// The headers of a document request signed once with `key` (`verb` on `link`), for the minimal
/// client to send as they are: version, date, authorization, user agent, accept, partition key
/// `pk` and `session_token`.
pub fn signed_document_headers(
    key: &str,
    verb: &str,
    link: &str,
    pk: &str,
    session_token: &str,
) -> HeaderMap {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let auth = MasterKey::new(key).expect("key").authorization(
        verb,
        "docs",
        link,
        &date.to_ascii_lowercase(),
    );
    let mut headers = HeaderMap::new();
    headers.insert("x-ms-version", HeaderValue::from_static(API_VERSION));
    headers.insert("x-ms-date", HeaderValue::from_str(&date).expect("date"));
    headers.insert("authorization", auth);
    headers.insert("user-agent", HeaderValue::from_static(USER_AGENT_VALUE));
    headers.insert("accept", HeaderValue::from_static("application/json"));
    headers.insert(
        "x-ms-documentdb-partitionkey",
        PartitionKey::from(pk).header_value().clone(),
    );
    headers.insert(
        "x-ms-session-token",
        HeaderValue::from_str(session_token).expect("session token"),
    );
    headers
}
