//! The change feed processor over real HTTP against the embedded emulator: two instances share
//! four ranges evenly and one takes all when the other stops; a split during processing goes on
//! in the children from the parent's checkpoint without loss; a lease taken by another owner
//! stops that range's work; a failing handler's batch is retried; the estimator's lag.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cosmos_driver::processor::{
    ChangeFeedEstimator, ChangeFeedProcessor, ProcessorContext, ProcessorEvent, ProcessorOptions,
    ProcessorStart,
};
use cosmos_driver::{ContainerClient, ContainerProperties, CosmosDriver, PartitionKeyDefinition};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, Clone)]
struct Doc {
    id: String,
    n: i64,
    #[serde(rename = "_lsn")]
    lsn: u64,
}

struct Fixture {
    emu: Emulator,
    driver: CosmosDriver,
    c: ContainerClient,
    leases: ContainerClient,
}

async fn fixture(partitions: usize) -> Fixture {
    let emu = common::start(EmulatorBuilder::new().partitions(partitions)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let key = PartitionKeyDefinition::new("/id").unwrap();
    driver
        .database("db")
        .create_container(&ContainerProperties::new("leases", &key), None)
        .await
        .expect("the lease container");
    let c = driver.container("db", "c");
    let leases = driver.container("db", "leases");
    Fixture {
        emu,
        driver,
        c,
        leases,
    }
}

fn fast() -> ProcessorOptions {
    ProcessorOptions::new()
        .with_start(ProcessorStart::Beginning)
        .with_lease_intervals(
            Duration::from_millis(200),
            Duration::from_millis(300),
            Duration::from_secs(3),
        )
        .with_poll_delay(Duration::from_millis(50))
}

/// What one instance handled: (lease, doc) in order, and its events.
#[derive(Clone, Default)]
struct Seen {
    changes: Arc<Mutex<Vec<(String, Doc)>>>,
    events: Arc<Mutex<Vec<ProcessorEvent>>>,
}

impl Seen {
    fn ids(&self) -> BTreeSet<String> {
        self.changes
            .lock()
            .unwrap()
            .iter()
            .map(|(_, d)| d.id.clone())
            .collect()
    }
    fn count(&self) -> usize {
        self.changes.lock().unwrap().len()
    }
    fn events(&self) -> Vec<ProcessorEvent> {
        self.events.lock().unwrap().clone()
    }
}

async fn start(
    f: &Fixture,
    instance: &str,
    options: ProcessorOptions,
    seen: &Seen,
) -> ChangeFeedProcessor {
    let changes = seen.changes.clone();
    let events = seen.events.clone();
    ChangeFeedProcessor::builder(f.c.clone(), f.leases.clone(), "proc", instance)
        .with_options(options)
        .on_event(move |e| events.lock().unwrap().push(e))
        .start(move |batch: Vec<Doc>, ctx: ProcessorContext| {
            let changes = changes.clone();
            async move {
                let mut c = changes.lock().unwrap();
                c.extend(batch.into_iter().map(|d| (ctx.lease.clone(), d)));
                Ok::<(), String>(())
            }
        })
        .await
        .expect("the processor starts")
}

async fn write(c: &ContainerClient, i: usize, n: i64) {
    let pk = format!("p{}", i % 13);
    c.upsert_item(
        pk.as_str(),
        &json!({"id": format!("d{i}"), "pk": pk, "n": n}),
        None,
    )
    .await
    .expect("write");
}

/// Waits up to 20 s for `cond`.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..400 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn all_ids(range: std::ops::Range<usize>) -> BTreeSet<String> {
    range.map(|i| format!("d{i}")).collect()
}

#[tokio::test]
async fn two_instances_share_four_ranges_and_one_takes_all_when_the_other_stops() {
    let f = fixture(4).await;
    let (sa, sb) = (Seen::default(), Seen::default());
    let a = start(&f, "a", fast(), &sa).await;
    eventually("a owns the 4 leases", || a.owned_leases().len() == 4).await;
    let b = start(&f, "b", fast(), &sb).await;
    eventually("2 and 2", || {
        a.owned_leases().len() == 2 && b.owned_leases().len() == 2
    })
    .await;
    for i in 0..40 {
        write(&f.c, i, 1).await;
    }
    eventually("every change handled", || {
        let mut ids = sa.ids();
        ids.extend(sb.ids());
        ids == all_ids(0..40)
    })
    .await;
    assert!(
        !sa.ids().is_empty() && !sb.ids().is_empty(),
        "both handled some"
    );
    let b_owned = b.owned_leases();
    b.stop().await;
    let mut released: Vec<String> = sb
        .events()
        .into_iter()
        .filter_map(|e| match e {
            ProcessorEvent::Released { lease } => Some(lease),
            _ => None,
        })
        .collect();
    released.sort();
    assert_eq!(released, b_owned, "stop releases what it owned");
    eventually("a owns all 4 again", || a.owned_leases().len() == 4).await;
    let before = sb.count();
    for i in 40..80 {
        write(&f.c, i, 1).await;
    }
    eventually("a handles the new changes", || {
        sa.ids().is_superset(&all_ids(40..80))
    })
    .await;
    assert_eq!(sb.count(), before, "a stopped instance handles nothing");
    a.stop().await;
    drop(f.driver);
}

#[tokio::test]
async fn a_split_during_processing_continues_in_the_children_from_the_checkpoint() {
    let f = fixture(2).await;
    let seen = Seen::default();
    let p = start(&f, "a", fast().with_max_items(5), &seen).await;
    eventually("a owns both leases", || p.owned_leases().len() == 2).await;
    for i in 0..60 {
        write(&f.c, i, 1).await;
    }
    eventually("the first writes handled", || seen.ids() == all_ids(0..60)).await;
    common::split_range(&f.emu, "db", "c", "0").await;
    for i in 60..120 {
        write(&f.c, i, 2).await;
    }
    eventually("every change handled across the split", || {
        seen.ids() == all_ids(0..120)
    })
    .await;
    eventually("the split replaced lease 0", || p.owned_leases().len() == 3).await;
    let splits: Vec<ProcessorEvent> = seen
        .events()
        .into_iter()
        .filter(|e| matches!(e, ProcessorEvent::Split { .. }))
        .collect();
    assert_eq!(splits.len(), 1, "{splits:?}");
    let ProcessorEvent::Split { lease, children } = &splits[0] else {
        unreachable!()
    };
    assert_eq!(lease, "0");
    assert_eq!(children.len(), 2);
    assert!(!p.owned_leases().contains(&"0".to_owned()));
    // The children went on from the parent's checkpoint: nothing was handled twice.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (_, d) in seen.changes.lock().unwrap().iter() {
        *counts.entry(d.id.clone()).or_default() += 1;
    }
    for (_, d) in seen.changes.lock().unwrap().iter() {
        let i: usize = d.id[1..].parse().unwrap();
        assert_eq!(d.n, if i < 60 { 1 } else { 2 }, "{d:?}");
    }
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "handled twice: {twice:?}");
    // Within one lease, changes come in LSN order.
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    for (lease, d) in seen.changes.lock().unwrap().iter() {
        let prev = last.insert(lease.clone(), d.lsn).unwrap_or(0);
        assert!(d.lsn > prev, "lease {lease}: {} after {prev}", d.lsn);
    }
    p.stop().await;
}

#[tokio::test]
async fn a_lease_taken_by_another_owner_stops_that_ranges_work() {
    let f = fixture(1).await;
    let seen = Seen::default();
    let opts = fast().with_lease_intervals(
        Duration::from_millis(100),
        Duration::from_millis(300),
        Duration::from_secs(60),
    );
    let p = start(&f, "a", opts, &seen).await;
    eventually("a owns the lease", || p.owned_leases() == ["0"]).await;
    write(&f.c, 0, 1).await;
    eventually("the first change handled", || seen.count() == 1).await;
    // Another instance takes the lease (an unconditional write, as a takeover of a stuck owner).
    let mut lease: serde_json::Value = f
        .leases
        .read_item("proc..0", "proc..0", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    lease["Owner"] = json!("thief");
    lease["timestamp"] = json!(cosmos_driver::processor::format_timestamp(
        std::time::SystemTime::now() + Duration::from_secs(30)
    ));
    f.leases
        .replace_item("proc..0", "proc..0", &lease, None)
        .await
        .unwrap();
    eventually("a sees the lease lost", || p.owned_leases().is_empty()).await;
    assert!(seen
        .events()
        .iter()
        .any(|e| matches!(e, ProcessorEvent::Lost { lease, .. } if lease == "0")));
    for i in 1..10 {
        write(&f.c, i, 1).await;
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(seen.count(), 1, "no batch after the lease was lost");
    let stored: serde_json::Value = f
        .leases
        .read_item("proc..0", "proc..0", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(
        stored["Owner"], "thief",
        "the lost owner wrote nothing more"
    );
    p.stop().await;
}

#[tokio::test]
async fn a_failing_handler_gets_the_same_batch_again_and_the_failure_is_reported() {
    let f = fixture(1).await;
    for i in 0..3 {
        write(&f.c, i, 1).await;
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(Mutex::new(Vec::<Vec<String>>::new()));
    let (ev, cl) = (events.clone(), calls.clone());
    let p = ChangeFeedProcessor::builder(f.c.clone(), f.leases.clone(), "proc", "a")
        .with_options(fast())
        .on_event(move |e| ev.lock().unwrap().push(e))
        .start(move |batch: Vec<Doc>, _ctx| {
            let cl = cl.clone();
            async move {
                let mut calls = cl.lock().unwrap();
                calls.push(batch.into_iter().map(|d| d.id).collect());
                if calls.len() < 3 {
                    Err(format!("failure {}", calls.len()))
                } else {
                    Ok(())
                }
            }
        })
        .await
        .unwrap();
    eventually("three calls", || calls.lock().unwrap().len() >= 3).await;
    p.stop().await;
    let calls = calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(
        calls.iter().all(|c| c == &calls[0]),
        "the same batch: {calls:?}"
    );
    let failures: Vec<(u32, String)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ProcessorEvent::HandlerFailed { attempt, error, .. } => Some((*attempt, error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        failures,
        vec![(1, "failure 1".to_owned()), (2, "failure 2".to_owned())]
    );
}

#[tokio::test]
async fn the_estimator_counts_what_is_not_handled_yet() {
    let f = fixture(2).await;
    // The leases exist (one start), nothing handled.
    let idle = Seen::default();
    let p = start(&f, "a", fast().with_start(ProcessorStart::Now), &idle).await;
    p.stop().await;
    for i in 0..30 {
        write(&f.c, i, 1).await;
    }
    let estimator = ChangeFeedEstimator::new(f.c.clone(), f.leases.clone(), "proc");
    let lags = estimator.estimate().await.unwrap();
    assert_eq!(lags.len(), 2);
    assert_eq!(lags.iter().map(|l| l.lag).sum::<u64>(), 30, "{lags:?}");
    assert!(lags.iter().all(|l| l.owner.is_none()), "released: {lags:?}");
    let seen = Seen::default();
    let p = start(&f, "a", fast(), &seen).await;
    eventually("all handled", || seen.ids() == all_ids(0..30)).await;
    let mut zero = false;
    for _ in 0..40 {
        if estimator
            .estimate()
            .await
            .unwrap()
            .iter()
            .all(|l| l.lag == 0)
        {
            zero = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(zero, "caught up: {:?}", estimator.estimate().await);
    write(&f.c, 99, 1).await;
    p.stop().await;
    let lags = estimator.estimate().await.unwrap();
    assert!(lags.iter().map(|l| l.lag).sum::<u64>() <= 1, "{lags:?}");
}

#[tokio::test]
async fn stop_is_prompt_with_the_default_intervals_and_a_dropped_processor_leaves_no_task() {
    let f = fixture(2).await;
    let seen = Seen::default();
    // The .NET intervals: a 5 s poll delay, renew every 17 s, acquire every 13 s.
    let p = start(
        &f,
        "a",
        ProcessorOptions::new().with_start(ProcessorStart::Beginning),
        &seen,
    )
    .await;
    eventually("a owns both leases", || p.owned_leases().len() == 2).await;
    write(&f.c, 0, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = std::time::Instant::now();
    p.stop().await;
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t.elapsed()
    );

    // Dropped without stop: nothing runs after the drop.
    let dropped = Seen::default();
    let p = start(&f, "b", fast(), &dropped).await;
    eventually("b owns both leases", || p.owned_leases().len() == 2).await;
    drop(p);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (changes, events) = (dropped.count(), dropped.events().len());
    for i in 1..20 {
        write(&f.c, i, 1).await;
    }
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(dropped.count(), changes, "no batch after the drop");
    assert_eq!(
        dropped.events().len(),
        events,
        "no lease write after the drop"
    );
}

/// The ids in the lease container.
async fn lease_ids(leases: &ContainerClient) -> Vec<String> {
    use futures::TryStreamExt;
    let docs: Vec<serde_json::Value> = leases.read_all_items().try_collect().await.unwrap();
    let mut ids: Vec<String> = docs
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn instances_started_together_create_one_lease_per_range_and_a_dead_creators_lock_is_passed()
{
    let f = fixture(4).await;
    // A lock left by a creator that died long ago: taken over once older than the expiration.
    f.leases
        .create_item(
            "proc.lock",
            &json!({"id": "proc.lock", "timestamp": "2000-01-01T00:00:00.000Z"}),
            None,
        )
        .await
        .unwrap();
    let seen: Vec<Seen> = (0..3).map(|_| Seen::default()).collect();
    let (a, b, c) = tokio::join!(
        start(&f, "a", fast(), &seen[0]),
        start(&f, "b", fast(), &seen[1]),
        start(&f, "c", fast(), &seen[2]),
    );
    assert_eq!(
        lease_ids(&f.leases).await,
        ["proc..0", "proc..1", "proc..2", "proc..3", "proc.info"],
        "one lease per range, the marker, no lock left"
    );
    eventually("every lease owned, within one of the fair share", || {
        let n: Vec<usize> = [&a, &b, &c]
            .iter()
            .map(|p| p.owned_leases().len())
            .collect();
        n.iter().sum::<usize>() == 4 && n.iter().max().unwrap() - n.iter().min().unwrap() <= 1
    })
    .await;
    // A later start finds the marker and creates nothing.
    let d = start(&f, "d", fast(), &Seen::default()).await;
    assert_eq!(lease_ids(&f.leases).await.len(), 5);
    for p in [a, b, c, d] {
        p.stop().await;
    }
}

#[tokio::test]
async fn a_malformed_lease_document_is_reported_and_the_others_are_still_worked_on() {
    let f = fixture(2).await;
    let seen = Seen::default();
    let p = start(&f, "a", fast(), &seen).await;
    eventually("a owns both leases", || p.owned_leases().len() == 2).await;
    p.stop().await;
    // Something else writes a document under the processor's prefix that is no lease.
    f.leases
        .create_item("proc..junk", &json!({"id": "proc..junk", "Owner": 7}), None)
        .await
        .unwrap();
    let seen = Seen::default();
    let p = start(&f, "b", fast(), &seen).await;
    eventually("b owns both real leases", || p.owned_leases().len() == 2).await;
    assert!(
        seen.events().iter().any(|e| matches!(
            e,
            ProcessorEvent::Failed { lease, error } if lease == "proc..junk" && error.contains("malformed")
        )),
        "{:?}",
        seen.events()
    );
    p.stop().await;
}

#[tokio::test]
async fn a_lease_whose_range_is_not_a_range_is_never_taken() {
    let f = fixture(1).await;
    let p = start(&f, "a", fast(), &Seen::default()).await;
    eventually("a owns the lease", || p.owned_leases().len() == 1).await;
    p.stop().await;
    let mut bad: serde_json::Value = f
        .leases
        .read_item("proc..0", "proc..0", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    bad["id"] = json!("proc..9");
    bad["LeaseToken"] = json!("9");
    bad["FeedRange"]["EffectiveRange"]["min"] = json!("zz");
    f.leases.create_item("proc..9", &bad, None).await.unwrap();
    let seen = Seen::default();
    let p = start(&f, "b", fast(), &seen).await;
    eventually("b owns the real lease", || p.owned_leases() == ["0"]).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let taken: Vec<ProcessorEvent> = seen
        .events()
        .into_iter()
        .filter(|e| matches!(e, ProcessorEvent::Acquired { lease } if lease == "9"))
        .collect();
    assert!(taken.is_empty(), "the bad lease was taken: {taken:?}");
    assert!(seen
        .events()
        .iter()
        .any(|e| matches!(e, ProcessorEvent::Failed { lease, .. } if lease == "proc..9")));
    p.stop().await;
}
