//! Multi-region writes of one item within the replication window conflict, and the container's
//! conflict resolution policy decides, over real HTTP: last writer wins on a custom path keeps
//! the version with the higher value there; Custom mode without a procedure keeps the first
//! version and puts the other in the conflicts feed; writes a region has already seen do not
//! conflict; a delete wins over a concurrent write under last writer wins and is recorded as a
//! `delete` conflict under Custom; one conflict is read and deleted by its id. The region whose
//! write does not stand serves it (point reads, queries, paged queries) until the other version
//! reaches it, then every region reads the outcome, the conflict shows in the feed and a merge
//! result is read everywhere. A merge procedure gets the items a write collides with on a unique
//! key. The conflicts feed survives a restart with a data directory, and a directory without
//! conflict records loads with an empty feed.

use crate::common;

use std::time::Duration;

use common::{east_and_lagging_west, east_west, pk_header, Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const LAG_MS: u64 = 400;

/// A two-region multi-write emulator builder: each region sees the other's writes `LAG_MS` later.
fn two_writers() -> EmulatorBuilder {
    east_and_lagging_west(LAG_MS)
        .region_replication_lag("East US", ReplicationLag::fixed_ms(LAG_MS))
        .multi_write(true)
}

/// A two-region multi-write emulator (each region sees the other's writes `LAG_MS` later) with
/// database `db` and container `c` under `policy`.
async fn start(policy: Value) -> (cosmos_emulator::Emulator, TestClient) {
    start_on(two_writers(), policy).await
}

/// The emulator `builder` starts, with database `db` and container `c` under `policy`.
async fn start_on(
    builder: EmulatorBuilder,
    policy: Value,
) -> (cosmos_emulator::Emulator, TestClient) {
    let emu = builder.start().await.expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "conflictResolutionPolicy": policy});
    let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
    assert_eq!(r.status, 201, "{r:?}");
    (emu, c)
}

async fn create(c: &TestClient, base: &str, doc: &Value) -> Resp {
    c.create_item(base, "db", "c", doc).await
}

async fn upsert(c: &TestClient, base: &str, doc: &Value) -> Resp {
    let pk = pk_header(&doc["pk"]);
    c.post_json(
        base,
        "/dbs/db/colls/c/docs",
        &[
            ("x-ms-documentdb-partitionkey", &pk),
            ("x-ms-documentdb-is-upsert", "true"),
        ],
        doc,
    )
    .await
}

async fn settled(c: &TestClient, base: &str) -> Value {
    tokio::time::sleep(Duration::from_millis(LAG_MS + 200)).await;
    let r = c.read_item(base, "db", "c", "x", &json!("p"), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

async fn conflicts(c: &TestClient, base: &str) -> Vec<Value> {
    let r = c.get(base, "/dbs/db/colls/c/conflicts", &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Conflicts"].as_array().unwrap().clone()
}

#[tokio::test]
async fn last_writer_wins_on_a_custom_path_keeps_the_higher_value() {
    let (emu, c) = start(json!({"mode": "LastWriterWins", "conflictResolutionPath": "/v"})).await;
    let (east, west) = east_west(&emu);
    // East writes v=10; West, not having seen it, writes v=5 after it.
    assert_eq!(
        upsert(
            &c,
            east,
            &json!({"id": "x", "pk": "p", "v": 10, "by": "east"})
        )
        .await
        .status,
        201
    );
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 5, "by": "west"}),
    )
    .await;
    assert!(
        r.status == 200 || r.status == 201,
        "both regions accept: {r:?}"
    );
    let winner = settled(&c, emu.endpoint()).await;
    assert_eq!(winner["by"], "east", "the higher /v wins: {winner}");
    assert!(
        conflicts(&c, emu.endpoint()).await.is_empty(),
        "resolved, not recorded"
    );

    // A write West has seen does not conflict: the later one stands.
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 1, "by": "west-later"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "west-later");
}

#[tokio::test]
async fn custom_mode_without_a_procedure_puts_the_loser_in_the_conflicts_feed() {
    let (emu, c) = start(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
    // Both regions create the item: West has not seen East's, so both creates are accepted.
    let r = create(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 201, "both regions accept: {r:?}");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "east");
    // Once West has seen it, a create there is refused as usual.
    let r = create(&c, west, &json!({"id": "x", "pk": "p", "by": "west-again"})).await;
    assert_eq!(r.status, 409, "{r:?}");
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    let conflict = &feed[0];
    assert_eq!(conflict["resourceType"], "document");
    assert_eq!(conflict["operationType"], "create");
    let content: Value = serde_json::from_str(conflict["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["by"], "west");
    assert_eq!(conflict["resourceId"], content["_rid"]);
    for field in ["id", "_rid", "_self", "_etag", "_ts"] {
        assert!(!conflict[field].is_null(), "{field}: {conflict}");
    }
}

async fn delete(c: &TestClient, base: &str) -> Resp {
    c.send_with_pk(
        base,
        Method::DELETE,
        "/dbs/db/colls/c/docs/x",
        &json!("p"),
        &[],
        None,
    )
    .await
}

async fn gone(c: &TestClient, base: &str) -> bool {
    tokio::time::sleep(Duration::from_millis(LAG_MS + 200)).await;
    let r = c.read_item(base, "db", "c", "x", &json!("p"), &[]).await;
    assert!(r.status == 200 || r.status == 404, "{r:?}");
    r.status == 404
}

/// Creates item x in East and waits until West has it.
async fn seed(c: &TestClient, emu: &cosmos_emulator::Emulator) {
    let (east, _) = east_west(emu);
    let r = create(
        c,
        east,
        &json!({"id": "x", "pk": "p", "by": "seed", "v": 0}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert!(!gone(c, emu.endpoint()).await);
}

#[tokio::test]
async fn under_last_writer_wins_a_delete_wins_over_a_concurrent_write() {
    // Delete first, then a write from the region that had not seen it: the delete stands, even
    // with a higher value at the path.
    let (emu, c) = start(json!({"mode": "LastWriterWins", "conflictResolutionPath": "/v"})).await;
    let (east, west) = east_west(&emu);
    seed(&c, &emu).await;
    assert_eq!(delete(&c, east).await.status, 204);
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 99, "by": "west"}),
    )
    .await;
    assert!(r.status == 200 || r.status == 201, "accepted: {r:?}");
    assert!(gone(&c, emu.endpoint()).await, "the delete wins");

    // A write first, then a delete from the region that had not seen it: the delete stands.
    seed(&c, &emu).await;
    let r = upsert(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "v": 99, "by": "east"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(delete(&c, west).await.status, 204);
    assert!(gone(&c, emu.endpoint()).await, "the delete wins");
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
}

#[tokio::test]
async fn under_custom_a_delete_conflict_is_recorded_with_operation_delete() {
    let (emu, c) = start(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    seed(&c, &emu).await;
    // East replaces; West, not having seen it, deletes: the replace stands, the delete is left
    // to the application.
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(delete(&c, west).await.status, 204, "accepted");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "east");
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    assert_eq!(feed[0]["operationType"], "delete");
    let content: Value = serde_json::from_str(feed[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["by"], "seed", "the version West deleted");

    // East deletes; West, not having seen it, replaces: the delete stands, the replace is left
    // to the application.
    assert_eq!(delete(&c, east).await.status, 204);
    let r = upsert(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert!(r.status == 200 || r.status == 201, "accepted: {r:?}");
    assert!(gone(&c, emu.endpoint()).await, "the delete stands");
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 2, "{feed:?}");
    assert_eq!(feed[1]["operationType"], "replace");

    // Both regions delete: they agree, nothing is recorded.
    seed(&c, &emu).await;
    assert_eq!(delete(&c, east).await.status, 204);
    assert_eq!(delete(&c, west).await.status, 204);
    assert!(gone(&c, emu.endpoint()).await);
    assert_eq!(conflicts(&c, emu.endpoint()).await.len(), 2);
}

#[tokio::test]
async fn one_conflict_is_read_and_deleted_by_its_id() {
    let (emu, c) = start(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    let base = emu.endpoint();
    assert_eq!(
        create(&c, east, &json!({"id": "x", "pk": "p"}))
            .await
            .status,
        201
    );
    assert_eq!(
        create(&c, west, &json!({"id": "x", "pk": "p"}))
            .await
            .status,
        201
    );
    // The conflict shows once the versions meet, after the replication lag.
    tokio::time::sleep(Duration::from_millis(LAG_MS + 200)).await;
    let feed = conflicts(&c, base).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    let id = feed[0]["id"].as_str().unwrap();
    let path = format!("/dbs/db/colls/c/conflicts/{id}");

    let r = c.get(base, &path, &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json(), feed[0]);
    let r = c.send(base, Method::DELETE, &path, &[], None).await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(c.get(base, &path, &[]).await.status, 404);
    assert_eq!(
        c.send(base, Method::DELETE, &path, &[], None).await.status,
        404
    );
    assert!(conflicts(&c, base).await.is_empty());
    // An unknown id, and one of a container that does not exist, answer 404.
    let r = c.get(base, "/dbs/db/colls/c/conflicts/nope", &[]).await;
    assert_eq!(r.status, 404);
    let r = c
        .get(base, &format!("/dbs/db/colls/none/conflicts/{id}"), &[])
        .await;
    assert_eq!(r.status, 404);
}

/// A merge procedure: the item stands as the existing version with both writers' `by` joined;
/// an incoming delete (`incomingItem` null) is dropped; `fail` in the incoming item makes it
/// throw.
const MERGE: &str = r#"function resolver(incomingItem, existingItem, isTombstone, conflictingItems) {
    if (incomingItem && incomingItem.fail) throw new Error("refused");
    if (isTombstone || !existingItem || !incomingItem) return;
    var coll = getContext().getCollection();
    existingItem.by = existingItem.by + "+" + incomingItem.by;
    existingItem.seen = conflictingItems.length;
    var ok = coll.upsertDocument(coll.getSelfLink(), existingItem, {}, function (err) {
        if (err) throw err;
    });
    if (!ok) throw new Error("not accepted");
}"#;

#[tokio::test]
async fn custom_mode_runs_the_merge_procedure_and_falls_back_to_the_feed() {
    let (emu, c) = start(
        json!({"mode": "Custom", "conflictResolutionProcedure": "dbs/db/colls/c/sprocs/merge"}),
    )
    .await;
    let (east, west) = east_west(&emu);
    let base = emu.endpoint();
    let sproc = json!({"id": "merge", "body": MERGE});
    let r = c
        .post_json(base, "/dbs/db/colls/c/sprocs", &[], &sproc)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    seed(&c, &emu).await;
    // Concurrent replaces: the procedure merges them and nothing goes to the feed.
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let merged = settled(&c, base).await;
    assert_eq!(merged["by"], "east+west", "{merged}");
    assert_eq!(merged["seen"], 0, "{merged}");
    assert!(conflicts(&c, base).await.is_empty());

    // The procedure throws: the conflict goes to the feed, the existing version stands.
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east2"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "by": "west2", "fail": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(settled(&c, base).await["by"], "east2");
    let feed = conflicts(&c, base).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    assert_eq!(feed[0]["operationType"], "replace");

    // The procedure is deleted: conflicts go to the feed.
    let r = c
        .send(
            base,
            Method::DELETE,
            "/dbs/db/colls/c/sprocs/merge",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east3"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(&c, west, &json!({"id": "x", "pk": "p", "by": "west3"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(settled(&c, base).await["by"], "east3");
    assert_eq!(conflicts(&c, base).await.len(), 2);
}

#[tokio::test]
async fn a_batch_reads_the_latest_version_and_never_conflicts() {
    // What the README states: a transactional batch is checked against the latest version, not
    // its region's replica, so a create of an item another region wrote within the lag is
    // refused as usual and nothing reaches the conflicts feed.
    let (emu, c) = start(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    assert_eq!(
        create(&c, east, &json!({"id": "x", "pk": "p", "by": "east"}))
            .await
            .status,
        201
    );
    let pk = pk_header(&json!("p"));
    let ops =
        json!([{"operationType": "Create", "resourceBody": {"id": "x", "pk": "p", "by": "west"}}]);
    let r = c
        .post_json(
            west,
            "/dbs/db/colls/c/docs",
            &[
                ("x-ms-documentdb-partitionkey", &pk),
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "True"),
            ],
            &ops,
        )
        .await;
    assert_eq!(r.json()[0]["statusCode"], 409, "{r:?}");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "east");
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
}

/// Item `id` created in East and, before West has seen it, in West: under `Custom` without a
/// procedure West's create goes to the conflicts feed. Returns once the regions have converged,
/// with a client with fresh connections (see [`until_the_versions_meet`]).
async fn conflicting_creates(
    c: &TestClient,
    emu: &cosmos_emulator::Emulator,
    id: &str,
) -> TestClient {
    let (east, west) = east_west(emu);
    let r = create(c, east, &json!({"id": id, "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(c, west, &json!({"id": id, "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    until_the_versions_meet().await
}

fn fresh_dir(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("emu-conflicts-{name}-{}", rand::random::<u32>()))
}

/// Whether any file of data directory `dir` holds a conflicts record.
fn has_conflict_records(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let bytes = std::fs::read(e.path()).unwrap_or_default();
        bytes
            .windows(br#""kind":"conflicts""#.len())
            .any(|w| w == br#""kind":"conflicts""#)
    })
}

#[tokio::test]
async fn the_conflicts_feed_survives_a_restart_with_its_ids_and_deletions() {
    let dir = fresh_dir("restart");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let (before, deleted) = {
        let (emu, mut c) = start_on(long_writers().data_dir(&dir), json!({"mode": "Custom"})).await;
        let base = emu.endpoint();
        for id in ["x1", "x2", "x3"] {
            c = conflicting_creates(&c, &emu, id).await;
        }
        let feed = conflicts(&c, base).await;
        assert_eq!(feed.len(), 3, "{feed:?}");
        let deleted = feed[1]["id"].as_str().unwrap().to_owned();
        let r = c
            .send(
                base,
                Method::DELETE,
                &format!("/dbs/db/colls/c/conflicts/{deleted}"),
                &[],
                None,
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        let before = conflicts(&c, base).await;
        assert_eq!(before.len(), 2);
        assert!(emu.drain(Duration::from_secs(5)).await);
        (before, deleted)
    };
    assert!(has_conflict_records(&dir));

    let emu = long_writers()
        .data_dir(&dir)
        .start()
        .await
        .expect("restarts");
    let base = emu.endpoint();
    // Same ids, `_rid`, content, `_etag` and `_ts`, in the same order; the deleted one stays gone.
    assert_eq!(conflicts(&c, base).await, before);
    for conflict in &before {
        let path = format!(
            "/dbs/db/colls/c/conflicts/{}",
            conflict["id"].as_str().unwrap()
        );
        let r = c.get(base, &path, &[]).await;
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(&r.json(), conflict);
    }
    let path = format!("/dbs/db/colls/c/conflicts/{deleted}");
    assert_eq!(c.get(base, &path, &[]).await.status, 404);

    // A new conflict takes a new id: neither a kept one nor the deleted one.
    let c = conflicting_creates(&c, &emu, "x4").await;
    let feed = conflicts(&c, base).await;
    assert_eq!(feed.len(), 3, "{feed:?}");
    assert_eq!(feed[..2], before[..]);
    let new_id = feed[2]["id"].as_str().unwrap();
    let mut old: Vec<&str> = before.iter().map(|c| c["id"].as_str().unwrap()).collect();
    old.push(&deleted);
    assert!(!old.contains(&new_id), "{new_id} reused");
    let content: Value = serde_json::from_str(feed[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        (content["id"].as_str(), content["by"].as_str()),
        (Some("x4"), Some("west"))
    );

    // The delete of a kept conflict is kept too.
    let first = before[0]["id"].as_str().unwrap();
    let path = format!("/dbs/db/colls/c/conflicts/{first}");
    assert_eq!(
        c.send(base, Method::DELETE, &path, &[], None).await.status,
        204
    );
    assert!(emu.drain(Duration::from_secs(5)).await);
    let emu = long_writers()
        .data_dir(&dir)
        .start()
        .await
        .expect("restarts again");
    assert_eq!(conflicts(&c, emu.endpoint()).await, feed[1..]);
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_data_directory_without_conflict_records_loads_with_an_empty_feed() {
    // What an emulator kept before conflicts were kept: catalog and item records only.
    let dir = fresh_dir("without");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let (emu, c) = start_on(long_writers().data_dir(&dir), json!({"mode": "Custom"})).await;
        let r = create(&c, emu.endpoint(), &json!({"id": "kept", "pk": "p"})).await;
        assert_eq!(r.status, 201, "{r:?}");
        assert!(emu.drain(Duration::from_secs(5)).await);
    }
    assert!(!has_conflict_records(&dir));
    let emu = long_writers().data_dir(&dir).start().await.expect("loads");
    let base = emu.endpoint();
    assert!(conflicts(&c, base).await.is_empty());
    let r = c.read_item(base, "db", "c", "kept", &json!("p"), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    // The feed works as on a new directory.
    let c = conflicting_creates(&c, &emu, "x").await;
    assert_eq!(conflicts(&c, base).await.len(), 1);
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A replication lag long enough that "at once" holds however slow the machine is; the tests
/// reach the time the versions meet by moving tokio's clock past it.
const LONG_LAG_MS: u64 = 60_000;

/// Two write regions each receiving the other's writes `LONG_LAG_MS` later.
fn long_writers() -> EmulatorBuilder {
    east_and_lagging_west(LONG_LAG_MS)
        .region_replication_lag("East US", ReplicationLag::fixed_ms(LONG_LAG_MS))
        .multi_write(true)
}

/// Two write regions each receiving the other's writes `LONG_LAG_MS` later, with database `db` and
/// container `c` under `policy`.
async fn start_long(policy: Value) -> (cosmos_emulator::Emulator, TestClient) {
    start_on(long_writers(), policy).await
}

/// Moves the emulator's clock (tokio's, paused only while it moves) past the replication lag;
/// returns a client with fresh connections (the old ones' idle timers ran out meanwhile).
async fn until_the_versions_meet() -> TestClient {
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(LONG_LAG_MS + 1_000)).await;
    tokio::time::resume();
    TestClient::new(WELL_KNOWN_KEY)
}

/// Item x as region `base` reads it: its `by`, or None when the region reads no item.
async fn by_in(c: &TestClient, base: &str) -> Option<String> {
    let r = c.read_item(base, "db", "c", "x", &json!("p"), &[]).await;
    assert!(r.status == 200 || r.status == 404, "{r:?}");
    (r.status == 200).then(|| r.json()["by"].as_str().unwrap_or_default().to_owned())
}

/// The `by` of every item x that `sql` finds in region `base` (in logical partition "p").
async fn by_queried(c: &TestClient, base: &str, sql: &str) -> Vec<String> {
    let pk = pk_header(&json!("p"));
    let r = c
        .query(
            base,
            "/dbs/db/colls/c/docs",
            &json!({"query": sql, "parameters": []}),
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["id"] == "x")
        .map(|d| d["by"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What region `base` shows of item x: a point read, a query in creation order and one in an
/// ORDER BY (whose answers are cached between pages).
async fn seen_in(c: &TestClient, base: &str) -> (Option<String>, Vec<String>, Vec<String>) {
    (
        by_in(c, base).await,
        by_queried(c, base, "SELECT * FROM c").await,
        by_queried(c, base, "SELECT * FROM c ORDER BY c.id").await,
    )
}

fn shows(by: &str) -> (Option<String>, Vec<String>, Vec<String>) {
    (Some(by.into()), vec![by.into()], vec![by.into()])
}

#[tokio::test]
async fn the_losing_region_serves_its_own_write_until_the_versions_meet() {
    let (emu, c) =
        start_long(json!({"mode": "LastWriterWins", "conflictResolutionPath": "/v"})).await;
    let (east, west) = east_west(&emu);
    // Both regions create x without seeing the other's create; East's (higher /v) wins.
    let r = create(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "v": 10, "by": "east"}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    // West has nothing yet.
    assert_eq!(seen_in(&c, west).await, (None, vec![], vec![]));
    let r = create(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 5, "by": "west"}),
    )
    .await;
    assert_eq!(r.status, 201, "both regions accept: {r:?}");
    assert_eq!(seen_in(&c, west).await, shows("west"));
    assert_eq!(seen_in(&c, east).await, shows("east"));
    // A session read with the token of West's write is served by West at once, with its write.
    let token = r.header("x-ms-session-token").expect("a session token");
    let session = [("x-ms-session-token", token)];
    let read = c
        .read_item(west, "db", "c", "x", &json!("p"), &session)
        .await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.json()["by"], "west");
    // West's own later write builds on what West reads: a replace of its version is taken (and
    // still loses to East's).
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 6, "by": "west2"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(seen_in(&c, west).await, shows("west2"));

    let c = until_the_versions_meet().await;
    assert_eq!(seen_in(&c, west).await, shows("east"));
    assert_eq!(seen_in(&c, east).await, shows("east"));
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
}

#[tokio::test]
async fn a_conflict_shows_in_the_feed_once_the_versions_meet() {
    let (emu, c) = start_long(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    let r = create(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(seen_in(&c, west).await, shows("west"));
    assert_eq!(seen_in(&c, east).await, shows("east"));
    assert!(conflicts(&c, emu.endpoint()).await.is_empty(), "not yet");

    let c = until_the_versions_meet().await;
    assert_eq!(seen_in(&c, west).await, shows("east"));
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    let content: Value = serde_json::from_str(feed[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["by"], "west");
    assert_eq!(feed[0]["operationType"], "create");
}

#[tokio::test]
async fn a_losing_delete_hides_the_item_only_in_its_region_until_the_versions_meet() {
    let (emu, c) = start_long(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    let r = create(&c, east, &json!({"id": "x", "pk": "p", "by": "seed"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let c = until_the_versions_meet().await;
    assert_eq!(by_in(&c, west).await.as_deref(), Some("seed"));
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = delete(&c, west).await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(seen_in(&c, west).await, (None, vec![], vec![]));
    assert_eq!(seen_in(&c, east).await, shows("east"));

    let c = until_the_versions_meet().await;
    assert_eq!(seen_in(&c, west).await, shows("east"));
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    assert_eq!(feed[0]["operationType"], "delete");
}

#[tokio::test]
async fn a_merge_result_reaches_every_region_once_the_versions_meet() {
    let (emu, c) = start_long(
        json!({"mode": "Custom", "conflictResolutionProcedure": "dbs/db/colls/c/sprocs/merge"}),
    )
    .await;
    let (east, west) = east_west(&emu);
    let sproc = json!({"id": "merge", "body": MERGE});
    let r = c
        .post_json(emu.endpoint(), "/dbs/db/colls/c/sprocs", &[], &sproc)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(&c, east, &json!({"id": "x", "pk": "p", "by": "seed"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let c = until_the_versions_meet().await;
    let r = upsert(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(seen_in(&c, west).await, shows("west"));
    assert_eq!(seen_in(&c, east).await, shows("east"));

    let c = until_the_versions_meet().await;
    assert_eq!(seen_in(&c, west).await, shows("east+west"));
    assert_eq!(seen_in(&c, east).await, shows("east+west"));
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
}

/// One page (of at most one item) of `SELECT * FROM c ORDER BY c.id` in partition "p" of region
/// `base`: the ids and `by`s, and the continuation.
async fn ordered_page(
    c: &TestClient,
    base: &str,
    continuation: Option<&str>,
) -> (Vec<(String, String)>, Option<String>) {
    let pk = pk_header(&json!("p"));
    let mut headers = vec![
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-max-item-count", "1"),
    ];
    if let Some(token) = continuation {
        headers.push(("x-ms-continuation", token));
    }
    let body = json!({"query": "SELECT * FROM c ORDER BY c.id", "parameters": []});
    let r = c.query(base, "/dbs/db/colls/c/docs", &body, &headers).await;
    assert_eq!(r.status, 200, "{r:?}");
    let items = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap_or_default().to_owned(),
                d["by"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (items, r.header("x-ms-continuation").map(str::to_owned))
}

#[tokio::test]
async fn a_paged_query_sees_its_regions_own_write_taken_between_pages() {
    let (emu, c) =
        start_long(json!({"mode": "LastWriterWins", "conflictResolutionPath": "/v"})).await;
    let (east, west) = east_west(&emu);
    for id in ["a", "z"] {
        let r = create(
            &c,
            east,
            &json!({"id": id, "pk": "p", "v": 0, "by": "seed"}),
        )
        .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    let c = until_the_versions_meet().await;
    let (first, next) = ordered_page(&c, west, None).await;
    assert_eq!(first, [("a".to_owned(), "seed".to_owned())]);
    let next = next.expect("more pages");
    // Between West's pages both regions create x; East's wins, West serves its own.
    let r = create(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "v": 10, "by": "east"}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 5, "by": "west"}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    // West's replica has not moved, but its answer has: the next page is recomputed.
    let (second, _) = ordered_page(&c, west, Some(&next)).await;
    assert_eq!(second, [("x".to_owned(), "west".to_owned())]);
}

/// A merge procedure that changes nothing of the item and records what it was called with as
/// item "received" (its `email` keeps it clear of the items' unique values).
const RECORD: &str = r#"function resolver(incomingItem, existingItem, isTombstone, conflictingItems) {
    var coll = getContext().getCollection();
    var received = {
        id: "received", pk: "p", email: "received@example.com",
        incoming: incomingItem ? incomingItem.by : null,
        existing: existingItem ? existingItem.by : null,
        isTombstone: isTombstone,
        conflicting: conflictingItems.map(function (i) { return { id: i.id, email: i.email }; })
    };
    var ok = coll.upsertDocument(coll.getSelfLink(), received, {}, function (err) {
        if (err) throw err;
    });
    if (!ok) throw new Error("not accepted");
}"#;

#[tokio::test]
async fn a_merge_procedure_gets_the_items_the_write_collides_with_on_a_unique_key() {
    let emu = long_writers().start().await.expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    let (east, west) = east_west(&emu);
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]},
        "conflictResolutionPolicy": {"mode": "Custom",
            "conflictResolutionProcedure": "dbs/db/colls/c/sprocs/record"}});
    let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
    assert_eq!(r.status, 201, "{r:?}");
    let sproc = json!({"id": "record", "body": RECORD});
    let r = c
        .post_json(base, "/dbs/db/colls/c/sprocs", &[], &sproc)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "email": "x@example.com", "by": "seed"}),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    let c = until_the_versions_meet().await;

    // East creates y with e@ and replaces x; West, having received neither, gives x e@ too.
    let y = json!({"id": "y", "pk": "p", "email": "e@example.com", "by": "east"});
    assert_eq!(create(&c, east, &y).await.status, 201);
    let r = upsert(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "email": "x@example.com", "by": "east"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "email": "e@example.com", "by": "west"}),
    )
    .await;
    assert_eq!(r.status, 200, "West had not received y: {r:?}");
    assert_eq!(by_in(&c, west).await.as_deref(), Some("west"));

    let c = until_the_versions_meet().await;
    let r = c
        .read_item(base, "db", "c", "received", &json!("p"), &[])
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let received = r.json();
    assert_eq!(received["incoming"], "west", "{received}");
    assert_eq!(received["existing"], "east", "{received}");
    assert_eq!(received["isTombstone"], false, "{received}");
    assert_eq!(
        received["conflicting"],
        json!([{"id": "y", "email": "e@example.com"}]),
        "{received}"
    );
    assert_eq!(by_in(&c, west).await.as_deref(), Some("east"));
    assert!(conflicts(&c, base).await.is_empty());

    // Once West has y, the same collision is refused there, conflict or not.
    let r = upsert(
        &c,
        east,
        &json!({"id": "x", "pk": "p", "email": "x@example.com", "by": "east2"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "email": "e@example.com", "by": "west2"}),
    )
    .await;
    assert_eq!(r.status, 409, "{r:?}");
    // A concurrent write without a collision passes no items.
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "email": "w@example.com", "by": "west3"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let c = until_the_versions_meet().await;
    let received = c
        .read_item(base, "db", "c", "received", &json!("p"), &[])
        .await
        .json();
    assert_eq!(received["incoming"], "west3", "{received}");
    assert_eq!(received["conflicting"], json!([]), "{received}");
}
