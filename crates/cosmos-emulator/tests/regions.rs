//! Regions: write-region enforcement (403/3), the account document, failover, hub-only reads.

use crate::common;

use common::{east_west, start_with_container, Resp, TestClient};
use cosmos_emulator::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::json;

fn names(locations: &serde_json::Value) -> Vec<String> {
    locations
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Asks the admin API to move the write region.
async fn failover_request(c: &TestClient, emu: &Emulator, body: &[u8]) -> Resp {
    let auth = format!("Bearer {}", c.key);
    c.send_raw(
        emu.endpoint(),
        Method::POST,
        "/_emulator/failover",
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        Some(body),
    )
    .await
}

#[tokio::test]
async fn the_account_document_lists_each_region_with_its_own_endpoint() {
    let emu = EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c.get(emu.endpoint(), "/", &[]).await;
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(names(&doc["writableLocations"]), vec!["East US"]);
    assert_eq!(names(&doc["readableLocations"]), vec!["East US", "West US"]);
    assert_eq!(
        doc["readableLocations"][1]["databaseAccountEndpoint"],
        emu.region_endpoint("West US").unwrap()
    );
    assert!(emu
        .region_endpoint("West US")
        .unwrap()
        .starts_with("http://127.0.0.1:"));
    assert_eq!(doc["enableMultipleWriteLocations"], false);
    assert_eq!(
        doc["userConsistencyPolicy"]["defaultConsistencyLevel"],
        "Session"
    );
    assert_ne!(
        emu.region_endpoint("East US"),
        emu.region_endpoint("West US")
    );
    assert_eq!(emu.region_endpoint("Mars"), None);
}

#[tokio::test]
async fn writes_to_a_read_region_answer_403_3() {
    let (emu, c) =
        start_with_container(EmulatorBuilder::new().regions(["East US", "West US"])).await;
    let west = emu.region_endpoint("West US").unwrap();
    let r = c
        .create_item(west, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (403, 3), "{r:?}");
    assert_eq!(r.json()["code"], "Forbidden");
    let east = emu.region_endpoint("East US").unwrap();
    assert_eq!(
        c.create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
            .await
            .status,
        201
    );
    // Reads work in every region.
    assert_eq!(c.read_a(west, &[]).await.status, 200);
    let r = c
        .post_json(west, "/dbs", &[], &json!({"id": "other"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (403, 3));
}

#[tokio::test]
async fn multi_write_accounts_take_writes_everywhere() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .regions(["East US", "West US"])
            .multi_write(true),
    )
    .await;
    let west = emu.region_endpoint("West US").unwrap();
    let r = c
        .create_item(west, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(r.status, 201);
    let token = r.header("x-ms-session-token").unwrap();
    assert!(token.contains("#0=") && token.contains("#1="), "{token}");
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert_eq!(names(&doc["writableLocations"]).len(), 2);
    assert_eq!(doc["enableMultipleWriteLocations"], true);
}

#[tokio::test]
async fn failover_moves_writes_from_the_library_and_the_admin_api() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let east = emu.region_endpoint("East US").unwrap().to_owned();
    let west = emu.region_endpoint("West US").unwrap().to_owned();
    assert_eq!(
        c.create_item(&east, "db", "c", &json!({"id": "a", "pk": "p"}))
            .await
            .status,
        201
    );

    emu.failover("West US").unwrap();
    assert_eq!(emu.write_region(), "West US");
    let r = c
        .create_item(&east, "db", "c", &json!({"id": "b", "pk": "p"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (403, 3));
    assert_eq!(
        c.create_item(&west, "db", "c", &json!({"id": "b", "pk": "p"}))
            .await
            .status,
        201
    );
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert_eq!(names(&doc["writableLocations"]), vec!["West US"]);
    assert_eq!(
        names(&doc["readableLocations"]),
        vec!["West US", "East US", "North Europe"]
    );
    // The global endpoint follows the write region.
    assert_eq!(
        c.create_item(emu.endpoint(), "db", "c", &json!({"id": "g", "pk": "p"}))
            .await
            .status,
        201
    );

    let r = failover_request(&c, &emu, br#"{"writeRegion":"North Europe"}"#).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(names(&r.json()["writableLocations"]), vec!["North Europe"]);
    let r = c
        .create_item(&west, "db", "c", &json!({"id": "c", "pk": "p"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (403, 3));
    let r = failover_request(&c, &emu, br#"{"writeRegion":"Mars"}"#).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("East US"));
    assert!(emu.failover("Mars").unwrap_err().contains("unknown region"));
}

#[tokio::test]
async fn hub_only_reads_are_refused_outside_the_hub_and_see_committed_state_in_it() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .regions(["East US", "West US"])
            .region_replication_lag("East US", cosmos_emulator::ReplicationLag::fixed_ms(60_000))
            .region_replication_lag("West US", cosmos_emulator::ReplicationLag::fixed_ms(60_000))
            // The token below never becomes reachable: answer its 1002 without the wait.
            .session_wait(cosmos_emulator::SessionWait::OFF),
    )
    .await;
    let (east, west) = east_west(&emu);
    let created = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(created.status, 201);
    let token = created
        .header("x-ms-session-token")
        .expect("a session token");
    let (range, lsn) = token.split_once(":-1#").expect("a range:-1#lsn token");
    let (past, reached) = (format!("{range}:-1#99"), format!("{range}:-1#{lsn}"));
    let hub_only = [("x-ms-cosmos-hub-region-processing-only", "True")];
    let r = c.read_a(west, &hub_only).await;
    assert_eq!((r.status, r.sub_status()), (403, 3));
    let r = c.read_a(east, &hub_only).await;
    assert_eq!(r.status, 200);
    // Without the header the lagging West US replica does not have the item yet.
    assert_eq!(c.read_a(west, &[]).await.status, 404);
    // The hub holds every committed write: a session token past them (from a deleted container of
    // the same name) is not served there either.
    let r = c
        .read_a(
            east,
            &[
                ("x-ms-cosmos-hub-region-processing-only", "True"),
                ("x-ms-session-token", past.as_str()),
            ],
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (404, 1002));
    let r = c
        .read_a(
            east,
            &[
                ("x-ms-cosmos-hub-region-processing-only", "True"),
                ("x-ms-session-token", reached.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "a token the hub has reached is served");
}

/// One region is advertised at the global endpoint (as Microsoft's emulator does, so faults
/// injected by region URL reach it), unless told to advertise its own port.
#[tokio::test]
async fn one_region_is_advertised_at_the_global_endpoint_unless_told_otherwise() {
    for (own_port, want_global) in [(false, true), (true, false)] {
        let emu = EmulatorBuilder::new()
            .regions(["West US"])
            .own_port_for_one_region(own_port)
            .start()
            .await
            .unwrap();
        let c = TestClient::new(WELL_KNOWN_KEY);
        let account = c.get(emu.endpoint(), "/", &[]).await.json();
        for list in ["writableLocations", "readableLocations"] {
            let advertised = account[list][0]["databaseAccountEndpoint"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(
                advertised == emu.endpoint(),
                want_global,
                "{list}: {advertised}"
            );
            assert_eq!(emu.region_endpoint("West US"), Some(advertised.as_str()));
            // What is advertised serves the account.
            assert_eq!(c.get(&advertised, "/", &[]).await.status, 200);
        }
    }
    // Several regions each keep their own port.
    let emu = EmulatorBuilder::new().start().await.unwrap();
    assert!(emu
        .regions()
        .iter()
        .all(|r| emu.region_endpoint(r) != Some(emu.endpoint())));
}
