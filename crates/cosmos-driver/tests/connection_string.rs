//! A driver built from a connection string, against the embedded emulator.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};

#[tokio::test]
async fn the_emulators_well_known_connection_string_reaches_it() {
    let emu = common::start(EmulatorBuilder::new()).await;
    assert!(emu.tls_cert_pem().is_none(), "a plain-http emulator");
    let connection_string = format!(
        "AccountEndpoint={};AccountKey={};",
        emu.endpoint(),
        WELL_KNOWN_KEY
    );
    let driver = CosmosDriver::from_connection_string(&connection_string)
        .await
        .unwrap();
    let made = driver
        .create_database_if_not_exists("shop", None)
        .await
        .unwrap();
    assert!(made.created());
    // Keys in any case and order, no trailing `;`, and a key the driver does not use.
    let reordered = format!(
        "accountkey={WELL_KNOWN_KEY}; ACCOUNTENDPOINT = {} ;DisableServerCertificateValidation=True",
        emu.endpoint()
    );
    let options = DriverOptions::from_connection_string(&reordered).unwrap();
    let driver = CosmosDriver::new(options).await.unwrap();
    assert_eq!(driver.database("shop").read().await.unwrap().id, "shop");
}

#[tokio::test]
async fn a_wrong_key_in_a_connection_string_is_refused_by_the_service_and_not_echoed() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let other_key = "b3RoZXIta2V5LW90aGVyLWtleS1vdGhlci1rZXktb3RoZXIta2V5";
    let connection_string = format!("AccountEndpoint={};AccountKey={other_key}", emu.endpoint());
    let err = CosmosDriver::from_connection_string(&connection_string)
        .await
        .unwrap_err();
    assert!(err.is_unauthorized(), "{err}");
    assert!(!format!("{err} {err:?}").contains(other_key));
}

#[tokio::test]
async fn the_well_known_connection_string_reaches_an_emulator_over_tls() {
    let emu = common::start(EmulatorBuilder::new().tls(true)).await;
    assert!(emu.endpoint().starts_with("https://"), "{}", emu.endpoint());
    let connection_string = format!(
        "AccountEndpoint={};AccountKey={WELL_KNOWN_KEY};",
        emu.endpoint()
    );
    // The emulator's certificate is its own: trusted through the options the string gives.
    let pem = emu
        .tls_cert_pem()
        .expect("a TLS emulator has a certificate");
    let options = DriverOptions::from_connection_string(&connection_string)
        .unwrap()
        .with_extra_trusted_cert_pem(pem.as_bytes().to_vec());
    let driver = CosmosDriver::new(options).await.unwrap();
    let made = driver
        .create_database_if_not_exists("shop", None)
        .await
        .unwrap();
    assert!(made.created());
}
