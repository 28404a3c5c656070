//! Throughput offers: one per database or container provisioned with RU/s, manual or autoscale.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use std::time::Duration;

use tokio::time::Instant;

use super::throughput_buckets::{self, ThroughputBucket};
use crate::protocol::ids::{new_etag, unix_seconds};
use crate::protocol::ApiError;

/// The least manual throughput, and the step manual throughput moves in.
pub(super) const MIN_MANUAL: u64 = 400;
/// The least autoscale maximum, and its step.
pub(super) const MIN_AUTOSCALE: u64 = 1000;
/// The largest autoscale increment percent.
pub(super) const MAX_INCREMENT_PERCENT: u32 = 100;
/// The most throughput one offer may have.
pub(super) const MAX_THROUGHPUT: u64 = 1_000_000;

/// Provisioned throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Throughput {
    /// A fixed RU/s.
    Manual(u64),
    /// Scales between a tenth of `max` and `max` RU/s; the maximum grows by `increment_percent`
    /// when the storage needs it (`autoUpgradePolicy.throughputPolicy.incrementPercent`).
    Autoscale { max: u64, increment_percent: u32 },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AutopilotSettings {
    max_throughput: i64,
    #[serde(default)]
    auto_upgrade_policy: Option<AutoUpgradePolicy>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AutoUpgradePolicy {
    #[serde(default)]
    throughput_policy: Option<ThroughputPolicy>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThroughputPolicy {
    #[serde(default)]
    increment_percent: u32,
}

impl AutopilotSettings {
    fn increment_percent(&self) -> u32 {
        self.auto_upgrade_policy
            .as_ref()
            .and_then(|p| p.throughput_policy.as_ref())
            .map_or(0, |t| t.increment_percent)
    }
}

impl Throughput {
    /// The RU/s a client may use at most.
    pub(crate) fn ceiling(&self) -> u64 {
        match self {
            Self::Manual(n) => *n,
            Self::Autoscale { max, .. } => *max,
        }
    }

    /// The least a replace may set an offer of this kind to: the least manual RU/s, or the least
    /// autoscale maximum.
    pub(crate) fn minimum(&self) -> u64 {
        match self {
            Self::Manual(_) => MIN_MANUAL,
            Self::Autoscale { .. } => MIN_AUTOSCALE,
        }
    }

    /// From `x-ms-offer-throughput` and `x-ms-cosmos-offer-autopilot-settings` (at most one).
    pub(crate) fn from_headers(
        manual: Option<&str>,
        autoscale: Option<&str>,
    ) -> Result<Option<Self>, String> {
        match (manual, autoscale) {
            (None, None) => Ok(None),
            (Some(_), Some(_)) => Err("Send either x-ms-offer-throughput or x-ms-cosmos-offer-autopilot-settings, not both.".into()),
            (Some(text), None) => {
                let n = text.trim().parse::<u64>().map_err(|_| {
                    format!("x-ms-offer-throughput must be a whole number of RU/s, not {text:?}.")
                })?;
                Self::manual(n).map(Some)
            }
            (None, Some(text)) => {
                let settings: AutopilotSettings = serde_json::from_str(text).map_err(|e| {
                    format!("x-ms-cosmos-offer-autopilot-settings must be {{\"maxThroughput\": N}}: {e}")
                })?;
                Self::autoscale(settings.max_throughput, settings.increment_percent()).map(Some)
            }
        }
    }

    /// From an offer's `content` (a replace body).
    pub(crate) fn from_content(content: &Value) -> Result<Self, String> {
        let autopilot = content
            .get("offerAutopilotSettings")
            .filter(|s| s.get("maxThroughput").is_some())
            .map(|s| serde_json::from_value::<AutopilotSettings>(s.clone()));
        match autopilot {
            Some(Ok(settings)) => {
                Self::autoscale(settings.max_throughput, settings.increment_percent())
            }
            Some(Err(e)) => Err(format!(
                "offerAutopilotSettings must be {{\"maxThroughput\": N}}: {e}"
            )),
            None => match content.get("offerThroughput").and_then(Value::as_u64) {
                Some(n) => Self::manual(n),
                None => Err("The offer's content needs \"offerThroughput\" (a whole number) or \"offerAutopilotSettings\": {\"maxThroughput\": N}.".into()),
            },
        }
    }

    /// The throughput a replace with `content` leaves an offer at that now has `self`. Switching
    /// between manual and autoscale needs the service's migration headers, as in the service:
    /// `migrate_to_autoscale` with a content without autoscale settings (the maximum becomes the
    /// larger of 4000 and the manual RU/s, rounded up to a thousand), or `migrate_to_manual` with a
    /// content with them (the manual RU/s becomes a tenth of the maximum, at least 400).
    pub(crate) fn replaced_by(
        &self,
        content: &Value,
        migrate_to_autoscale: bool,
        migrate_to_manual: bool,
    ) -> Result<Self, String> {
        let has_autoscale = content.get("offerAutopilotSettings").is_some();
        match (self, migrate_to_autoscale, migrate_to_manual) {
            (_, true, true) => Err("Send at most one of x-ms-cosmos-migrate-offer-to-autopilot and x-ms-cosmos-migrate-offer-to-manual-throughput.".into()),
            (Self::Manual(n), true, false) if !has_autoscale => {
                Self::autoscale(((*n).max(4000).div_ceil(1000) * 1000) as i64, 0)
            }
            (Self::Autoscale { max, .. }, false, true) if has_autoscale => {
                Self::manual((max / 10).div_ceil(100).max(4) * 100)
            }
            (_, true, false) => Err("x-ms-cosmos-migrate-offer-to-autopilot must be supplied only for a manual offer, and its content must not contain offerAutopilotSettings.".into()),
            (_, false, true) => Err("x-ms-cosmos-migrate-offer-to-manual-throughput must be supplied only for an autoscale offer, and its content must contain offerAutopilotSettings.".into()),
            (Self::Manual(_), false, false) if has_autoscale => Err("Updating a manual offer to autoscale throughput needs x-ms-cosmos-migrate-offer-to-autopilot: true and a content without offerAutopilotSettings.".into()),
            (Self::Autoscale { .. }, false, false) if !has_autoscale => Err("Updating an autoscale offer to manual throughput needs x-ms-cosmos-migrate-offer-to-manual-throughput: true and a content with offerAutopilotSettings.".into()),
            (_, false, false) => Self::from_content(content),
        }
    }

    fn manual(n: u64) -> Result<Self, String> {
        if !(MIN_MANUAL..=MAX_THROUGHPUT).contains(&n) || !n.is_multiple_of(100) {
            return Err(format!(
                "The throughput {n} RU/s is not allowed: use a multiple of 100 from {MIN_MANUAL} to {MAX_THROUGHPUT}."
            ));
        }
        Ok(Self::Manual(n))
    }

    fn autoscale(requested: i64, increment_percent: u32) -> Result<Self, String> {
        if requested < MIN_AUTOSCALE as i64 {
            return Err(format!(
                "Requested throughput {requested} is less than required minimum throughput {MIN_AUTOSCALE}."
            ));
        }
        let max = requested as u64;
        if increment_percent > MAX_INCREMENT_PERCENT {
            return Err(format!(
                "The autoscale increment percent {increment_percent} is not allowed: at most {MAX_INCREMENT_PERCENT}."
            ));
        }
        if !(MIN_AUTOSCALE..=MAX_THROUGHPUT).contains(&max) || !max.is_multiple_of(1000) {
            return Err(format!(
                "The autoscale maximum {max} RU/s is not allowed: use a multiple of 1000 from {MIN_AUTOSCALE} to {MAX_THROUGHPUT}."
            ));
        }
        Ok(Self::Autoscale {
            max,
            increment_percent,
        })
    }

    /// The offer's `content` ([`Throughput::from_content`] reads it back).
    pub(crate) fn content(&self) -> Value {
        match self {
            Self::Manual(n) => {
                json!({"offerThroughput": n, "offerIsRUPerMinuteThroughputEnabled": false})
            }
            Self::Autoscale {
                max,
                increment_percent,
            } => json!({
                "offerThroughput": max / 10,
                "offerAutopilotSettings": {"maxThroughput": max,
                    "autoUpgradePolicy": {"throughputPolicy": {"incrementPercent": increment_percent}}},
                "offerIsRUPerMinuteThroughputEnabled": false
            }),
        }
    }
}

/// One offer.
#[derive(Clone, Debug)]
pub(crate) struct Offer {
    /// Lower-case, so the signature's resource link is the same in any casing.
    pub id: String,
    /// The database's or container's `_self` link.
    pub resource: String,
    /// The database's or container's `_rid`, and its bytes.
    pub offer_resource_id: String,
    pub rid_bytes: Vec<u8>,
    pub throughput: Throughput,
    /// The throughput buckets the offer caps, by id (none: requests are not limited by buckets).
    pub buckets: Vec<ThroughputBucket>,
    /// When the buckets last changed (none: not since this emulator or its data directory began
    /// keeping it); a data directory keeps it, to the second.
    pub buckets_changed_at: Option<Instant>,
    pub etag: String,
    pub ts: u64,
    /// Whether the splits a raise of it asked for are still under way
    /// (`content.isOfferReplacePending`, `x-ms-offer-replace-pending`).
    pub replace_pending: bool,
}

impl Offer {
    /// The offer's `content`: its throughput, its `throughputBuckets` when it has any
    /// ([`Throughput::from_content`] and [`throughput_buckets::from_content`] read it back), and
    /// `isOfferReplacePending` while a raise's splits are under way.
    pub(crate) fn content(&self) -> Value {
        let mut content = self.throughput.content();
        if let (Some(map), Some(buckets)) = (
            content.as_object_mut(),
            throughput_buckets::to_content(&self.buckets),
        ) {
            map.insert("throughputBuckets".into(), buckets);
        }
        if self.replace_pending {
            content["isOfferReplacePending"] = Value::Bool(true);
        }
        content
    }

    /// The offer document.
    pub(crate) fn body(&self) -> Bytes {
        let doc = json!({
            "resource": self.resource,
            "offerType": "Invalid",
            "offerResourceId": self.offer_resource_id,
            "offerVersion": "V2",
            "content": self.content(),
            "id": self.id,
            "_rid": self.id,
            "_self": format!("offers/{}/", self.id),
            "_etag": self.etag,
            "_ts": self.ts,
        });
        Bytes::from(doc.to_string())
    }
}

/// The account's offers, by id.
#[derive(Default)]
pub(crate) struct Offers {
    offers: RwLock<BTreeMap<String, Offer>>,
    next: AtomicU64,
    /// Offers whose raise asked for splits not yet started ([`Offers::take_scheduled`]).
    scheduled: Mutex<Vec<String>>,
}

/// Sub-status of a 429 for a throughput bucket change within the change interval.
pub(crate) const BUCKET_CHANGE_TOO_SOON: u32 = 3213;

/// The 429/3213 of a bucket change `wait` too soon.
fn bucket_change_too_soon(wait: Duration, interval: Duration) -> ApiError {
    let mut e = ApiError::new(
        429,
        format!(
            "Throughput bucket settings can be changed once every {}; try again in {} ms.",
            describe(interval),
            wait.as_millis()
        ),
    )
    .with_sub_status(BUCKET_CHANGE_TOO_SOON);
    e.retry_after_ms = Some(wait.as_millis().max(1) as u64);
    e
}

/// An interval in words: whole minutes when it is some, else milliseconds.
fn describe(interval: Duration) -> String {
    let secs = interval.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) && interval.subsec_nanos() == 0 {
        format!("{} minutes", secs / 60)
    } else {
        format!("{} ms", interval.as_millis())
    }
}

impl Offers {
    /// Adds an offer for the resource with `_self` `resource` and `_rid` `rid` (`rid_bytes`).
    pub(crate) fn create(
        &self,
        resource: String,
        rid: String,
        rid_bytes: &[u8],
        throughput: Throughput,
    ) -> Offer {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let offer = Offer {
            id: format!("of{n:x}"),
            resource,
            offer_resource_id: rid,
            rid_bytes: rid_bytes.to_vec(),
            throughput,
            buckets: Vec::new(),
            buckets_changed_at: None,
            etag: new_etag(),
            ts: unix_seconds(),
            replace_pending: false,
        };
        if let Ok(mut offers) = self.offers.write() {
            offers.insert(offer.id.clone(), offer.clone());
        }
        offer
    }

    /// All offers, by id.
    pub(crate) fn list(&self) -> Vec<Offer> {
        self.offers
            .read()
            .map(|o| o.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The offer with this id (any casing).
    pub(crate) fn get(&self, id: &str) -> Option<Offer> {
        self.offers
            .read()
            .ok()?
            .get(&id.to_ascii_lowercase())
            .cloned()
    }

    /// The offer of the resource with `_rid` `rid`.
    pub(crate) fn of_resource(&self, rid: &str) -> Option<Offer> {
        self.list().into_iter().find(|o| o.offer_resource_id == rid)
    }

    /// Sets an offer's throughput to what `next` makes of the current one, and its buckets to
    /// `buckets`; 404 when it does not exist, 412 when `if_match` names another version, 400 with
    /// `next`'s reason, 429/3213 with the time left when the buckets change within
    /// `change_interval` of their last change ([`throughput_buckets::change_allowed`]).
    pub(crate) fn replace(
        &self,
        id: &str,
        next: impl FnOnce(&Throughput) -> Result<Throughput, String>,
        buckets: Vec<ThroughputBucket>,
        if_match: Option<&str>,
        now: Instant,
        change_interval: Duration,
    ) -> Result<Offer, ApiError> {
        let mut offers = self
            .offers
            .write()
            .map_err(|_| ApiError::new(500, "The offers lock was poisoned."))?;
        let offer = offers
            .get_mut(&id.to_ascii_lowercase())
            .ok_or_else(ApiError::missing_entity)?;
        if if_match.is_some_and(|tag| tag.trim() != "*" && tag.trim() != offer.etag) {
            return Err(ApiError::precondition_failed());
        }
        let changed = throughput_buckets::change_allowed(
            &offer.buckets,
            &buckets,
            offer.buckets_changed_at,
            now,
            change_interval,
        )
        .map_err(|wait| bucket_change_too_soon(wait, change_interval))?;
        offer.throughput = next(&offer.throughput).map_err(ApiError::bad_request)?;
        offer.buckets = buckets;
        if changed {
            offer.buckets_changed_at = Some(now);
        }
        offer.etag = new_etag();
        offer.ts = unix_seconds();
        Ok(offer.clone())
    }

    /// Marks offer `id` as waiting for the splits its raise asked for, and schedules them; the
    /// offer as it is now (`None`: it is gone).
    pub(crate) fn begin_pending(&self, id: &str) -> Option<Offer> {
        let mut offers = self.offers.write().ok()?;
        let offer = offers.get_mut(id)?;
        offer.replace_pending = true;
        if let Ok(mut scheduled) = self.scheduled.lock() {
            scheduled.push(offer.id.clone());
        }
        Some(offer.clone())
    }

    /// The offers whose splits were scheduled since the last call.
    pub(crate) fn take_scheduled(&self) -> Vec<String> {
        self.scheduled
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }

    /// Marks offer `id`'s splits done.
    pub(crate) fn end_pending(&self, id: &str) {
        if let Ok(mut offers) = self.offers.write() {
            if let Some(offer) = offers.get_mut(id) {
                offer.replace_pending = false;
            }
        }
    }

    /// Replaces every offer with `offers` (as a data directory kept them); new offers get later ids.
    pub(crate) fn restore(&self, offers: Vec<Offer>) {
        let highest = offers
            .iter()
            .filter_map(|o| o.id.strip_prefix("of"))
            .filter_map(|n| u64::from_str_radix(n, 16).ok())
            .max()
            .unwrap_or(0);
        self.next.fetch_max(highest, Ordering::Relaxed);
        if let Ok(mut table) = self.offers.write() {
            *table = offers.into_iter().map(|o| (o.id.clone(), o)).collect();
        }
    }

    /// Removes the offers of the resource with `_rid` bytes `rid_bytes` and of everything under
    /// it (a database's rid prefixes its containers' rids).
    pub(crate) fn remove_under(&self, rid_bytes: &[u8]) {
        if let Ok(mut offers) = self.offers.write() {
            offers.retain(|_, o| !o.rid_bytes.starts_with(rid_bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_comes_from_one_header_within_limits() {
        type Row<'a> = (
            Option<&'a str>,
            Option<&'a str>,
            Result<Option<Throughput>, &'a str>,
        );
        let table: Vec<Row> = vec![
            (None, None, Ok(None)),
            (Some("400"), None, Ok(Some(Throughput::Manual(400)))),
            (
                None,
                Some(r#"{"maxThroughput": 4000}"#),
                Ok(Some(Throughput::Autoscale {
                    max: 4000,
                    increment_percent: 0,
                })),
            ),
            (Some("350"), None, Err("multiple of 100")),
            (Some("450"), None, Err("multiple of 100")),
            (Some("lots"), None, Err("whole number")),
            (
                None,
                Some(r#"{"maxThroughput": 1500}"#),
                Err("multiple of 1000"),
            ),
            (None, Some("{}"), Err("maxThroughput")),
            (
                Some("400"),
                Some(r#"{"maxThroughput": 4000}"#),
                Err("not both"),
            ),
        ];
        for (manual, auto, want) in table {
            match (Throughput::from_headers(manual, auto), want) {
                (Ok(got), Ok(w)) => assert_eq!(got, w, "{manual:?} {auto:?}"),
                (Err(e), Err(reason)) => assert!(e.contains(reason), "{manual:?} {auto:?}: {e}"),
                (got, w) => panic!("{manual:?} {auto:?}: got {got:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn switching_between_manual_and_autoscale_needs_the_migration_headers() {
        let manual = Throughput::Manual(600);
        let auto = Throughput::Autoscale {
            max: 5000,
            increment_percent: 0,
        };
        let m = json!({"offerThroughput": 800});
        let a = json!({"offerThroughput": 500, "offerAutopilotSettings": {"maxThroughput": 6000}});
        type Row<'a> = (
            Throughput,
            &'a Value,
            bool,
            bool,
            Result<Throughput, &'a str>,
        );
        let rows: Vec<Row> = vec![
            (manual, &m, false, false, Ok(Throughput::Manual(800))),
            (
                auto,
                &a,
                false,
                false,
                Ok(Throughput::Autoscale {
                    max: 6000,
                    increment_percent: 0,
                }),
            ),
            (
                manual,
                &a,
                false,
                false,
                Err("x-ms-cosmos-migrate-offer-to-autopilot"),
            ),
            (
                auto,
                &m,
                false,
                false,
                Err("x-ms-cosmos-migrate-offer-to-manual-throughput"),
            ),
            (
                manual,
                &m,
                true,
                false,
                Ok(Throughput::Autoscale {
                    max: 4000,
                    increment_percent: 0,
                }),
            ),
            (
                Throughput::Manual(4500),
                &m,
                true,
                false,
                Ok(Throughput::Autoscale {
                    max: 5000,
                    increment_percent: 0,
                }),
            ),
            (manual, &a, true, false, Err("must not contain")),
            (auto, &a, false, true, Ok(Throughput::Manual(500))),
            (
                Throughput::Autoscale {
                    max: 1000,
                    increment_percent: 0,
                },
                &a,
                false,
                true,
                Ok(Throughput::Manual(400)),
            ),
            (auto, &m, false, true, Err("must contain")),
            (auto, &m, true, true, Err("at most one")),
        ];
        for (now, content, to_auto, to_manual, want) in rows {
            let got = now.replaced_by(content, to_auto, to_manual);
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{now:?} {content}"),
                (Err(e), Err(needle)) => assert!(e.contains(needle), "{now:?} {content}: {e}"),
                (g, w) => panic!("{now:?} {content} {to_auto} {to_manual}: {g:?} want {w:?}"),
            }
        }
    }

    #[test]
    fn replace_reads_the_content_and_checks_the_etag() {
        let offers = Offers::default();
        let o = offers.create(
            "dbs/a/colls/b/".into(),
            "AAAAAQAAAAE=".into(),
            &[0, 0, 0, 1, 0, 0, 0, 1],
            Throughput::Manual(400),
        );
        assert_eq!(o.id, o.id.to_ascii_lowercase());
        let t = Throughput::from_content(&json!({"offerThroughput": 800})).unwrap();
        assert_eq!(
            offers
                .replace(
                    &o.id,
                    |_| Ok(t),
                    Vec::new(),
                    Some("\"old\""),
                    Instant::now(),
                    Duration::ZERO
                )
                .unwrap_err()
                .status,
            412
        );
        let replaced = offers
            .replace(
                &o.id.to_ascii_uppercase(),
                |_| Ok(t),
                Vec::new(),
                Some(&o.etag),
                Instant::now(),
                Duration::ZERO,
            )
            .unwrap();
        assert_eq!(replaced.throughput, Throughput::Manual(800));
        let body: Value = serde_json::from_slice(&replaced.body()).unwrap();
        assert_eq!(body["content"]["offerThroughput"], 800);
        assert_eq!(body["_self"], format!("offers/{}/", o.id));
        let auto = Throughput::from_content(
            &json!({"offerThroughput": 400, "offerAutopilotSettings": {"maxThroughput": 5000}}),
        )
        .unwrap();
        assert_eq!(
            auto,
            Throughput::Autoscale {
                max: 5000,
                increment_percent: 0
            }
        );
        assert!(Throughput::from_content(&json!({})).is_err());
        assert_eq!(
            offers
                .replace(
                    "nope",
                    |_| Ok(t),
                    Vec::new(),
                    None,
                    Instant::now(),
                    Duration::ZERO
                )
                .unwrap_err()
                .status,
            404
        );
        offers.create(
            "dbs/b/".into(),
            "AAAAAg==".into(),
            &[0, 0, 0, 2],
            Throughput::Manual(400),
        );
        offers.remove_under(&[0, 0, 0, 1]);
        assert_eq!(offers.list().len(), 1);
        assert!(offers.of_resource("AAAAAg==").is_some());
    }
}
