//! The cached account metadata: read at start, refreshed on an interval and on demand.

use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http::Method;
use tokio::time::Instant;

use super::account::AccountProperties;
use super::hedging_kill_switch as kill_switch;
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::Endpoint;
use crate::protocol::ResponseHeaders;
use crate::protocol::{CosmosStatus, ResourceType};
use crate::transport::{AttemptFailure, AttemptHeaders, AttemptRequest, Transport};

/// One version of the account metadata.
#[derive(Debug)]
pub(crate) struct AccountSnapshot {
    /// The metadata.
    pub properties: AccountProperties,
    /// Increases with every refresh.
    pub generation: u64,
}

/// The account metadata of one driver; readers take a cheap snapshot (`Arc` clone).
#[derive(Debug)]
pub(crate) struct AccountCache {
    global: Endpoint,
    allow_insecure_http: bool,
    current: RwLock<Arc<AccountSnapshot>>,
    refresh: tokio::sync::Mutex<()>,
    /// When the last refresh was attempted (successful or not); `None` before the first.
    last_attempt: std::sync::Mutex<Option<Instant>>,
}

static ROOT: Bytes = Bytes::from_static(b"/");

/// Whether an answer carries what every Cosmos DB answer does (an activity id, or a request
/// charge or sub-status).
fn from_cosmos(headers: &http::HeaderMap) -> bool {
    ["x-ms-activity-id", "x-ms-request-charge", "x-ms-substatus"]
        .iter()
        .any(|name| headers.contains_key(*name))
}

/// An answer as a person would recognize it: the status, the content type and its first bytes.
fn foreign_answer(status: u16, headers: &http::HeaderMap, body: &[u8]) -> String {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type");
    let preview: String = String::from_utf8_lossy(&body[..body.len().min(64)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("status {status} ({content_type}), beginning {preview:?}")
}

async fn fetch_from(
    transport: &Transport,
    endpoint: &Endpoint,
    global: &Endpoint,
    allow_insecure_http: bool,
) -> Result<AccountProperties, CosmosError> {
    let req = AttemptRequest {
        method: &Method::GET,
        endpoint,
        path: &ROOT,
        resource_type: ResourceType::DatabaseAccount,
        resource_link: "",
        body: None,
        headers: AttemptHeaders::default(),
    };
    match transport
        .send(&req, None, transport.request_timeout())
        .await
    {
        Ok(raw) if raw.status.is_success() => {
            AccountProperties::parse(&raw.body, global, allow_insecure_http).map_err(|e| {
                if serde_json::from_slice::<serde_json::Value>(&raw.body).is_ok() {
                    e
                } else {
                    e.with_context(format!(
                        "{endpoint} is not a Cosmos DB endpoint: it answered {}",
                        foreign_answer(raw.status.as_u16(), &raw.headers, &raw.body)
                    ))
                }
            })
        }
        Ok(raw)
            if !from_cosmos(&raw.headers)
                && serde_json::from_slice::<serde_json::Value>(&raw.body).is_err() =>
        {
            Err(CosmosError::new(
                ErrorKind::Transport,
                format!(
                "reading the database account from {endpoint}: it is not a Cosmos DB endpoint: \
                 it answered {}",
                foreign_answer(raw.status.as_u16(), &raw.headers, &raw.body)
            ),
            ))
        }
        Ok(raw) => {
            let sub = raw
                .headers
                .get("x-ms-substatus")
                .and_then(|v| v.to_str().ok())
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            Err(CosmosError::service(
                CosmosStatus::new(raw.status.as_u16(), sub),
                ResponseHeaders::new(raw.headers),
                raw.body,
            )
            .with_context(format!("reading the database account from {endpoint}")))
        }
        Err(AttemptFailure::Local(e)) => Err(e),
        Err(AttemptFailure::Send(f)) => Err(CosmosError::new(
            ErrorKind::Transport,
            format!(
                "reading the database account from {endpoint} failed: {}",
                f.explain()
            ),
        )),
    }
}

impl AccountCache {
    /// Reads the account from `global`, or, when it cannot be read there, from the first of
    /// `regional` (the caller's regional endpoints, in order) that answers; fails when none does,
    /// with the global endpoint's error.
    pub(crate) async fn load(
        transport: &Transport,
        global: Endpoint,
        regional: &[Endpoint],
        allow_insecure_http: bool,
    ) -> Result<Self, CosmosError> {
        let properties = match fetch_from(transport, &global, &global, allow_insecure_http).await {
            Ok(p) => p,
            Err(global_error) => {
                let mut found = None;
                for endpoint in regional {
                    match fetch_from(transport, endpoint, &global, allow_insecure_http).await {
                        Ok(p) => {
                            tracing::warn!(
                                target: "cosmos.account",
                                endpoint = %endpoint,
                                "the global endpoint could not be read; started from a regional one"
                            );
                            found = Some(p);
                            break;
                        }
                        Err(e) => tracing::debug!(
                            target: "cosmos.account",
                            endpoint = %endpoint,
                            error = %e,
                            "regional endpoint could not be read"
                        ),
                    }
                }
                match found {
                    Some(p) => p,
                    None if regional.is_empty() => return Err(global_error),
                    None => {
                        return Err(global_error.with_context(format!(
                            "the account could not be read from the global endpoint nor from any of the {} regional endpoints",
                            regional.len()
                        )))
                    }
                }
            }
        };
        if let Some(c) = kill_switch::change(None, properties.disable_cross_regional_hedging) {
            kill_switch::report(c);
        }
        let snapshot = AccountSnapshot {
            properties,
            generation: 1,
        };
        Ok(Self {
            global,
            allow_insecure_http,
            current: RwLock::new(Arc::new(snapshot)),
            refresh: tokio::sync::Mutex::new(()),
            last_attempt: std::sync::Mutex::new(None),
        })
    }

    /// The current metadata.
    pub(crate) fn snapshot(&self) -> Arc<AccountSnapshot> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Re-reads the metadata unless a refresh was attempted within `min_interval` (for "every
    /// endpoint looks unhealthy", which every operation would otherwise notice at once).
    pub(crate) async fn refresh_if_stale(
        &self,
        transport: &Transport,
        min_interval: std::time::Duration,
    ) -> Arc<AccountSnapshot> {
        let recent = self
            .last_attempt
            .lock()
            .map(|t| t.is_some_and(|t| t.elapsed() < min_interval))
            .unwrap_or(false);
        let current = self.snapshot();
        if recent {
            return current;
        }
        self.refresh(transport, current.generation).await
    }

    /// Re-reads the metadata unless someone already did since `seen_generation` (concurrent
    /// refreshes coalesce into one request). Tries the global endpoint, then each regional
    /// endpoint. On failure the current metadata stays and is returned.
    pub(crate) async fn refresh(
        &self,
        transport: &Transport,
        seen_generation: u64,
    ) -> Arc<AccountSnapshot> {
        let _guard = self.refresh.lock().await;
        let current = self.snapshot();
        if current.generation > seen_generation {
            return current;
        }
        if let Ok(mut t) = self.last_attempt.lock() {
            *t = Some(Instant::now());
        }
        let mut endpoints = vec![self.global.clone()];
        for r in current
            .properties
            .read_regions
            .iter()
            .chain(&current.properties.write_regions)
        {
            if !endpoints.contains(&r.endpoint) {
                endpoints.push(r.endpoint.clone());
            }
        }
        for endpoint in &endpoints {
            match fetch_from(transport, endpoint, &self.global, self.allow_insecure_http).await {
                Ok(properties) => {
                    let changed = properties != current.properties;
                    let next = Arc::new(AccountSnapshot {
                        properties,
                        generation: current.generation + 1,
                    });
                    if let Ok(mut g) = self.current.write() {
                        *g = next.clone();
                    }
                    if changed {
                        tracing::info!(
                            hub = %next.properties.hub().region,
                            disable_cross_regional_hedging = ?next.properties.disable_cross_regional_hedging,
                            "account metadata changed"
                        );
                    }
                    if let Some(c) = kill_switch::change(
                        current.properties.disable_cross_regional_hedging,
                        next.properties.disable_cross_regional_hedging,
                    ) {
                        kill_switch::report(c);
                    }
                    return next;
                }
                Err(e) => {
                    tracing::warn!(endpoint = %endpoint, error = %e, "account metadata refresh failed")
                }
            }
        }
        current
    }
}

#[cfg(test)]
mod foreign_answer_tests {
    use super::*;

    #[test]
    fn foreign_answers_are_named_by_status_type_and_first_bytes() {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, "text/html".parse().unwrap());
        assert!(!from_cosmos(&headers));
        let body = b"<!DOCTYPE html>\n<html><head><title>Directory listing</title></head><body>and much more than sixty four bytes</body></html>";
        assert_eq!(
            foreign_answer(200, &headers, body),
            "status 200 (text/html), beginning \"<!DOCTYPE html> <html><head><title>Directory listing</title></he\""
        );
        assert_eq!(
            foreign_answer(404, &http::HeaderMap::new(), b""),
            "status 404 (no content type), beginning \"\""
        );
        headers.insert("x-ms-activity-id", "a-1".parse().unwrap());
        assert!(from_cosmos(&headers));
    }
}
