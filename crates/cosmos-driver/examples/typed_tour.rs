//! A newcomer's application on the typed handles only, against the embedded emulator: create a
//! database and a container, bulk insert, typed reads, a conditional replace with an ETag, PATCH,
//! a cross-partition ORDER BY and GROUP BY, the change feed, a failing transactional batch, read
//! many, and throughput. It prints what it does and exits non-zero on any unexpected result.
//!
//!     cargo run -p cosmos-driver --example typed_tour

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Order {
    id: String,
    customer: String,
    total: i64,
    status: String,
}

#[derive(Deserialize, Debug)]
struct PerCustomer {
    customer: String,
    orders: u64,
}

type Outcome = Result<(), Box<dyn std::error::Error>>;

/// Fails the tour with `what` unless `ok`.
fn check(ok: bool, what: impl Into<String>) -> Outcome {
    if ok {
        Ok(())
    } else {
        Err(format!("unexpected: {}", what.into()).into())
    }
}

fn order(i: usize) -> Order {
    Order {
        id: format!("o-{i:03}"),
        customer: format!("c-{}", i % 7),
        total: (i as i64 * 37) % 1000,
        status: "new".into(),
    }
}

const ORDERS: usize = 120;

#[tokio::main]
async fn main() -> Outcome {
    let emulator = EmulatorBuilder::new().start().await?;
    let mut options =
        DriverOptions::new(emulator.endpoint(), Credential::master_key(emulator.key())?);
    if let Some(pem) = emulator.tls_cert_pem() {
        options = options.with_extra_trusted_cert_pem(pem.as_bytes().to_vec());
    }
    let driver = CosmosDriver::new(options).await?;

    // A database and a container with its own throughput.
    let shop = driver.create_database("shop", None).await?;
    let key = PartitionKeyDefinition::new("/customer")?;
    shop.create_container(
        &ContainerProperties::new("orders", &key),
        Some(ThroughputProperties::manual(400)),
    )
    .await?;
    let orders = shop.container("orders");
    println!("created database shop and container orders (/customer, 400 RU/s)");

    // Bulk insert.
    let ops = (0..ORDERS)
        .map(|i| {
            let o = order(i);
            BulkOperation::create(o.customer.clone(), &o)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bulk = orders.bulk().run_iter(ops).await?;
    check(
        bulk.succeeded() == ORDERS,
        format!("{} of {ORDERS} bulk creates succeeded", bulk.succeeded()),
    )?;
    println!(
        "bulk inserted {ORDERS} orders for {:.1} RU",
        bulk.request_charge()
    );

    // A typed read.
    let read = orders.read_item::<Order>("c-3", "o-003", None).await?;
    let etag = read.etag().ok_or("a read without an ETag")?.to_owned();
    let first = read.item()?;
    check(first == order(3), format!("read {first:?}"))?;
    println!(
        "read o-003 ({:.2} RU): total {}",
        read.request_charge(),
        first.total
    );

    // A conditional replace: with the current ETag it succeeds, with the old one it fails.
    let paid = Order {
        status: "paid".into(),
        ..first.clone()
    };
    let replaced = orders
        .replace_item(
            "c-3",
            "o-003",
            &paid,
            Some(ItemOptions::new().with_if_match(etag.clone())),
        )
        .await?;
    check(
        replaced.item()? == paid,
        "the replace answered another item",
    )?;
    let stale = orders
        .replace_item(
            "c-3",
            "o-003",
            &first,
            Some(ItemOptions::new().with_if_match(etag)),
        )
        .await;
    match stale {
        Err(e) if e.is_precondition_failed() => {
            println!("replace with the current ETag: 200; with the old ETag: 412, as it should")
        }
        Err(e) => return Err(format!("unexpected: a stale replace failed with {e}").into()),
        Ok(_) => return Err("unexpected: a replace with a stale ETag succeeded".into()),
    }

    // PATCH: one billed charge in the response and its diagnostics.
    let patched = orders
        .patch_item::<Order>(
            "c-3",
            "o-003",
            &PatchInstructions::new()
                .increment("/total", 5)
                .set("/status", "shipped".into()),
            None,
        )
        .await?;
    let after = patched.item()?;
    check(
        after.total == first.total + 5 && after.status == "shipped",
        format!("patched {after:?}"),
    )?;
    check(
        patched.request_charge() == patched.diagnostics().request_charge(),
        "the PATCH's charge and its diagnostics disagree",
    )?;
    println!(
        "patched o-003: total {} status {} ({:.2} RU billed, {} requests)",
        after.total,
        after.status,
        patched.request_charge(),
        patched.diagnostics().requests().len()
    );

    // A cross-partition ORDER BY.
    let mut top = orders.query_items::<Order>(
        Query::new("SELECT TOP @n * FROM c ORDER BY c.total DESC").with_parameter("@n", 5)?,
        QueryScope::CrossPartition,
    );
    let mut totals = Vec::new();
    while let Some(o) = top.next().await {
        totals.push(o?.total);
    }
    check(
        totals.len() == 5 && totals.windows(2).all(|w| w[0] >= w[1]),
        format!("top totals {totals:?}"),
    )?;
    println!(
        "top 5 totals: {totals:?} ({:.2} RU)",
        top.request_charge_so_far()
    );

    // A cross-partition GROUP BY.
    let groups: Vec<PerCustomer> = orders
        .query_items(
            Query::new("SELECT c.customer, COUNT(1) AS orders FROM c GROUP BY c.customer"),
            QueryScope::CrossPartition,
        )
        .try_collect()
        .await?;
    let counted: u64 = groups.iter().map(|g| g.orders).sum();
    check(
        groups.len() == 7 && counted == ORDERS as u64,
        format!("groups {groups:?}"),
    )?;
    for g in &groups {
        println!("  {}: {} orders", g.customer, g.orders);
    }

    // The change feed from the beginning: every order once, at its latest version.
    let mut feed = orders.change_feed::<Order>(ChangeFeedStart::Beginning, FeedScope::Container);
    let mut changed = 0;
    let mut shipped = 0;
    while let Some(o) = feed.next().await {
        let o = o?;
        changed += 1;
        if o.status == "shipped" {
            shipped += 1;
        }
    }
    check(
        changed == ORDERS && shipped == 1,
        format!("the change feed gave {changed} orders, {shipped} shipped"),
    )?;
    println!(
        "change feed: {changed} orders ({:.2} RU)",
        feed.request_charge_so_far()
    );

    // A transactional batch that fails: nothing of it is applied.
    let failed = orders
        .transactional_batch("c-1")
        .create(&Order {
            id: "new-1".into(),
            ..order(1)
        })?
        .create(&order(1))?
        .execute()
        .await;
    match failed {
        Err(e) if e.is_conflict() => println!("batch rolled back: {}", e.message()),
        Err(e) => return Err(format!("unexpected: the batch failed with {e}").into()),
        Ok(_) => return Err("unexpected: a batch creating an existing id succeeded".into()),
    }
    let absent = orders.read_item::<Order>("c-1", "new-1", None).await;
    check(
        matches!(&absent, Err(e) if e.is_not_found()),
        "the failed batch applied an operation",
    )?;

    // Read many: the items that exist, in the order asked.
    let wanted = [
        (PartitionKey::from("c-2"), "o-002".to_owned()),
        (PartitionKey::from("c-0"), "missing".to_owned()),
        (PartitionKey::from("c-5"), "o-012".to_owned()),
    ];
    let many = orders.read_many::<Order>(&wanted).await?;
    let ids: Vec<&str> = many.items().iter().map(|o| o.id.as_str()).collect();
    check(
        ids == ["o-002", "o-012"],
        format!("read many answered {ids:?}"),
    )?;
    println!("read many: {ids:?} ({:.2} RU)", many.request_charge());

    // Throughput: read, replace, read again.
    let before = orders
        .read_throughput()
        .await?
        .throughput()
        .manual_throughput();
    check(before == Some(400), format!("throughput {before:?}"))?;
    orders
        .replace_throughput(ThroughputProperties::manual(1000))
        .await?;
    let now = orders
        .read_throughput()
        .await?
        .throughput()
        .manual_throughput();
    check(
        now == Some(1000),
        format!("throughput after replace {now:?}"),
    )?;
    println!("throughput: 400 -> 1000 RU/s");

    println!("the tour is complete");
    Ok(())
}
