//! Users, permissions and resource tokens against the embedded emulator: a master-key driver
//! grants a user Read on one container; a driver signing with that permission's token reads there
//! and is refused writes and other containers.

use std::time::Duration;

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

#[tokio::test]
async fn users_and_permissions_are_created_read_listed_and_deleted() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let shop = driver.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    shop.create_container(&ContainerProperties::new("orders", &key), None)
        .await
        .unwrap();

    let alice = shop.create_user("alice").await.unwrap();
    assert_eq!(alice.id, "alice");
    assert_eq!(shop.user("alice").read().await.unwrap().id, "alice");
    shop.create_user("bob").await.unwrap();
    let mut users: Vec<String> = shop.users().map_ok(|u| u.id).try_collect().await.unwrap();
    users.sort();
    assert_eq!(users, ["alice", "bob"]);
    let again = shop.create_user("alice").await.unwrap_err();
    assert!(again.is_conflict(), "{again}");

    let user = shop.user("alice");
    let read_orders =
        PermissionProperties::new("read-orders", PermissionMode::Read, "dbs/shop/colls/orders")
            .with_partition_key("k1");
    let created = user
        .create_permission(&read_orders, Some(Duration::from_secs(600)))
        .await
        .unwrap();
    assert_eq!(created.permission_mode, PermissionMode::Read);
    assert_eq!(created.resource, "dbs/shop/colls/orders");
    assert_eq!(created.resource_partition_key, Some(json!(["k1"])));
    let token = created
        .token()
        .expect("a created permission carries its token");
    assert!(token.secret().starts_with("type=resource"));
    // The token never shows in Debug.
    let shown = format!("{created:?} {token:?}");
    assert!(!shown.contains(token.secret()), "{shown}");

    let all =
        PermissionProperties::new("read-orders", PermissionMode::All, "dbs/shop/colls/orders");
    let upserted = user.upsert_permission(&all, None).await.unwrap();
    assert_eq!(upserted.permission_mode, PermissionMode::All);
    assert_eq!(upserted.resource_partition_key, None);
    let read = user.read_permission("read-orders", None).await.unwrap();
    assert_eq!(read.permission_mode, PermissionMode::All);
    assert!(read.token().is_some());
    let listed: Vec<PermissionProperties> = user.permissions().try_collect().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "read-orders");

    user.delete_permission("read-orders").await.unwrap();
    let gone = user.read_permission("read-orders", None).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    user.delete().await.unwrap();
    let gone = user.read().await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
}

#[tokio::test]
async fn a_read_token_reads_its_container_and_is_refused_writes_and_other_containers() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let admin = common::driver(common::options(&emu)).await;
    let shop = admin.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    for c in ["orders", "payments"] {
        shop.create_container(&ContainerProperties::new(c, &key), None)
            .await
            .unwrap();
        admin
            .container("shop", c)
            .create_item("k1", &json!({"id": "o1", "pk": "k1", "n": 1}), None)
            .await
            .unwrap();
    }
    shop.create_user("reader").await.unwrap();
    let permission = shop
        .user("reader")
        .create_permission(
            &PermissionProperties::new("p", PermissionMode::Read, "dbs/shop/colls/orders"),
            None,
        )
        .await
        .unwrap();
    let token = permission.token().unwrap().clone();

    let credential =
        Credential::resource_tokens([(permission.resource.clone(), token.clone())]).unwrap();
    assert!(!format!("{credential:?}").contains(token.secret()));
    let mut options = DriverOptions::new(emu.endpoint(), credential);
    if let Some(pem) = emu.tls_cert_pem() {
        options = options.with_extra_trusted_cert_pem(pem.as_bytes().to_vec());
    }
    let reader = CosmosDriver::new(options).await.unwrap();

    let orders = reader.container("shop", "orders");
    let item = orders.read_item::<Value>("k1", "o1", None).await.unwrap();
    assert_eq!(item.status(), 200);
    assert_eq!(item.item().unwrap()["n"], 1);

    let write = orders
        .upsert_item("k1", &json!({"id": "o2", "pk": "k1"}), None)
        .await
        .unwrap_err();
    assert!(write.is_forbidden(), "{write}");
    let other = reader
        .container("shop", "payments")
        .read_item::<Value>("k1", "o1", None)
        .await
        .unwrap_err();
    assert!(other.is_forbidden(), "{other}");
    for err in [&write, &other] {
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(token.secret()), "{shown}");
    }
}

#[tokio::test]
async fn a_token_provider_is_asked_per_request_and_a_fresh_token_replaces_a_revoked_one() {
    use std::sync::{Arc, RwLock};

    let emu = common::start(EmulatorBuilder::new()).await;
    let admin = common::driver(common::options(&emu)).await;
    let shop = admin.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    shop.create_container(&ContainerProperties::new("orders", &key), None)
        .await
        .unwrap();
    admin
        .container("shop", "orders")
        .create_item("k1", &json!({"id": "o1", "pk": "k1"}), None)
        .await
        .unwrap();
    shop.create_user("reader").await.unwrap();
    let user = shop.user("reader");
    let grant = PermissionProperties::new("p", PermissionMode::Read, "dbs/shop/colls/orders");
    let first = user.create_permission(&grant, None).await.unwrap();

    let current: Arc<RwLock<Option<ResourceToken>>> = Arc::new(RwLock::new(first.token().cloned()));
    let asked: Arc<RwLock<Vec<String>>> = Arc::default();
    let credential = {
        let (current, asked) = (current.clone(), asked.clone());
        Credential::resource_token_provider(move |link: &str| {
            asked.write().unwrap().push(link.to_owned());
            // This application grants only the orders container (and the account read).
            if link.is_empty() || link.starts_with("dbs/shop/colls/orders") {
                current.read().unwrap().clone()
            } else {
                None
            }
        })
    };
    let mut options = DriverOptions::new(emu.endpoint(), credential);
    if let Some(pem) = emu.tls_cert_pem() {
        options = options.with_extra_trusted_cert_pem(pem.as_bytes().to_vec());
    }
    let reader = CosmosDriver::new(options).await.unwrap();
    let orders = reader.container("shop", "orders");
    orders.read_item::<Value>("k1", "o1", None).await.unwrap();
    assert!(asked
        .read()
        .unwrap()
        .contains(&"dbs/shop/colls/orders/docs/o1".to_owned()));

    // Revoked: the old token is refused; the provider hands out a fresh one and reads work again.
    user.delete_permission("p").await.unwrap();
    let refused = orders
        .read_item::<Value>("k1", "o1", None)
        .await
        .unwrap_err();
    assert!(
        refused.is_forbidden() || refused.is_unauthorized(),
        "{refused}"
    );
    let second = user.create_permission(&grant, None).await.unwrap();
    *current.write().unwrap() = second.token().cloned();
    orders.read_item::<Value>("k1", "o1", None).await.unwrap();

    // No token for a resource: refused before sending, naming the resource, not a token.
    let err = reader
        .container("shop", "payments")
        .read_item::<Value>("k1", "o1", None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Credential, "{err}");
    assert!(err.message().contains("dbs/shop/colls/payments"), "{err}");
    let token = second.token().unwrap().secret();
    assert!(!format!("{err} {err:?} {refused} {refused:?}").contains(token));
}
