//! A driver starts from the regional endpoints it was given when the global endpoint is down.

use crate::common;

use cosmos_driver::{CosmosDriver, Credential, DriverOptions, OperationOptions};
use cosmos_emulator::EmulatorBuilder;

/// A loopback port nothing listens on (bound, then released).
fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

#[tokio::test]
async fn starts_from_a_regional_endpoint_when_the_global_one_is_down() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let key = Credential::master_key(emu.key()).unwrap();
    let dead = dead_endpoint();

    // Without regional endpoints the driver cannot start.
    let e = CosmosDriver::new(DriverOptions::new(dead.clone(), key.clone()))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("reading the database account"),
        "{e}"
    );

    let west = emu.region_endpoint("West US").unwrap().to_string();
    let options =
        DriverOptions::new(dead.clone(), key.clone()).with_regional_endpoints([dead.clone(), west]);
    let driver = CosmosDriver::new(options)
        .await
        .expect("starts from West US");
    assert_eq!(driver.write_region().as_str(), "East US");
    // It works: the account's own regional endpoints serve the operations.
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // None of them answering: the error says so.
    let e =
        CosmosDriver::new(DriverOptions::new(dead.clone(), key).with_regional_endpoints([dead]))
            .await
            .unwrap_err();
    assert!(
        e.to_string()
            .contains("nor from any of the 1 regional endpoints"),
        "{e}"
    );
}
