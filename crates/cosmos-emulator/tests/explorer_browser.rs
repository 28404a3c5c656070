//! The explorer page in a real browser: headless Chromium driven through chromedriver loads
//! `/_explorer`, shows the regions, adds a fault rule and watches its hits rise while requests
//! run, fails over, runs a query, and saves a screenshot (`EXPLORER_SCREENSHOT`, default
//! `explorer.png` in the test's target directory). Skipped, saying so, when chromedriver is not
//! installed (`apt-get install chromium chromium-driver`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::process::EmulatorProcess;
use common::TestClient;
use cosmos_emulator::WELL_KNOWN_KEY;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// How long the page may take to show something (generous: a loaded machine).
const PATIENCE: Duration = Duration::from_secs(60);

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| PathBuf::from(dir).join(name))
        .find(|p| p.is_file())
}

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn start_browser(chromedriver: &PathBuf, profile: &std::path::Path) -> (Driver, Client) {
    let port = free_port();
    let driver = Driver(
        Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts"),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < PATIENCE, "chromedriver did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut options = json!({
        "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1400,1800",
            format!("--user-data-dir={}", profile.display()),
        ]
    });
    if let Some(binary) = find_on_path("chromium") {
        options["binary"] = json!(binary.to_str().unwrap());
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a browser session");
    (driver, client)
}

/// Waits until `css` matches an element whose text satisfies `ok`; returns that text.
async fn wait_text(page: &Client, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    let mut last = String::new();
    loop {
        if let Ok(el) = page.find(Locator::Css(css)).await {
            if let Ok(text) = el.text().await {
                if ok(&text) {
                    return text;
                }
                last = text;
            }
        }
        if started.elapsed() > PATIENCE {
            let error = match page.find(Locator::Id("error")).await {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            panic!("{what}: {css} still shows {last:?} (page error: {error:?})");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the element `css` finds. The page re-renders its tables every second, so an element
/// found just before a refresh can be gone when clicked: it is then found again, until PATIENCE.
async fn click(page: &Client, css: &str) {
    let started = std::time::Instant::now();
    loop {
        let element = page
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        match element.click().await {
            Ok(_) => return,
            Err(e) if started.elapsed() < PATIENCE && e.to_string().contains("stale element") => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("click {css}: {e}"),
        }
    }
}

async fn select(page: &Client, css: &str, value: &str) {
    page.find(Locator::Css(css))
        .await
        .unwrap()
        .select_by_value(value)
        .await
        .unwrap_or_else(|e| panic!("select {value} in {css}: {e}"));
}

#[tokio::test]
async fn the_explorer_works_in_a_real_browser() {
    let Some(chromedriver) = find_on_path("chromedriver") else {
        println!(
            "SKIPPED the_explorer_works_in_a_real_browser: chromedriver is not installed \
             (apt-get install -y chromium chromium-driver)"
        );
        return;
    };
    let emu = EmulatorProcess::start(&["--partitions", "2"]).unwrap();
    let base = emu.endpoint.clone();
    let c = TestClient::new(WELL_KNOWN_KEY);
    c.setup(&base, "db", "c").await;
    for (id, n) in [("alpha", 1), ("beta", 2), ("gamma", 3)] {
        let r = c
            .create_item(&base, "db", "c", &json!({"id": id, "pk": id, "n": n}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    // Markup in data must show as text.
    let hostile = "<img src=x id=injected>";
    let r = c
        .create_item(
            &base,
            "db",
            "c",
            &json!({"id": "h", "pk": "h", "note": hostile}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");

    let profile = std::env::temp_dir().join(format!("explorer-chromium-{}", rand::random::<u32>()));
    let (_driver, page) = start_browser(&chromedriver, &profile).await;
    page.goto(&format!("{base}_explorer")).await.unwrap();

    // The configured regions, with their roles.
    wait_text(
        &page,
        "#regions tr[data-region='East US'] .role",
        "East US role",
        |t| t == "write",
    )
    .await;
    wait_text(
        &page,
        "#regions tr[data-region='West US'] .role",
        "West US role",
        |t| t == "read",
    )
    .await;

    // A fault rule from a template; its hits rise while reads run.
    select(&page, "#fault-template", "throttle").await;
    select(&page, "#fault-region", "West US").await;
    click(&page, "#fault-add").await;
    wait_text(&page, "#faults tr .name", "the new rule", |t| {
        t == "throttle-reads"
    })
    .await;
    let west = emu.region("West US").to_owned();
    let reader = {
        let c = c.clone();
        tokio::spawn(async move {
            let mut throttled = 0;
            for _ in 0..400 {
                let r = c
                    .read_item(&west, "db", "c", "alpha", &json!("alpha"), &[])
                    .await;
                if r.status == 429 {
                    throttled += 1;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            throttled
        })
    };
    let first = wait_text(&page, "#faults tr .hits", "hits", |t| {
        t.parse::<u64>().is_ok_and(|n| n >= 1)
    })
    .await;
    let first: u64 = first.parse().unwrap();
    wait_text(&page, "#faults tr .hits", "rising hits", |t| {
        t.parse::<u64>().is_ok_and(|n| n >= first + 5)
    })
    .await;
    wait_text(
        &page,
        "#regions tr[data-region='West US'] .counters",
        "West US counters",
        |t| t.contains("read "),
    )
    .await;
    reader.abort();
    // Disabling it shows, then deleting it empties the table.
    click(&page, "#faults tr .toggle").await;
    wait_text(&page, "#faults tr .state", "disabled rule", |t| {
        t == "disabled"
    })
    .await;

    // Failover moves the write region.
    select(&page, "#failover-region", "West US").await;
    click(&page, "#failover").await;
    wait_text(&page, "#write-region", "write region", |t| t == "West US").await;
    wait_text(
        &page,
        "#regions tr[data-region='West US'] .role",
        "West US role",
        |t| t == "write",
    )
    .await;
    wait_text(
        &page,
        "#regions tr[data-region='East US'] .role",
        "East US role",
        |t| t == "read",
    )
    .await;

    // Browse to the container, then query it.
    click(&page, "#databases button").await;
    wait_text(&page, "#containers button", "container list", |t| t == "c").await;
    click(&page, "#containers button").await;
    wait_text(&page, "#items", "items", |t| {
        t.contains("alpha") && t.contains(hostile)
    })
    .await;
    assert!(
        page.find_all(Locator::Css("#injected"))
            .await
            .unwrap()
            .is_empty(),
        "data is never parsed as markup"
    );
    let query = page.find(Locator::Id("query")).await.unwrap();
    query.clear().await.unwrap();
    query
        .send_keys("SELECT c.id, c.n FROM c WHERE c.n >= 2")
        .await
        .unwrap();
    click(&page, "#query-run").await;
    wait_text(&page, "#query-count", "query rows", |t| t == "2").await;
    let results = wait_text(&page, "#query-results", "results", |t| t.contains("beta")).await;
    assert!(
        results.contains("gamma") && !results.contains("alpha"),
        "{results}"
    );
    let charge = wait_text(&page, "#query-charge", "charge", |t| t != "-").await;
    assert!(charge.parse::<f64>().unwrap() > 0.0, "charge {charge}");
    wait_text(&page, "#query-plan", "plan", |t| t.contains("queryInfo")).await;

    // The screenshot CI keeps: regions after the failover, the rule with its hits, the query.
    let shot = page.screenshot().await.unwrap();
    let path = std::env::var_os("EXPLORER_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("explorer.png"));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(&path, &shot).unwrap();
    assert!(shot.starts_with(b"\x89PNG"), "a PNG screenshot");
    println!("explorer screenshot: {}", path.display());

    // A query the service refuses shows its message.
    query.clear().await.unwrap();
    query.send_keys("SELECT * FROM c WHERE").await.unwrap();
    click(&page, "#query-run").await;
    wait_text(&page, "#query-error", "the service's error", |t| {
        t.contains("400")
    })
    .await;

    click(&page, "#faults tr .delete").await;
    let started = Instant::now();
    while !page
        .find_all(Locator::Css("#faults tr"))
        .await
        .unwrap()
        .is_empty()
    {
        assert!(started.elapsed() < PATIENCE, "the rule was not deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    page.close().await.unwrap();
    let _ = std::fs::remove_dir_all(&profile);
}
