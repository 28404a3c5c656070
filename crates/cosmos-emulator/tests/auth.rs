//! Authorization: each 401 cause, Entra ID tokens, and the explicit no-auth mode.

use crate::common;

use std::time::{Duration, SystemTime};

use common::{master_auth, now_date, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;

#[tokio::test]
async fn each_failure_answers_401_saying_why() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    let date = now_date();
    let good = master_auth(WELL_KNOWN_KEY, "GET", "dbs", "", &date);
    assert_eq!(
        c.send_raw(
            base,
            Method::GET,
            "/dbs",
            &[("x-ms-date", &date), ("authorization", &good)],
            None
        )
        .await
        .status,
        200
    );

    let wrong_link = master_auth(WELL_KNOWN_KEY, "GET", "dbs", "dbs/other", &date);
    let other_key =
        "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==";
    let wrong_key = master_auth(other_key, "GET", "dbs", "", &date);
    let stale_date = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(20 * 60));
    let stale = master_auth(WELL_KNOWN_KEY, "GET", "dbs", "", &stale_date);
    let future_date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(20 * 60));
    let future = master_auth(WELL_KNOWN_KEY, "GET", "dbs", "", &future_date);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("x-ms-date", &date)], "no authorization header"),
        (
            vec![
                ("x-ms-date", &date),
                ("authorization", "type=master&ver=1.0"),
            ],
            "malformed",
        ),
        (
            vec![("x-ms-date", &date), ("authorization", "bogus")],
            "malformed",
        ),
        (
            vec![("x-ms-date", &date), ("authorization", &wrong_link)],
            "signature does not match",
        ),
        (
            vec![("x-ms-date", &date), ("authorization", &wrong_key)],
            "signature does not match",
        ),
        (vec![("authorization", &good)], "no x-ms-date"),
        (
            vec![("x-ms-date", &stale_date), ("authorization", &stale)],
            "stale",
        ),
        (
            vec![("x-ms-date", &future_date), ("authorization", &future)],
            "stale",
        ),
        (
            vec![("x-ms-date", "not a date"), ("authorization", &good)],
            "not an RFC 1123 date",
        ),
        (
            vec![
                ("x-ms-date", &date),
                ("authorization", "type=aad&ver=1.0&sig=tok"),
            ],
            "not accepted",
        ),
    ];
    for (headers, reason) in cases {
        let r = c.send_raw(base, Method::GET, "/dbs", &headers, None).await;
        assert_eq!(r.status, 401, "{reason}: {r:?}");
        assert_eq!(r.json()["code"], "Unauthorized");
        assert!(
            r.message().contains(reason),
            "wanted {reason:?} in {:?}",
            r.message()
        );
        assert!(!r.message().contains(WELL_KNOWN_KEY));
    }
}

#[tokio::test]
async fn a_client_with_the_wrong_key_gets_401_and_the_right_one_works() {
    let emu = EmulatorBuilder::new()
        .key("c2VjcmV0LWtleS1mb3ItdGVzdHM=")
        .start()
        .await
        .unwrap();
    let right = TestClient::new("c2VjcmV0LWtleS1mb3ItdGVzdHM=");
    let wrong = TestClient::new(WELL_KNOWN_KEY);
    assert_eq!(right.get(emu.endpoint(), "/", &[]).await.status, 200);
    assert_eq!(wrong.get(emu.endpoint(), "/", &[]).await.status, 401);
    // Region endpoints check too.
    let west = emu.region_endpoint("West US").unwrap();
    assert_eq!(wrong.get(west, "/dbs", &[]).await.status, 401);
}

#[tokio::test]
async fn entra_id_tokens_are_accepted_only_when_configured() {
    let emu = EmulatorBuilder::new()
        .aad_token("let-me-in")
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let date = now_date();
    let ok = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/dbs",
            &[
                ("x-ms-date", &date),
                ("authorization", "type%3Daad%26ver%3D1.0%26sig%3Dlet-me-in"),
            ],
            None,
        )
        .await;
    assert_eq!(ok.status, 200, "{ok:?}");
    let bad = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/dbs",
            &[
                ("x-ms-date", &date),
                ("authorization", "type=aad&ver=1.0&sig=nope"),
            ],
            None,
        )
        .await;
    assert_eq!(bad.status, 401);
    assert!(bad.message().contains("not the one"));
}

#[tokio::test]
async fn no_auth_accepts_unsigned_requests_only_when_asked() {
    let open = EmulatorBuilder::new().no_auth(true).start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    assert_eq!(c.get_unsigned(open.endpoint(), "/dbs").await.status, 200);
    let closed = EmulatorBuilder::new().start().await.unwrap();
    assert_eq!(c.get_unsigned(closed.endpoint(), "/dbs").await.status, 401);
}
