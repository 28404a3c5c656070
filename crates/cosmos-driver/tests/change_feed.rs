//! The change feed (pull model) over real HTTP against the embedded emulator: every range read,
//! polls that end on "nothing new" and resume from one continuation string, a consumer keeping up
//! with a concurrent writer across a split, feed ranges spread over consumers, a partition key's
//! feed, all versions and deletes with their metadata, and bad continuations refused.

use crate::common;

use std::collections::BTreeMap;

use cosmos_driver::change_feed::{
    ChangeFeedItem, ChangeFeedMode, ChangeFeedStart, ChangeOperation, FeedRange, FeedScope,
};
use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::{ChangeFeed, ChangeFeedOptions, ContainerClient, CosmosDriver};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder, ReplicationLag};
use futures::TryStreamExt;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, Clone, PartialEq)]
struct Doc {
    id: String,
    pk: String,
    n: i64,
}

struct Fixture {
    emu: Emulator,
    driver: CosmosDriver,
    c: ContainerClient,
}

async fn fixture(partitions: usize) -> Fixture {
    let emu = common::start(EmulatorBuilder::new().partitions(partitions)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    Fixture { emu, driver, c }
}

async fn write(c: &ContainerClient, i: usize, n: i64) {
    let pk = format!("p{}", i % 17);
    c.upsert_item(
        pk.as_str(),
        &json!({"id": format!("d{i}"), "pk": pk, "n": n}),
        None,
    )
    .await
    .expect("write");
}

/// Reads one poll of `feed` to its end: the changes, the pages, and the continuation.
async fn drain(feed: ChangeFeed<Doc>) -> (Vec<Doc>, usize, String) {
    let pages: Vec<_> = feed.into_pages().try_collect().await.expect("the poll");
    let last = pages.last().expect("a poll ends with a page");
    assert!(last.is_caught_up(), "a poll ends with the empty page");
    let token = last.continuation().to_owned();
    let count = pages.len();
    let docs = pages.into_iter().flat_map(|p| p.into_items()).collect();
    (docs, count, token)
}

fn counts(docs: &[Doc]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for d in docs {
        *m.entry(d.id.clone()).or_insert(0) += 1;
    }
    m
}

#[tokio::test]
async fn every_change_once_then_an_empty_poll_then_only_what_is_new() {
    let f = fixture(4).await;
    for i in 0..60 {
        write(&f.c, i, 0).await;
    }
    let opts = ChangeFeedOptions {
        max_item_count: Some(7),
        ..ChangeFeedOptions::default()
    };
    let feed = f.c.change_feed_with::<Doc>(
        ChangeFeedStart::Beginning,
        FeedScope::Container,
        opts.clone(),
    );
    let (docs, pages, token) = drain(feed).await;
    assert_eq!(docs.len(), 60);
    assert!(counts(&docs).values().all(|&n| n == 1));
    assert!(pages > 60 / 7, "pages of at most 7 changes ({pages} pages)");

    // Nothing new: the poll is one empty page, and the continuation still works.
    let again = f.c.change_feed_with::<Doc>(
        ChangeFeedStart::Continuation(token.clone()),
        FeedScope::Container,
        opts.clone(),
    );
    let (docs, pages, token) = drain(again).await;
    assert!(docs.is_empty());
    assert_eq!(pages, 1);

    for i in 55..70 {
        write(&f.c, i, 1).await;
    }
    let after = f.c.change_feed_with::<Doc>(
        ChangeFeedStart::Continuation(token),
        FeedScope::Container,
        opts,
    );
    let (docs, _, _) = drain(after).await;
    let mut ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
    ids.sort();
    let mut want: Vec<String> = (55..70).map(|i| format!("d{i}")).collect();
    want.sort();
    assert_eq!(ids, want, "only the changes after the continuation");
    assert!(docs.iter().all(|d| d.n == 1));
}

#[tokio::test]
async fn a_consumer_keeps_up_with_a_concurrent_writer_across_a_split() {
    keep_up_across_a_split(fixture(2).await).await;
}

#[tokio::test]
async fn a_consumer_reading_from_a_lagging_region_keeps_up_across_a_split() {
    // The consumer prefers West, which holds nothing written in the last minute: with the
    // writer's session token West refuses its stale replica and the pages come from elsewhere.
    let builder =
        EmulatorBuilder::new().region_replication_lag(WEST, ReplicationLag::fixed_ms(60_000));
    let emu = common::start(builder.partitions(2)).await;
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([WEST, EAST, NORTH])
            .with_availability_strategy(hedging(50)),
    )
    .await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    let f = Fixture { emu, driver, c };
    keep_up_across_a_split(f).await;
}

async fn keep_up_across_a_split(f: Fixture) {
    let writer_c = f.c.clone();
    let writer = tokio::spawn(async move {
        for i in 0..240 {
            write(&writer_c, i, i as i64).await;
        }
    });
    let mut seen: Vec<Doc> = Vec::new();
    let mut feed =
        f.c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container);
    let mut split = false;
    let mut resumed = false;
    for round in 0.. {
        assert!(round < 100_000, "the consumer did not catch up");
        let page = feed.next_page().await.expect("a page");
        let caught_up = page.is_caught_up();
        seen.extend(page.into_items());
        if !split && seen.len() >= 60 {
            common::split_range(&f.emu, "db", "c", "0").await;
            split = true;
        }
        if split && !resumed && seen.len() >= 120 {
            // A new consumer takes over from the continuation (made before or after the split).
            let token = feed.continuation().expect("a continuation");
            feed =
                f.c.change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container);
            resumed = true;
        }
        if caught_up && writer.is_finished() && seen.len() >= 240 {
            break;
        }
        if caught_up {
            tokio::task::yield_now().await;
        }
    }
    writer.await.unwrap();
    // One more poll after the writer stopped: nothing is left unseen.
    let (rest, _, _) = drain(feed).await;
    seen.extend(rest);
    assert!(split && resumed);
    let c = counts(&seen);
    assert_eq!(c.len(), 240, "every write seen");
    assert!(
        c.values().all(|&n| n == 1),
        "every write seen exactly once: {:?}",
        c.iter().filter(|(_, n)| **n != 1).collect::<Vec<_>>()
    );
    assert_eq!(
        f.c.feed_ranges().await.unwrap().len(),
        3,
        "the split happened"
    );
}

#[tokio::test]
async fn feed_ranges_spread_consumers_and_part_of_a_range_reads_only_its_keys() {
    let f = fixture(4).await;
    for i in 0..80 {
        write(&f.c, i, 0).await;
    }
    let ranges = f.c.feed_ranges().await.unwrap();
    assert_eq!(ranges.len(), 4);
    let mut all = Vec::new();
    for r in &ranges {
        let carried = FeedRange::from_token(&r.to_token()).unwrap();
        assert_eq!(&carried, r);
        let feed =
            f.c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::FeedRange(carried));
        let (docs, _, _) = drain(feed).await;
        all.extend(docs);
    }
    let c = counts(&all);
    assert_eq!(c.len(), 80);
    assert!(c.values().all(|&n| n == 1), "the ranges do not overlap");

    // Two halves of one range together read what the whole range reads.
    let r = &ranges[1];
    let whole =
        drain(f.c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::FeedRange(r.clone())))
            .await
            .0;
    let mid = midpoint(r.min(), r.max());
    let mut halves = Vec::new();
    for part in [
        FeedRange::new(r.min(), mid.clone()).unwrap(),
        FeedRange::new(mid.clone(), r.max()).unwrap(),
    ] {
        let docs =
            drain(f.c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::FeedRange(part)))
                .await
                .0;
        halves.push(docs);
    }
    assert!(!halves[0].is_empty() || !halves[1].is_empty());
    let mut joined: Vec<String> = halves.concat().iter().map(|d| d.id.clone()).collect();
    let mut want: Vec<String> = whole.iter().map(|d| d.id.clone()).collect();
    joined.sort();
    want.sort();
    assert_eq!(joined, want);
}

/// A bound halfway between two 32-digit bounds (`""` counts as zero, `"FF"` as the end).
fn midpoint(min: &str, max: &str) -> String {
    let parse = |s: &str| -> u128 {
        match s {
            "" => 0,
            "FF" => 1u128 << 126,
            hex => u128::from_str_radix(hex, 16).unwrap(),
        }
    };
    format!("{:032X}", (parse(min) + parse(max)) / 2)
}

#[tokio::test]
async fn a_partition_key_feed_reads_only_that_key() {
    let f = fixture(4).await;
    for i in 0..51 {
        write(&f.c, i, 0).await;
    }
    let feed = f.c.change_feed::<Doc>(
        ChangeFeedStart::Beginning,
        FeedScope::PartitionKey("p3".into()),
    );
    let (docs, _, token) = drain(feed).await;
    assert_eq!(docs.len(), 3, "d3, d20, d37");
    assert!(docs.iter().all(|d| d.pk == "p3"));
    write(&f.c, 3, 9).await;
    write(&f.c, 4, 9).await;
    let (docs, _, _) = drain(f.c.change_feed::<Doc>(
        ChangeFeedStart::Continuation(token.clone()),
        FeedScope::PartitionKey("p3".into()),
    ))
    .await;
    assert_eq!(
        docs,
        vec![Doc {
            id: "d3".into(),
            pk: "p3".into(),
            n: 9
        }]
    );
    let wrong =
        f.c.change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container)
            .next_page()
            .await
            .unwrap_err();
    assert!(wrong.is_invalid_input(), "{wrong}");
}

#[tokio::test]
async fn all_versions_and_deletes_report_each_change_with_its_metadata() {
    let f = fixture(2).await;
    let opts = ChangeFeedOptions {
        mode: ChangeFeedMode::AllVersionsAndDeletes,
        ..ChangeFeedOptions::default()
    };
    let mut feed = f.c.change_feed_with::<ChangeFeedItem<Doc>>(
        ChangeFeedStart::Now,
        FeedScope::Container,
        opts.clone(),
    );
    assert!(feed.next_page().await.unwrap().is_caught_up());
    let token = feed.continuation().unwrap();
    write(&f.c, 1, 1).await;
    write(&f.c, 1, 2).await;
    f.c.delete_item("p1", "d1", None).await.unwrap();
    let feed = f.c.change_feed_with::<ChangeFeedItem<Doc>>(
        ChangeFeedStart::Continuation(token),
        FeedScope::Container,
        opts,
    );
    let pages: Vec<_> = feed.into_pages().try_collect().await.unwrap();
    let changes: Vec<ChangeFeedItem<Doc>> =
        pages.into_iter().flat_map(|p| p.into_items()).collect();
    let ops: Vec<ChangeOperation> = changes.iter().map(|c| c.metadata.operation_type).collect();
    assert_eq!(
        ops,
        [
            ChangeOperation::Create,
            ChangeOperation::Replace,
            ChangeOperation::Delete
        ]
    );
    assert_eq!(changes[0].current.as_ref().unwrap().n, 1);
    assert_eq!(changes[1].current.as_ref().unwrap().n, 2);
    assert!(changes[2].current.is_none());
    assert_eq!(changes[2].metadata.id.as_deref(), Some("d1"));
    assert!(changes
        .windows(2)
        .all(|w| w[0].metadata.lsn < w[1].metadata.lsn));
    assert_eq!(
        changes[2].metadata.previous_image_lsn,
        Some(changes[1].metadata.lsn)
    );
    if let Some(previous) = &changes[2].previous {
        assert_eq!(previous.n, 2, "the deleted version");
    }
    assert!(f
        .c
        .change_feed_with::<ChangeFeedItem<Doc>>(
            ChangeFeedStart::Beginning,
            FeedScope::Container,
            ChangeFeedOptions {
                mode: ChangeFeedMode::AllVersionsAndDeletes,
                ..ChangeFeedOptions::default()
            },
        )
        .next_page()
        .await
        .unwrap_err()
        .is_invalid_input());
}

#[tokio::test]
async fn bad_continuations_are_refused_with_the_reason() {
    let f = fixture(1).await;
    for bad in ["", "not base64!", "eyJ2IjoxfQ"] {
        let err =
            f.c.change_feed::<Doc>(
                ChangeFeedStart::Continuation(bad.into()),
                FeedScope::Container,
            )
            .next_page()
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{bad}: {err}");
        assert!(err.message().contains("continuation"), "{err}");
    }
    let other = f.driver.container("db", "other");
    let token =
        f.c.change_feed::<Doc>(ChangeFeedStart::Now, FeedScope::Container)
            .continuation()
            .unwrap();
    let err = other
        .change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container)
        .next_page()
        .await
        .unwrap_err();
    assert!(err.message().contains("another container"), "{err}");
}

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

fn hedging(ms: u64) -> cosmos_driver::hedging::AvailabilityStrategy {
    use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
    AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(std::time::Duration::from_millis(ms)).unwrap(),
    ))
}

/// Three regions (East takes writes), 4 ranges, reads preferring `preferred`, hedged after 50 ms.
async fn three_regions(builder: EmulatorBuilder, preferred: [&str; 3]) -> Fixture {
    let emu = common::start(builder.partitions(4)).await;
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions(preferred)
            .with_availability_strategy(hedging(50)),
    )
    .await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    Fixture { emu, driver, c }
}

fn slow_feed(region: &str, ms: u64) -> FaultRule {
    FaultRule::new(Reaction::delay_ms(ms))
        .in_regions([region])
        .for_ops([OpKind::ReadFeed])
}

#[tokio::test]
async fn a_slow_primary_region_the_alternate_serves_every_page_and_nothing_is_lost() {
    let f = three_regions(EmulatorBuilder::new(), [EAST, NORTH, WEST]).await;
    for i in 0..50 {
        write(&f.c, i, 0).await;
    }
    // East serves change-feed pages 20 s late: far past the 50 ms threshold.
    let slow = f.emu.faults().add(slow_feed(EAST, 20_000));
    let opts = ChangeFeedOptions {
        max_item_count: Some(9),
        ..ChangeFeedOptions::default()
    };
    let feed = f.c.change_feed_with::<Doc>(
        ChangeFeedStart::Beginning,
        FeedScope::Container,
        opts.clone(),
    );
    let pages: Vec<_> = feed.into_pages().try_collect().await.unwrap();
    let token = pages.last().unwrap().continuation().to_owned();
    let mut hedged = 0;
    for p in &pages {
        for d in p.diagnostics() {
            let h = d.hedge().expect("each page request went through the race");
            assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
            assert_eq!(h.response_region().map(|g| g.as_str()), Some(NORTH));
            hedged += 1;
        }
    }
    assert!(hedged >= 4 + 50 / 9, "{hedged} page requests");
    let docs: Vec<Doc> = pages.into_iter().flat_map(|p| p.into_items()).collect();
    let c = counts(&docs);
    assert_eq!(c.len(), 50);
    assert!(c.values().all(|&n| n == 1));

    // The alternate's continuation is good in the primary region: only what is new follows.
    drop(slow);
    for i in 50..60 {
        write(&f.c, i, 0).await;
    }
    let after = f.c.change_feed_with::<Doc>(
        ChangeFeedStart::Continuation(token),
        FeedScope::Container,
        opts,
    );
    let (docs, _, _) = drain(after).await;
    let mut ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
    ids.sort();
    let mut want: Vec<String> = (50..60).map(|i| format!("d{i}")).collect();
    want.sort();
    assert_eq!(ids, want);
}

#[tokio::test]
async fn a_lagging_alternate_honours_the_session_token_and_the_continuation() {
    // West holds nothing written in the last minute.
    let builder =
        EmulatorBuilder::new().region_replication_lag(WEST, ReplicationLag::fixed_ms(60_000));
    let f = three_regions(builder, [EAST, WEST, NORTH]).await;
    for i in 0..40 {
        write(&f.c, i, 0).await;
    }
    // East is slow enough that every page is hedged to West. The consumer shares the writer's
    // session, so West refuses to answer from its stale replica and East's pages are returned.
    let slow = f.emu.faults().add(slow_feed(EAST, 300));
    let feed =
        f.c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container);
    let (docs, _, token) = drain(feed).await;
    let c = counts(&docs);
    assert_eq!(c.len(), 40, "nothing skipped");
    assert!(c.values().all(|&n| n == 1), "nothing repeated");
    let west_pages = f.emu.counters().get(WEST, OpKind::ReadFeed);
    assert!(west_pages > 0, "West was asked");

    // A consumer without the session (another driver) resumes from that continuation while
    // East is slow: West's answer, from a replica behind the continuation, must neither repeat
    // the changes before it nor move the position past anything.
    let other = common::driver(
        common::options(&f.emu)
            .with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(hedging(50)),
    )
    .await
    .container("db", "c");
    for i in 40..45 {
        write(&f.c, i, i as i64).await;
    }
    let lagging =
        other.change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container);
    let (docs, _, token) = drain(lagging).await;
    assert!(
        f.emu.counters().get(WEST, OpKind::ReadFeed) > west_pages,
        "West was asked for the resumed pages"
    );
    let early: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
    assert!(
        docs.iter().all(|d| d.n >= 40),
        "nothing before the continuation came back: {early:?}"
    );
    drop(slow);
    let (rest, _, _) =
        drain(other.change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container))
            .await;
    let mut ids: Vec<String> = early
        .into_iter()
        .chain(rest.iter().map(|d| d.id.clone()))
        .collect();
    ids.sort();
    let mut want: Vec<String> = (40..45).map(|i| format!("d{i}")).collect();
    want.sort();
    assert_eq!(ids, want, "each new change exactly once");
}
