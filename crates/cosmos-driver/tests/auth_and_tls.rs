//! Credentials and transport security against the emulator: master key, Entra ID tokens, HTTPS
//! with an extra trusted certificate, and bad input refused before any request.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cosmos_driver::auth::TokenFuture;
use cosmos_driver::{
    AccessToken, CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions,
    OperationOptions, TokenCredential,
};
use cosmos_emulator::EmulatorBuilder;

struct FixedToken(&'static str);

impl TokenCredential for FixedToken {
    fn get_token<'a>(&'a self, _scopes: &'a [&'a str]) -> TokenFuture<'a> {
        Box::pin(async move {
            Ok(AccessToken::new(
                self.0,
                SystemTime::now() + Duration::from_secs(3600),
            ))
        })
    }
}

#[tokio::test]
async fn entra_id_tokens_are_accepted() {
    let emu = common::start(EmulatorBuilder::new().aad_token("good-token")).await;
    let cred = Credential::token_credential(Arc::new(FixedToken("good-token")));
    let driver = common::driver(DriverOptions::new(emu.endpoint(), cred)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    assert_eq!(
        driver
            .execute(common::read(&c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap()
            .status(),
        200
    );

    let bad = Credential::token_credential(Arc::new(FixedToken("bad-token")));
    let e = CosmosDriver::new(DriverOptions::new(emu.endpoint(), bad))
        .await
        .unwrap_err();
    assert!(e.is_unauthorized(), "{e}");
    assert!(
        !format!("{e:?}").contains("bad-token"),
        "tokens never reach errors"
    );
}

#[tokio::test]
async fn a_wrong_master_key_is_refused_by_the_service() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let wrong = Credential::master_key("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=").unwrap();
    let e = CosmosDriver::new(DriverOptions::new(emu.endpoint(), wrong))
        .await
        .unwrap_err();
    assert!(e.is_unauthorized(), "{e}");
}

#[tokio::test]
async fn https_with_the_emulators_certificate() {
    let emu = common::start(EmulatorBuilder::new().tls(true)).await;
    assert!(emu.endpoint().starts_with("https://"));
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().requests()[0]
        .endpoint()
        .starts_with("https://"));

    let untrusted = DriverOptions::new(emu.endpoint(), Credential::master_key(emu.key()).unwrap());
    let e = CosmosDriver::new(untrusted).await.unwrap_err();
    assert!(
        e.is_transport(),
        "a self-signed certificate is not trusted by default: {e}"
    );
}

#[tokio::test]
async fn bad_input_is_refused_before_any_request() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    let before = emu.counters().region_total("East US");
    let o = OperationOptions::new();

    let cases: Vec<(CosmosOperation, &str)> = vec![
        (
            CosmosOperation::read_item(c.item("a").unwrap()),
            "partition key",
        ),
        (
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_body("not json"),
            "not a JSON object",
        ),
        (
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_body(r#"{"pk":"p"}"#),
            "\"id\"",
        ),
        (
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_body(r#"{"id":"a#b"}"#),
            "'#'",
        ),
    ];
    for (op, needle) in cases {
        let e = driver.execute(op, &o).await.unwrap_err();
        assert!(
            e.is_invalid_input() && e.message().contains(needle),
            "{needle}: {e}"
        );
    }
    assert!(DatabaseReference::new("")
        .unwrap_err()
        .message()
        .contains("empty"));
    assert_eq!(
        emu.counters().region_total("East US"),
        before,
        "nothing was sent"
    );

    for (url, needle) in [
        ("not a url", "not a valid URL"),
        ("http://example.com/", "plain http"),
        ("https://h/x", "path"),
    ] {
        let e = CosmosDriver::new(DriverOptions::new(
            url,
            Credential::master_key(emu.key()).unwrap(),
        ))
        .await
        .unwrap_err();
        assert!(
            e.is_invalid_input() && e.message().contains(needle),
            "{url}: {e}"
        );
    }
}
