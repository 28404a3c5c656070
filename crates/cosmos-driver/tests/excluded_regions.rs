//! Excluded regions are a hard constraint under every retry trigger, asserted with the emulator's
//! per-region request counters; "all eligible regions excluded" ends the operation at once.

use crate::common;

use cosmos_driver::{CosmosOperation, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};
use serde_json::json;

const REGIONS: [&str; 3] = ["East US", "West US", "North Europe"];

fn triggers() -> Vec<(&'static str, Reaction)> {
    vec![
        ("503", Reaction::respond(503, 0)),
        ("500", Reaction::respond(500, 0)),
        ("408", Reaction::respond(408, 0)),
        ("410", Reaction::respond(410, 1002)),
        ("429/3092", Reaction::respond_retry_after(429, 3092, 1)),
        ("429", Reaction::respond_retry_after(429, 0, 1)),
        ("404/1002", Reaction::respond(404, 1002)),
        ("403/1008", Reaction::respond(403, 1008)),
        ("403/3", Reaction::respond(403, 3)),
        ("connection closed", Reaction::Close),
    ]
}

#[tokio::test]
async fn reads_never_reach_an_excluded_region_whatever_the_trigger() {
    for excluded in ["West US", "East US"] {
        for (name, reaction) in triggers() {
            let emu = common::start(EmulatorBuilder::new()).await;
            let driver =
                common::driver(common::options(&emu).with_preferred_regions(REGIONS)).await;
            let c = common::container(&driver, "db", "c").await;
            common::create_item(&driver, &c, "a", "p", 1).await;
            let _fault = emu
                .faults()
                .add(FaultRule::new(reaction).for_ops([OpKind::Read]));
            let options = OperationOptions::new().with_excluded_regions([excluded]);
            let result = driver.execute(common::read(&c, "a", "p"), &options).await;
            let e = result.expect_err(name);
            assert!(!e.diagnostics().requests().is_empty(), "{name}");
            assert_eq!(
                emu.counters().get(excluded, OpKind::Read),
                0,
                "trigger {name}, excluded {excluded}: {e}"
            );
            for row in e.diagnostics().requests() {
                assert_ne!(row.region().unwrap().as_str(), excluded, "{name}");
            }
        }
    }
}

#[tokio::test]
async fn session_retries_do_not_escalate_to_an_excluded_hub() {
    let emu = common::start(
        EmulatorBuilder::new().region_replication_lag("West US", ReplicationLag::fixed_ms(60_000)),
    )
    .await;
    let driver =
        common::driver(common::options(&emu).with_preferred_regions(["West US", "East US"])).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let before = emu.counters().get("East US", OpKind::Read);
    let options = OperationOptions::new().with_excluded_regions(["East US", "North Europe"]);
    let e = driver
        .execute(common::read(&c, "a", "p"), &options)
        .await
        .unwrap_err();
    assert!(e.is_read_session_not_available(), "{e}");
    assert_eq!(emu.counters().get("East US", OpKind::Read), before);
    assert_eq!(common::regions_of(e.diagnostics()), ["West US", "West US"]);
}

#[tokio::test]
async fn all_regions_excluded_ends_at_once_without_a_request() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let total_before: u64 = REGIONS.iter().map(|r| emu.counters().region_total(r)).sum();

    let all = OperationOptions::new().with_excluded_regions(REGIONS);
    let e = driver
        .execute(common::read(&c, "a", "p"), &all)
        .await
        .unwrap_err();
    assert!(e.is_no_eligible_region(), "{e}");
    assert!(e.message().contains("excluded"), "{}", e.message());
    assert!(e.diagnostics().requests().is_empty());

    let hub_only = OperationOptions::new().with_excluded_regions(["East US"]);
    let write = CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "b", "pk": "p"}))
        .unwrap();
    let e = driver.execute(write, &hub_only).await.unwrap_err();
    assert!(
        e.is_no_eligible_region(),
        "a single-write account's only write region is excluded: {e}"
    );

    let total_after: u64 = REGIONS.iter().map(|r| emu.counters().region_total(r)).sum();
    assert_eq!(total_before, total_after, "no request was sent");
}

/// The partition key range listing a cross-partition query, the change feed or read many reads
/// on the caller's behalf honors the caller's options: an excluded region sees none of the
/// operation's requests, the listing included.
#[tokio::test]
async fn range_listings_follow_the_operations_excluded_regions() {
    use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
    use cosmos_driver::query::{Query, QueryOptions, QueryScope};
    use cosmos_driver::{ChangeFeedOptions, PartitionKey};
    use futures::TryStreamExt;
    const WEST: &str = "West US";
    for kind in ["query", "change feed", "read many"] {
        let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
        let driver = common::driver(common::options(&emu).with_preferred_regions([
            WEST,
            "North Europe",
            "East US",
        ]))
        .await;
        let c = common::container(&driver, "db", "c").await;
        for i in 0..4 {
            common::create_item(&driver, &c, &format!("i{i}"), &format!("p{i}"), i).await;
        }
        let client = driver.container("db", "c");
        let options = OperationOptions::new().with_excluded_regions([WEST]);
        let west_before: u64 = emu.counters().region_total(WEST);
        match kind {
            "query" => {
                let docs: Vec<serde_json::Value> = client
                    .query_items_with(
                        Query::new("SELECT * FROM c"),
                        QueryScope::CrossPartition,
                        QueryOptions::new().with_request_options(options.clone()),
                    )
                    .try_collect()
                    .await
                    .unwrap();
                assert_eq!(docs.len(), 4);
            }
            "change feed" => {
                let mut feed = client.change_feed_with::<serde_json::Value>(
                    ChangeFeedStart::Beginning,
                    FeedScope::Container,
                    ChangeFeedOptions {
                        request: options.clone(),
                        ..ChangeFeedOptions::default()
                    },
                );
                feed.next_page().await.unwrap();
            }
            _ => {
                let wanted: Vec<(PartitionKey, String)> = (0..4)
                    .map(|i| (PartitionKey::from(format!("p{i}")), format!("i{i}")))
                    .collect();
                let r = client
                    .read_many_with::<serde_json::Value>(
                        &wanted,
                        cosmos_driver::read_many::ReadManyOptions {
                            request: options.clone(),
                            ..Default::default()
                        },
                    )
                    .await
                    .unwrap();
                assert_eq!(r.items().len(), 4);
            }
        }
        assert_eq!(
            emu.counters().region_total(WEST),
            west_before,
            "{kind}: no request of the operation, nor of its range listing, went to West US"
        );
    }
}

/// Queries, the change feed and read many take per-call options like point operations: the
/// handle's options are inherited (its excluded region sees nothing), and a field set on the call
/// wins over the handle's (the call's excluded region sees nothing, the handle's is used again).
#[tokio::test]
async fn per_call_options_of_fan_outs_inherit_the_handles_and_win_over_them() {
    use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
    use cosmos_driver::query::{Query, QueryOptions, QueryScope};
    use cosmos_driver::read_many::ReadManyOptions;
    use cosmos_driver::{ChangeFeedOptions, ContainerClient, PartitionKey};
    use futures::TryStreamExt;
    const WEST: &str = "West US";
    const NORTH: &str = "North Europe";

    async fn run(kind: &str, client: &ContainerClient, call_excludes: Option<&str>) {
        match kind {
            "query" => {
                let mut options = QueryOptions::new().with_max_item_count(2);
                if let Some(r) = call_excludes {
                    options = options.with_excluded_regions([r]);
                }
                let docs: Vec<serde_json::Value> = client
                    .query_items_with(
                        Query::new("SELECT * FROM c"),
                        QueryScope::CrossPartition,
                        options,
                    )
                    .try_collect()
                    .await
                    .unwrap();
                assert_eq!(docs.len(), 4);
            }
            "change feed" => {
                let mut options = ChangeFeedOptions::new().with_max_item_count(2);
                if let Some(r) = call_excludes {
                    options = options.with_excluded_regions([r]);
                }
                let changes: Vec<serde_json::Value> = client
                    .change_feed_with(ChangeFeedStart::Beginning, FeedScope::Container, options)
                    .try_collect()
                    .await
                    .unwrap();
                assert_eq!(changes.len(), 4);
            }
            _ => {
                let wanted: Vec<(PartitionKey, String)> = (0..4)
                    .map(|i| (PartitionKey::from(format!("p{i}")), format!("i{i}")))
                    .collect();
                let mut options = ReadManyOptions::new().with_max_concurrency(2);
                if let Some(r) = call_excludes {
                    options = options.with_excluded_regions([r]);
                }
                let r = client
                    .read_many_with::<serde_json::Value>(&wanted, options)
                    .await
                    .unwrap();
                assert_eq!(r.items().len(), 4);
            }
        }
    }

    for kind in ["query", "change feed", "read many"] {
        let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
        let driver =
            common::driver(common::options(&emu).with_preferred_regions([WEST, NORTH, "East US"]))
                .await;
        let c = common::container(&driver, "db", "c").await;
        for i in 0..4 {
            common::create_item(&driver, &c, &format!("i{i}"), &format!("p{i}"), i).await;
        }
        let client = driver
            .container("db", "c")
            .with_options(OperationOptions::new().with_excluded_regions([WEST]));

        let (west, north) = (
            emu.counters().region_total(WEST),
            emu.counters().region_total(NORTH),
        );
        run(kind, &client, None).await;
        assert_eq!(
            emu.counters().region_total(WEST),
            west,
            "{kind}: the handle's exclusion holds"
        );
        assert!(
            emu.counters().region_total(NORTH) > north,
            "{kind}: the next region answered"
        );

        let (west, north) = (
            emu.counters().region_total(WEST),
            emu.counters().region_total(NORTH),
        );
        run(kind, &client, Some(NORTH)).await;
        assert_eq!(
            emu.counters().region_total(NORTH),
            north,
            "{kind}: the call's exclusion holds"
        );
        assert!(
            emu.counters().region_total(WEST) > west,
            "{kind}: the call's exclusion won"
        );
    }
}
