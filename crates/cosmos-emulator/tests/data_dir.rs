//! `--data-dir`: what was acknowledged survives a restart (scripts, users and permissions with
//! their resource tokens too), a SIGKILL in the middle of writes loses nothing acknowledged and
//! leaves nothing half written, a torn log tail is dropped with a message, and the log is folded
//! into snapshots as it grows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use common::process::EmulatorProcess;
use common::{pk_header, TestClient};
use cosmos_emulator::WELL_KNOWN_KEY;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("emu-data-{name}-{}", rand::random::<u32>()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn start(dir: &Path, extra: &[&str]) -> EmulatorProcess {
    let mut args = vec!["--data-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    EmulatorProcess::start(&args).unwrap_or_else(|log| panic!("the emulator did not start: {log}"))
}

/// The item without what the service stamps per response.
fn item(r: &common::Resp) -> Value {
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && !n.ends_with(".tmp"))
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn databases_containers_items_and_offers_survive_a_restart() {
    let dir = fresh_dir("restart");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let (db_before, coll_before, offer_before, kept, replaced);
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let r = c
            .post_json(base, "/dbs/db/colls", &[("x-ms-offer-throughput", "700")], &json!({"id": "t", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "defaultTtl": 3600}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        for i in 0..20 {
            let r = c
                .create_item(
                    base,
                    "db",
                    "c",
                    &json!({"id": format!("i{i}"), "pk": format!("p{}", i % 5), "n": i}),
                )
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        let r = c
            .send_with_pk(
                base,
                Method::PUT,
                &format!("{DOCS}/i3"),
                &json!("p3"),
                &[],
                Some(&json!({"id": "i3", "pk": "p3", "n": 333})),
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        let r = c
            .send_with_pk(
                base,
                Method::DELETE,
                &format!("{DOCS}/i4"),
                &json!("p4"),
                &[],
                None,
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        db_before = c.get(base, "/dbs/db", &[]).await.json();
        coll_before = c.get(base, "/dbs/db/colls/t", &[]).await.json();
        let offers = c.get(base, "/offers", &[]).await.json();
        offer_before = offers["Offers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["offerResourceId"] == coll_before["_rid"])
            .cloned()
            .expect("the container's offer");
        kept = item(&c.read_item(base, "db", "c", "i7", &json!("p2"), &[]).await);
        replaced = item(&c.read_item(base, "db", "c", "i3", &json!("p3"), &[]).await);
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    assert_eq!(c.get(base, "/dbs/db", &[]).await.json(), db_before);
    assert_eq!(
        c.get(base, "/dbs/db/colls/t", &[]).await.json(),
        coll_before
    );
    let offers = c.get(base, "/offers", &[]).await.json();
    assert!(
        offers["Offers"].as_array().unwrap().contains(&offer_before),
        "{offers} should hold {offer_before}"
    );
    assert_eq!(
        item(&c.read_item(base, "db", "c", "i7", &json!("p2"), &[]).await),
        kept
    );
    assert_eq!(
        item(&c.read_item(base, "db", "c", "i3", &json!("p3"), &[]).await),
        replaced
    );
    let gone = c.read_item(base, "db", "c", "i4", &json!("p4"), &[]).await;
    assert_eq!(gone.status, 404, "a deleted item stays deleted: {gone:?}");
    // New resources get resource ids the kept ones do not have.
    let r = c
        .create_item(base, "db", "c", &json!({"id": "after", "pk": "p2"}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_ne!(r.json()["_rid"], kept["_rid"]);
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db2"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_ne!(r.json()["_rid"], db_before["_rid"]);
    let r = c
        .create_item(base, "db", "c", &json!({"id": "i0", "pk": "p0"}))
        .await;
    assert_eq!(r.status, 409, "kept items still conflict: {r:?}");
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The body writer `w` gives its `n`th item (or batch member `m`): large enough that a record
/// spans several pages of the log.
fn payload(w: usize, n: usize) -> String {
    format!("{w}-{n}-").repeat(200)
}

#[tokio::test]
async fn a_sigkill_during_concurrent_writes_keeps_every_acknowledged_write_whole() {
    let dir = fresh_dir("sigkill");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let mut emu = start(&dir, &[]);
    let base = emu.endpoint.clone();
    c.setup(&base, "db", "c").await;
    const WRITERS: usize = 8;
    // (writer, n): single creates; batches are three creates in one partition, all or none.
    let acked: Arc<Mutex<BTreeSet<(usize, usize)>>> = Arc::default();
    let tried: Arc<Mutex<BTreeSet<(usize, usize)>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (c, base, acked, tried) = (c.clone(), base.clone(), acked.clone(), tried.clone());
        writers.push(tokio::spawn(async move {
            for n in 0.. {
                tried.lock().unwrap().insert((w, n));
                let pk = format!("w{w}-{n}");
                let answered = if n % 2 == 0 {
                    let doc = json!({"id": format!("{w}-{n}"), "pk": pk, "body": payload(w, n)});
                    c.try_send(&base, Method::POST, DOCS, &[("x-ms-documentdb-partitionkey", &pk_header(&json!(pk)))], Some(doc.to_string().as_bytes()))
                        .await
                        .map(|r| r.status == 201)
                } else {
                    let ops: Vec<Value> = (0..3)
                        .map(|m| json!({"operationType": "Create", "resourceBody": {"id": format!("{w}-{n}-{m}"), "pk": pk, "body": payload(w, n + m)}}))
                        .collect();
                    c.try_send(
                        &base,
                        Method::POST,
                        DOCS,
                        &[
                            ("x-ms-documentdb-partitionkey", &pk_header(&json!(pk))),
                            ("x-ms-cosmos-is-batch-request", "True"),
                            ("x-ms-cosmos-batch-atomic", "True"),
                        ],
                        Some(Value::Array(ops).to_string().as_bytes()),
                    )
                    .await
                    .map(|r| r.status == 200)
                };
                match answered {
                    Ok(true) => {
                        acked.lock().unwrap().insert((w, n));
                    }
                    Ok(false) => panic!("a write was refused"),
                    Err(_) => return,
                }
            }
        }));
    }
    while acked.lock().unwrap().len() < 300 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    emu.kill_hard();
    for w in writers {
        w.await.unwrap();
    }
    let (acked, tried) = (acked.lock().unwrap().clone(), tried.lock().unwrap().clone());
    assert!(
        tried.len() > acked.len(),
        "writes were in flight at the kill"
    );
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    let (mut unacked_present, mut unacked_absent) = (0, 0);
    for &(w, n) in &tried {
        let pk = json!(format!("w{w}-{n}"));
        let members: Vec<(String, String)> = if n % 2 == 0 {
            vec![(format!("{w}-{n}"), payload(w, n))]
        } else {
            (0..3)
                .map(|m| (format!("{w}-{n}-{m}"), payload(w, n + m)))
                .collect()
        };
        let mut present = 0;
        for (id, body) in &members {
            let r = c.read_item(base, "db", "c", id, &pk, &[]).await;
            match r.status {
                200 => {
                    assert_eq!(r.json()["body"], json!(body), "{id} is whole");
                    present += 1;
                }
                404 => {}
                other => panic!("reading {id}: {other} {r:?}"),
            }
        }
        if acked.contains(&(w, n)) {
            assert_eq!(
                present,
                members.len(),
                "acknowledged write {w}-{n} is all there"
            );
        } else {
            assert!(
                present == 0 || present == members.len(),
                "unacknowledged batch {w}-{n} is all there or not at all ({present} of {})",
                members.len()
            );
            if present == 0 {
                unacked_absent += 1;
            } else {
                unacked_present += 1;
            }
        }
    }
    println!(
        "{} acknowledged writes kept; of {} unacknowledged, {unacked_present} landed whole and {unacked_absent} not at all",
        acked.len(),
        tried.len() - acked.len()
    );
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

const COLL: &str = "/dbs/db/colls/c";

/// Sends a request with `token` (a permission's resource token) as the whole authorization header.
async fn with_token(
    c: &TestClient,
    base: &str,
    token: &str,
    path: &str,
    pk: &Value,
) -> common::Resp {
    let date = common::now_date();
    let pk = pk_header(pk);
    let headers = [
        ("authorization", token),
        ("x-ms-date", date.as_str()),
        ("x-ms-version", "2020-07-15"),
        ("x-ms-documentdb-partitionkey", pk.as_str()),
    ];
    c.send_raw(base, Method::GET, path, &headers, None).await
}

fn created(r: common::Resp) -> Value {
    assert_eq!(r.status, 201, "{r:?}");
    r.json()
}

async fn read_json(c: &TestClient, base: &str, path: &str) -> Value {
    let r = c.get(base, path, &[]).await;
    assert_eq!(r.status, 200, "{path}: {r:?}");
    r.json()
}

async fn status_of(c: &TestClient, base: &str, path: &str) -> u16 {
    c.get(base, path, &[]).await.status
}

/// Runs stored procedure `hello` with one argument; its answer.
async fn run_hello(c: &TestClient, base: &str) -> Value {
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            &format!("{COLL}/sprocs/hello"),
            &json!("p"),
            &[],
            Some(&json!(["there"])),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

/// The UDF `tax` over item `n`'s field `n`, in a query.
async fn udf_tax(c: &TestClient, base: &str) -> Value {
    let r = c
        .query(
            base,
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT VALUE udf.tax(c.n) FROM c WHERE c.id = 'n'"}),
            &[("x-ms-documentdb-partitionkey", &pk_header(&json!("p")))],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Documents"].clone()
}

/// Creates an item through the pre-trigger `stamp`; what it stamped.
async fn stamped(c: &TestClient, base: &str, id: &str) -> Value {
    let pk = pk_header(&json!("p"));
    let r = c
        .post_json(
            base,
            &format!("{COLL}/docs"),
            &[
                ("x-ms-documentdb-partitionkey", pk.as_str()),
                ("x-ms-documentdb-pre-trigger-include", "stamp"),
            ],
            &json!({"id": id, "pk": "p"}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    r.json()["stamped"].clone()
}

#[tokio::test]
async fn scripts_users_and_permissions_survive_a_restart_and_so_do_their_deletes() {
    let dir = fresh_dir("scripts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let hello = r#"function (who) { getContext().getResponse().setBody('hi ' + who); }"#;
    let stamp = r#"function () {
        var item = getContext().getRequest().getBody();
        item.stamped = 'by-trigger';
        getContext().getRequest().setBody(item);
    }"#;
    let (sproc, trigger, udf, user, permission, token);
    {
        let mut emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let r = c
            .create_item(base, "db", "c", &json!({"id": "n", "pk": "p", "n": 10}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        sproc = created(
            c.post_json(
                base,
                &format!("{COLL}/sprocs"),
                &[],
                &json!({"id": "hello", "body": hello}),
            )
            .await,
        );
        trigger = created(c.post_json(base, &format!("{COLL}/triggers"), &[], &json!({"id": "stamp", "body": stamp, "triggerType": "Pre", "triggerOperation": "Create"})).await);
        created(
            c.post_json(
                base,
                &format!("{COLL}/udfs"),
                &[],
                &json!({"id": "tax", "body": "function (x) { return x; }"}),
            )
            .await,
        );
        // A replace is kept, not the first version.
        let r = c
            .send(
                base,
                Method::PUT,
                &format!("{COLL}/udfs/tax"),
                &[],
                Some(
                    json!({"id": "tax", "body": "function (x) { return x * 2; }"})
                        .to_string()
                        .as_bytes(),
                ),
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        udf = r.json();
        for (kind, extra) in [
            ("sprocs", json!({})),
            (
                "triggers",
                json!({"triggerType": "Post", "triggerOperation": "All"}),
            ),
            ("udfs", json!({})),
        ] {
            let mut def = json!({"id": "doomed", "body": "function () {}"});
            for (k, v) in extra.as_object().unwrap() {
                def[k] = v.clone();
            }
            created(
                c.post_json(base, &format!("{COLL}/{kind}"), &[], &def)
                    .await,
            );
            let r = c
                .send(
                    base,
                    Method::DELETE,
                    &format!("{COLL}/{kind}/doomed"),
                    &[],
                    None,
                )
                .await;
            assert_eq!(r.status, 204, "{kind}: {r:?}");
        }
        assert_eq!(run_hello(&c, base).await, json!("hi there"));
        assert_eq!(udf_tax(&c, base).await, json!([20]));
        assert_eq!(stamped(&c, base, "s1").await, json!("by-trigger"));

        user = created(
            c.post_json(base, "/dbs/db/users", &[], &json!({"id": "u1"}))
                .await,
        );
        created(
            c.post_json(base, "/dbs/db/users", &[], &json!({"id": "u2"}))
                .await,
        );
        permission = created(
            c.post_json(
                base,
                "/dbs/db/users/u1/permissions",
                &[],
                &json!({"id": "p1", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
            )
            .await,
        );
        created(c.post_json(base, "/dbs/db/users/u1/permissions", &[], &json!({"id": "gone", "permissionMode": "All", "resource": "dbs/db/colls/c/docs/n"})).await);
        let r = c
            .send(
                base,
                Method::DELETE,
                "/dbs/db/users/u1/permissions/gone",
                &[],
                None,
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        token = permission["_token"].as_str().unwrap().to_owned();
        let r = with_token(&c, base, &token, &format!("{COLL}/docs/n"), &json!("p")).await;
        assert_eq!(r.status, 200, "the token works before the restart: {r:?}");
        // Acknowledged means on disk: no chance to write anything more.
        emu.kill_hard();
    }
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        assert_eq!(
            read_json(&c, base, &format!("{COLL}/sprocs/hello")).await,
            sproc
        );
        assert_eq!(
            read_json(&c, base, &format!("{COLL}/triggers/stamp")).await,
            trigger
        );
        assert_eq!(read_json(&c, base, &format!("{COLL}/udfs/tax")).await, udf);
        for kind in ["sprocs", "triggers", "udfs"] {
            assert_eq!(
                status_of(&c, base, &format!("{COLL}/{kind}/doomed")).await,
                404,
                "{kind}"
            );
        }
        assert_eq!(
            run_hello(&c, base).await,
            json!("hi there"),
            "the kept procedure runs"
        );
        assert_eq!(
            udf_tax(&c, base).await,
            json!([20]),
            "the kept UDF answers as replaced"
        );
        assert_eq!(
            stamped(&c, base, "s2").await,
            json!("by-trigger"),
            "the kept trigger runs"
        );
        assert_eq!(read_json(&c, base, "/dbs/db/users/u1").await, user);
        // Each read issues a new token (a new expiry); the rest of the permission is as kept,
        // and the token issued before the restart still works (below).
        let mut kept = read_json(&c, base, "/dbs/db/users/u1/permissions/p1").await;
        let mut before = permission.clone();
        kept.as_object_mut().unwrap().remove("_token");
        before.as_object_mut().unwrap().remove("_token");
        assert_eq!(kept, before, "the kept permission");
        assert_eq!(
            status_of(&c, base, "/dbs/db/users/u1/permissions/gone").await,
            404
        );
        let r = with_token(&c, base, &token, &format!("{COLL}/docs/n"), &json!("p")).await;
        assert_eq!(
            r.status, 200,
            "a token issued before the restart still works: {r:?}"
        );
        // New resources get resource ids the kept ones do not have.
        let fresh = created(
            c.post_json(
                base,
                &format!("{COLL}/sprocs"),
                &[],
                &json!({"id": "fresh", "body": "function () {}"}),
            )
            .await,
        );
        assert_ne!(fresh["_rid"], sproc["_rid"]);
        let u3 = created(
            c.post_json(base, "/dbs/db/users", &[], &json!({"id": "u3"}))
                .await,
        );
        assert_ne!(u3["_rid"], user["_rid"]);
        let p2 = created(
            c.post_json(
                base,
                "/dbs/db/users/u1/permissions",
                &[],
                &json!({"id": "p2", "permissionMode": "All", "resource": "dbs/db/colls/c/docs/n"}),
            )
            .await,
        );
        assert_ne!(p2["_rid"], permission["_rid"]);
        // Deletes after a restart are kept too (this start loaded the log; the next loads the
        // snapshot this start wrote, then the log).
        for path in [
            format!("{COLL}/sprocs/hello"),
            format!("{COLL}/triggers/stamp"),
            format!("{COLL}/udfs/tax"),
        ] {
            let r = c.send(base, Method::DELETE, &path, &[], None).await;
            assert_eq!(r.status, 204, "{path}: {r:?}");
        }
        let r = c
            .send(base, Method::DELETE, "/dbs/db/users/u2", &[], None)
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        emu.terminate();
    }
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        for kind in ["sprocs/hello", "triggers/stamp", "udfs/tax"] {
            assert_eq!(
                status_of(&c, base, &format!("{COLL}/{kind}")).await,
                404,
                "{kind}"
            );
        }
        assert_eq!(
            status_of(&c, base, &format!("{COLL}/sprocs/fresh")).await,
            200
        );
        assert_eq!(status_of(&c, base, "/dbs/db/users/u2").await, 404);
        assert_eq!(status_of(&c, base, "/dbs/db/users/u3").await, 200);
        assert_eq!(
            status_of(&c, base, "/dbs/db/users/u1/permissions/p2").await,
            200
        );
        let r = with_token(&c, base, &token, &format!("{COLL}/docs/n"), &json!("p")).await;
        assert_eq!(r.status, 200, "{r:?}");
        // Deleting the user revokes its tokens, and that is kept.
        let r = c
            .send(base, Method::DELETE, "/dbs/db/users/u1", &[], None)
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    assert_eq!(status_of(&c, base, "/dbs/db/users/u1").await, 404);
    let r = with_token(&c, base, &token, &format!("{COLL}/docs/n"), &json!("p")).await;
    assert!(
        matches!(r.status, 401 | 403),
        "the deleted user's token is refused: {r:?}"
    );
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn after_a_restart_with_another_key_permissions_carry_new_tokens_and_old_ones_fail() {
    let dir = fresh_dir("rekey");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let old_token;
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let r = c
            .create_item(base, "db", "c", &json!({"id": "n", "pk": "p"}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        created(
            c.post_json(base, "/dbs/db/users", &[], &json!({"id": "u"}))
                .await,
        );
        let p = created(
            c.post_json(
                base,
                "/dbs/db/users/u/permissions",
                &[],
                &json!({"id": "p", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
            )
            .await,
        );
        old_token = p["_token"].as_str().unwrap().to_owned();
        emu.terminate();
    }
    // As after regenerating the account key: tokens signed with the old key no longer verify;
    // reading the permission gives one signed with the new key.
    let key = "c2Vjb25kIGtleSBmb3IgdGhlIGVtdWxhdG9yIGRhdGEgZGlyZWN0b3J5IHRlc3Q=";
    let other = TestClient::new(key);
    let emu = start(&dir, &["--key", key]);
    let base = emu.endpoint.as_str();
    let r = with_token(&c, base, &old_token, &format!("{COLL}/docs/n"), &json!("p")).await;
    assert_eq!(r.status, 401, "{r:?}");
    let p = read_json(&other, base, "/dbs/db/users/u/permissions/p").await;
    let new_token = p["_token"].as_str().unwrap();
    assert_ne!(new_token, old_token);
    let r = with_token(&c, base, new_token, &format!("{COLL}/docs/n"), &json!("p")).await;
    assert_eq!(r.status, 200, "{r:?}");
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_torn_scripts_or_users_record_is_dropped_with_a_message() {
    let dir = fresh_dir("torn-scripts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let mut emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        created(
            c.post_json(
                base,
                &format!("{COLL}/sprocs"),
                &[],
                &json!({"id": "kept", "body": "function () {}"}),
            )
            .await,
        );
        created(
            c.post_json(base, "/dbs/db/users", &[], &json!({"id": "last"}))
                .await,
        );
        emu.kill_hard();
    }
    // The last record (the users after "last" was made) loses its final bytes.
    let logs = files(&dir, "log-");
    let log = logs.last().expect("a log file");
    let len = std::fs::metadata(log).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(log).unwrap();
    file.set_len(len - 3).unwrap();
    drop(file);
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    assert!(
        emu.log_text().contains("dropped a torn tail"),
        "{}",
        emu.log_text()
    );
    assert_eq!(
        status_of(&c, base, &format!("{COLL}/sprocs/kept")).await,
        200
    );
    assert_eq!(status_of(&c, base, "/dbs/db/users/last").await, 404);
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_torn_log_tail_is_dropped_with_a_message() {
    let dir = fresh_dir("torn");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let mut emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        for id in ["a", "b", "last"] {
            let r = c
                .create_item(base, "db", "c", &json!({"id": id, "pk": "p"}))
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        emu.kill_hard();
    }
    // The last record (item "last") loses its final bytes, as a write cut by a crash would.
    let logs = files(&dir, "log-");
    let log = logs.last().expect("a log file");
    let len = std::fs::metadata(log).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(log).unwrap();
    file.set_len(len - 7).unwrap();
    drop(file);
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    let log_text = emu.log_text();
    assert!(
        log_text.contains("dropped a torn tail")
            && (log_text.contains("fails its checksum") || log_text.contains("cut short")),
        "{log_text}"
    );
    for id in ["a", "b"] {
        assert_eq!(
            c.read_item(base, "db", "c", id, &json!("p"), &[])
                .await
                .status,
            200
        );
    }
    let r = c.read_item(base, "db", "c", "last", &json!("p"), &[]).await;
    assert_eq!(r.status, 404, "the torn write is not half there: {r:?}");
    // Garbage after whole records: dropped too, and the start goes on.
    drop(emu);
    let logs = files(&dir, "log-");
    let mut bytes = std::fs::read(logs.last().unwrap()).unwrap();
    bytes.extend_from_slice(&[0xff; 5]);
    std::fs::write(logs.last().unwrap(), bytes).unwrap();
    let emu = start(&dir, &[]);
    assert!(
        emu.log_text().contains("dropped a torn tail"),
        "{}",
        emu.log_text()
    );
    assert_eq!(
        c.read_item(&emu.endpoint, "db", "c", "a", &json!("p"), &[])
            .await
            .status,
        200
    );
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_growing_log_is_folded_into_snapshots() {
    let dir = fresh_dir("compact");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let emu = start(&dir, &["--compact-log-bytes", "4096"]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let first = files(&dir, "snapshot-");
        for i in 0..150 {
            let r = c
                .create_item(base, "db", "c", &json!({"id": format!("i{i}"), "pk": format!("p{}", i % 7), "pad": "x".repeat(100)}))
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        // Compaction runs beside the writes and starts after a write once the log is past the
        // size: write small items until one newer snapshot and a short log are all there is.
        let started = std::time::Instant::now();
        let mut extra = 0;
        loop {
            let snapshots = files(&dir, "snapshot-");
            let logs = files(&dir, "log-");
            let short = logs.len() == 1 && std::fs::metadata(&logs[0]).unwrap().len() < 4096;
            if snapshots.len() == 1 && snapshots != first && short {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the log was not folded: {:?}",
                files(&dir, "")
            );
            let r = c
                .create_item(
                    base,
                    "db",
                    "c",
                    &json!({"id": format!("extra{extra}"), "pk": "x"}),
                )
                .await;
            assert_eq!(r.status, 201, "{r:?}");
            extra += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let snapshot = &files(&dir, "snapshot-")[0];
        assert!(
            std::fs::metadata(snapshot).unwrap().len() > 150 * 100,
            "the snapshot holds the items"
        );
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    for i in 0..150 {
        let pk = json!(format!("p{}", i % 7));
        let r = c
            .read_item(&emu.endpoint, "db", "c", &format!("i{i}"), &pk, &[])
            .await;
        assert_eq!(r.status, 200, "i{i}: {r:?}");
    }
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}
