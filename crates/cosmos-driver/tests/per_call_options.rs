//! The per-call session token and availability strategy of a query, a change feed and a read many
//! reach every request they send: a reader with no token of its own finds a write in a lagging
//! region only with the writer's token, and a driver that does not hedge hedges the calls that ask
//! for it.

use crate::common;

use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
use cosmos_driver::hedging::{
    AvailabilityStrategy, HedgeTerminalState, HedgeThreshold, HedgingStrategy,
};
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::read_many::ReadManyOptions;
use cosmos_driver::{
    ChangeFeedOptions, ContainerClient, CosmosDriver, DiagnosticsContext, ItemOptions,
    PartitionKey, PriorityLevel, SessionToken,
};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder, ReplicationLag};
use futures::TryStreamExt;
use serde::Deserialize;
use serde_json::json;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

#[derive(Debug, Deserialize, PartialEq)]
struct Doc {
    id: String,
    pk: String,
}

/// A reader preferring `preferred`, with its own availability strategy `strategy`.
async fn reader(
    emu: &Emulator,
    preferred: [&str; 3],
    strategy: AvailabilityStrategy,
) -> CosmosDriver {
    common::driver(
        common::options(emu)
            .with_preferred_regions(preferred)
            .with_availability_strategy(strategy),
    )
    .await
}

fn keys() -> Vec<(PartitionKey, String)> {
    vec![(PartitionKey::from("p"), "a".to_owned())]
}

async fn ids_by_query(c: &ContainerClient, options: QueryOptions) -> Vec<String> {
    c.query_items_with::<Doc>(
        Query::new("SELECT * FROM c"),
        QueryScope::CrossPartition,
        options,
    )
    .try_collect::<Vec<_>>()
    .await
    .unwrap()
    .into_iter()
    .map(|d| d.id)
    .collect()
}

async fn ids_by_change_feed(c: &ContainerClient, options: ChangeFeedOptions) -> Vec<String> {
    let mut feed =
        c.change_feed_with::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container, options);
    let mut ids = Vec::new();
    loop {
        let page = feed.next_page().await.unwrap();
        let caught_up = page.is_caught_up();
        ids.extend(page.into_items().into_iter().map(|d| d.id));
        if caught_up {
            return ids;
        }
    }
}

async fn ids_by_read_many(c: &ContainerClient, options: ReadManyOptions) -> Vec<String> {
    c.read_many_with::<Doc>(&keys(), options)
        .await
        .unwrap()
        .into_items()
        .into_iter()
        .map(|d| d.id)
        .collect()
}

#[tokio::test]
async fn a_per_call_session_token_reaches_every_request_of_a_query_a_change_feed_and_a_read_many() {
    // West holds nothing written in the last minute.
    let emu = common::start(
        EmulatorBuilder::new()
            .partitions(1)
            .region_replication_lag(WEST, ReplicationLag::fixed_ms(60_000)),
    )
    .await;
    let writer = common::driver(common::options(&emu)).await;
    common::container(&writer, "db", "c").await;
    let token = writer
        .container("db", "c")
        .create_item("p", &json!({"id": "a", "pk": "p"}), None)
        .await
        .unwrap()
        .session_token()
        .expect("a write answers a session token")
        .to_owned();
    let token = || SessionToken::parse(&token).unwrap();

    // A second driver with no token of its own reads West's stale replica: the write is not there.
    let reader = reader(&emu, [WEST, EAST, NORTH], AvailabilityStrategy::Disabled).await;
    let c = reader.container("db", "c");
    assert!(ids_by_query(&c, QueryOptions::new()).await.is_empty());
    assert!(ids_by_change_feed(&c, ChangeFeedOptions::default())
        .await
        .is_empty());
    assert!(ids_by_read_many(&c, ReadManyOptions::new())
        .await
        .is_empty());

    // With the writer's token on the call, West refuses its stale replica and the answer comes
    // from a region that has the write.
    let want = ["a".to_owned()];
    assert_eq!(
        ids_by_query(&c, QueryOptions::new().with_session_token(token())).await,
        want
    );
    assert_eq!(
        ids_by_change_feed(&c, ChangeFeedOptions::default().with_session_token(token())).await,
        want
    );
    assert_eq!(
        ids_by_read_many(&c, ReadManyOptions::new().with_session_token(token())).await,
        want
    );
}

fn hedging(ms: u64) -> AvailabilityStrategy {
    AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(std::time::Duration::from_millis(ms)).unwrap(),
    ))
}

/// Every diagnostics context of `diagnostics` (at least one): the alternate region answered.
fn all_hedged(what: &str, diagnostics: &[DiagnosticsContext]) {
    assert!(!diagnostics.is_empty(), "{what}: no requests");
    for d in diagnostics {
        let h = d
            .hedge()
            .unwrap_or_else(|| panic!("{what}: a request that did not race"));
        assert_eq!(
            h.terminal_state(),
            HedgeTerminalState::AlternateWon,
            "{what}"
        );
        assert_eq!(
            h.response_region().map(|g| g.as_str()),
            Some(NORTH),
            "{what}"
        );
    }
}

fn none_hedged(what: &str, diagnostics: &[DiagnosticsContext]) {
    assert!(!diagnostics.is_empty(), "{what}: no requests");
    assert!(
        diagnostics.iter().all(|d| d.hedge().is_none()),
        "{what}: the driver's own strategy does not hedge"
    );
}

#[tokio::test]
async fn a_per_call_availability_strategy_hedges_a_query_a_change_feed_and_a_read_many() {
    let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
    let driver = reader(&emu, [EAST, NORTH, WEST], AvailabilityStrategy::Disabled).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    c.create_item("p", &json!({"id": "a", "pk": "p"}), None)
        .await
        .unwrap();
    let query = |options: QueryOptions| {
        c.query_items_with::<Doc>(
            Query::new("SELECT * FROM c"),
            QueryScope::CrossPartition,
            options,
        )
        .into_pages()
        .try_collect::<Vec<_>>()
    };
    let feed = |options: ChangeFeedOptions| {
        c.change_feed_with::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container, options)
            .into_pages()
            .try_collect::<Vec<_>>()
    };

    // Without a strategy on the call, the driver's (none) holds: no request races.
    let pages = query(QueryOptions::new()).await.unwrap();
    none_hedged(
        "query",
        &pages
            .iter()
            .flat_map(|p| p.diagnostics().to_vec())
            .collect::<Vec<_>>(),
    );
    let pages = feed(ChangeFeedOptions::default()).await.unwrap();
    none_hedged(
        "change feed",
        &pages
            .iter()
            .flat_map(|p| p.diagnostics().to_vec())
            .collect::<Vec<_>>(),
    );
    let answer = c
        .read_many_with::<Doc>(&keys(), ReadManyOptions::new())
        .await
        .unwrap();
    none_hedged("read many", answer.diagnostics());

    // East answers 20 s late: far past the call's 50 ms threshold; North answers every request.
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(20_000))
            .in_regions([EAST])
            .for_ops([OpKind::Query, OpKind::ReadFeed, OpKind::Read]),
    );
    let pages = query(QueryOptions::new().with_availability_strategy(hedging(50)))
        .await
        .unwrap();
    let ids: Vec<&str> = pages
        .iter()
        .flat_map(|p| p.items().iter().map(|d| d.id.as_str()))
        .collect();
    assert_eq!(ids, ["a"]);
    // The plan request and every page request raced.
    all_hedged(
        "query",
        &pages
            .iter()
            .flat_map(|p| p.diagnostics().to_vec())
            .collect::<Vec<_>>(),
    );

    let pages = feed(ChangeFeedOptions::default().with_availability_strategy(hedging(50)))
        .await
        .unwrap();
    let ids: Vec<&str> = pages
        .iter()
        .flat_map(|p| p.items().iter().map(|d| d.id.as_str()))
        .collect();
    assert_eq!(ids, ["a"]);
    all_hedged(
        "change feed",
        &pages
            .iter()
            .flat_map(|p| p.diagnostics().to_vec())
            .collect::<Vec<_>>(),
    );

    let answer = c
        .read_many_with::<Doc>(
            &keys(),
            ReadManyOptions::new().with_availability_strategy(hedging(50)),
        )
        .await
        .unwrap();
    assert_eq!(
        answer.items(),
        [Doc {
            id: "a".into(),
            pk: "p".into()
        }]
    );
    all_hedged("read many", answer.diagnostics());
}

/// A per-call priority reaches every request of a point read, a query and a read many, and only
/// theirs: the emulator refuses (400, sub-status 4242) exactly the requests that carry
/// `x-ms-cosmos-priority-level: Low`.
#[tokio::test]
async fn a_per_call_priority_reaches_every_request_of_the_call() {
    let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    c.create_item("p", &json!({"id": "a", "pk": "p"}), None)
        .await
        .unwrap();
    let _low = emu.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-priority-level", "Low"),
    );
    let refused = |e: cosmos_driver::CosmosError| (e.status(), e.sub_status());
    let low = PriorityLevel::Low;
    let read = c
        .read_item::<Doc>("p", "a", Some(ItemOptions::new().with_priority_level(low)))
        .await
        .map(|_| ())
        .map_err(refused);
    assert_eq!(read, Err((Some(400), Some(4242))), "point read");
    let query = c
        .query_items_with::<Doc>(
            Query::new("SELECT * FROM c"),
            QueryScope::CrossPartition,
            QueryOptions::new().with_priority_level(low),
        )
        .try_collect::<Vec<_>>()
        .await
        .map(|_| ())
        .map_err(refused);
    assert_eq!(query, Err((Some(400), Some(4242))), "query");
    let many = c
        .read_many_with::<Doc>(&keys(), ReadManyOptions::new().with_priority_level(low))
        .await
        .map(|_| ())
        .map_err(refused);
    assert_eq!(many, Err((Some(400), Some(4242))), "read many");
    // High priority, and no priority, are served.
    let high = ItemOptions::new().with_priority_level(PriorityLevel::High);
    assert!(c.read_item::<Doc>("p", "a", Some(high)).await.is_ok());
    assert_eq!(ids_by_query(&c, QueryOptions::new()).await, ["a"]);
    assert_eq!(ids_by_read_many(&c, ReadManyOptions::new()).await, ["a"]);
}
