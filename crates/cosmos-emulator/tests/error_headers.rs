//! Item errors the partition decided (409, 412, a missing item's 404, a refused patch) carry the
//! partition's session token, `lsn` and range id, like the service's; errors that never reached a
//! partition carry none.

use crate::common;

use std::time::Duration;

use common::{east_and_lagging_west, east_west, start_with_container, Resp};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOC: &str = "/dbs/db/colls/c/docs/a";
const MISSING: &str = "/dbs/db/colls/c/docs/zz";

/// A request (method, path, extra headers, body), the status it gets and what it is.
type Case<'a> = (
    Method,
    &'a str,
    &'a [(&'a str, &'a str)],
    Option<&'a Value>,
    u16,
    &'a str,
);

/// Asserts `r` has `status` and the partition's headers at `lsn` in `range`.
fn assert_partition_headers(r: &Resp, status: u16, range: &str, lsn: u64, what: &str) {
    assert_eq!(r.status, status, "{what}: {r:?}");
    assert_eq!(
        r.header("x-ms-session-token"),
        Some(format!("{range}:-1#{lsn}").as_str()),
        "{what}"
    );
    assert_eq!(r.header("lsn"), Some(lsn.to_string().as_str()), "{what}");
    assert_eq!(
        r.header("x-ms-documentdb-partitionkeyrangeid"),
        Some(range),
        "{what}"
    );
}

fn lsn_of(r: &Resp) -> u64 {
    r.header("lsn").and_then(|v| v.parse().ok()).unwrap()
}

#[tokio::test]
async fn conflicts_stale_preconditions_and_missing_items_carry_the_committed_session() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let pk = json!("p");
    let doc = json!({"id": "a", "pk": "p", "n": 1});
    let created = c.create_item(base, "db", "c", &doc).await;
    assert_eq!(created.status, 201);
    let range = created
        .header("x-ms-documentdb-partitionkeyrangeid")
        .unwrap()
        .to_owned();
    let stale = created.header("etag").unwrap().to_owned();
    let replaced = c
        .send_with_pk(base, Method::PUT, DOC, &pk, &[], Some(&doc))
        .await;
    assert_eq!(replaced.status, 200);
    let committed = lsn_of(&replaced);
    assert!(committed > lsn_of(&created));

    let conflict = c.create_item(base, "db", "c", &doc).await;
    assert_partition_headers(&conflict, 409, &range, committed, "create conflict");

    let if_stale = [("if-match", stale.as_str())];
    let upsert = [
        ("if-match", stale.as_str()),
        ("x-ms-documentdb-is-upsert", "true"),
    ];
    let set = json!({"operations": [{"op": "set", "path": "/n", "value": 2}]});
    let false_condition = json!({"operations": [{"op": "set", "path": "/n", "value": 2}],
        "condition": "from c where c.n = 5"});
    let other = json!({"id": "zz", "pk": "p"});
    let cases: Vec<Case> = vec![
        (
            Method::PUT,
            DOC,
            &if_stale,
            Some(&doc),
            412,
            "stale replace",
        ),
        (
            Method::POST,
            "/dbs/db/colls/c/docs",
            &upsert,
            Some(&doc),
            412,
            "stale upsert",
        ),
        (
            Method::PATCH,
            DOC,
            &if_stale,
            Some(&set),
            412,
            "stale patch",
        ),
        (Method::DELETE, DOC, &if_stale, None, 412, "stale delete"),
        (
            Method::PATCH,
            DOC,
            &[],
            Some(&false_condition),
            412,
            "false patch condition",
        ),
        (
            Method::GET,
            MISSING,
            &[],
            None,
            404,
            "read of a missing item",
        ),
        (
            Method::PUT,
            MISSING,
            &[],
            Some(&other),
            404,
            "replace of a missing item",
        ),
        (
            Method::PATCH,
            MISSING,
            &[],
            Some(&set),
            404,
            "patch of a missing item",
        ),
        (
            Method::DELETE,
            MISSING,
            &[],
            None,
            404,
            "delete of a missing item",
        ),
    ];
    for (method, path, extra, body, status, what) in cases {
        let r = c.send_with_pk(base, method, path, &pk, extra, body).await;
        assert_eq!(r.sub_status(), 0, "{what}");
        assert_partition_headers(&r, status, &range, committed, what);
    }
    let refused = json!({"operations": [{"op": "incr", "path": "/missing/x", "value": 1}]});
    let r = c
        .send_with_pk(base, Method::PATCH, DOC, &pk, &[], Some(&refused))
        .await;
    assert_partition_headers(&r, 400, &range, committed, "patch the item refused");

    // The headers follow the partition: after another write they carry its new LSN.
    let r = c
        .send_with_pk(base, Method::DELETE, DOC, &pk, &[], None)
        .await;
    assert_eq!(r.status, 204);
    let r = c
        .send_with_pk(base, Method::PUT, DOC, &pk, &if_stale, Some(&doc))
        .await;
    assert_partition_headers(&r, 404, &range, committed + 1, "replace after the delete");

    // A container that does not exist is answered before any partition: no session headers.
    let r = c
        .send_with_pk(
            base,
            Method::GET,
            "/dbs/db/colls/nope/docs/a",
            &pk,
            &[],
            None,
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (404, 1003));
    assert_eq!(r.header("x-ms-session-token"), None);
    assert_eq!(r.header("lsn"), None);
}

#[tokio::test]
async fn a_missing_item_read_in_a_lagging_region_carries_that_replica_lsn() {
    const LAG_MS: u64 = 300;
    let (emu, c) = start_with_container(east_and_lagging_west(LAG_MS)).await;
    let (east, west) = east_west(&emu);
    let pk = json!("p");
    let created = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(created.status, 201);
    let range = created
        .header("x-ms-documentdb-partitionkeyrangeid")
        .unwrap()
        .to_owned();
    let committed = lsn_of(&created);

    let r = c.send_with_pk(west, Method::GET, DOC, &pk, &[], None).await;
    assert_partition_headers(&r, 404, &range, committed - 1, "read before replication");
    let r = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_partition_headers(&r, 409, &range, committed, "conflict in the write region");

    // A write refused by a read region never reached the partition.
    let r = c
        .create_item(west, "db", "c", &json!({"id": "b", "pk": "p"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (403, 3));
    assert_eq!(r.header("x-ms-session-token"), None);

    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    let r = c
        .send_with_pk(west, Method::GET, MISSING, &pk, &[], None)
        .await;
    assert_partition_headers(&r, 404, &range, committed, "read after replication");
}
