//! What the CLI tests share: the `cosmos` binary run against an emulator started by the test.

#![allow(dead_code)]

use std::process::{Command, Output};

use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde_json::Value;

/// The `cosmos` binary pointed at one account.
pub struct Cli {
    pub endpoint: String,
    pub key: String,
}

impl Cli {
    /// Runs `cosmos ARGS` with the account in the environment, off the async runtime's threads.
    pub async fn run(&self, args: &[&str]) -> Output {
        let (endpoint, key) = (self.endpoint.clone(), self.key.clone());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_cosmos"))
                .args(&args)
                .env("COSMOS_ENDPOINT", endpoint)
                .env("COSMOS_KEY", key)
                .env_remove("RUST_LOG")
                .output()
                .expect("the cosmos binary runs")
        })
        .await
        .expect("the command task completes")
    }

    /// Runs a command that must succeed and returns its JSON output.
    pub async fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cosmos {args:?} failed: {stderr}");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("cosmos {args:?}: stdout is not JSON ({e})"))
    }

    /// Runs a command that must succeed and returns its standard output.
    pub async fn stdout(&self, args: &[&str]) -> String {
        succeeded(&self.run(args).await, &format!("cosmos {args:?}"))
    }

    /// Runs a command that must fail and returns its stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(!out.status.success(), "cosmos {args:?} should have failed");
        assert!(
            out.stdout.is_empty(),
            "a failed command prints nothing on stdout"
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

pub async fn start() -> (Emulator, Cli) {
    let emulator = EmulatorBuilder::new()
        .start()
        .await
        .expect("emulator starts");
    let cli = Cli {
        endpoint: emulator.endpoint().to_owned(),
        key: emulator.key().to_owned(),
    };
    (emulator, cli)
}

/// The standard output of `out`, which must have succeeded (`what` names it in the failure).
pub fn succeeded(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
