//! Time to live, as the service documents it: a container's `defaultTtl` turns expiry on (absent
//! or `null`: off, and items' own `ttl` is ignored; `-1`: on, items do not expire unless their own
//! `ttl` says so; `n > 0`: items expire `n` seconds after their last write). An item's `ttl`
//! (`-1` or `n > 0`) overrides the container's when expiry is on. An item expires once its `_ts`
//! plus its time to live has passed: a point read no longer finds it, and the emulator deletes it
//! in its periodic sweep (each second) in the write region, as any delete, so every region, query
//! and the change feed see it go.

use serde::Deserialize;
use serde_json::Value;

/// The seconds an item lives after its last write (`None`: it does not expire), from the
/// container's `defaultTtl` and the item's `ttl`. Pure.
pub(crate) fn time_to_live(default_ttl: Option<i64>, item_ttl: Option<&Value>) -> Option<u64> {
    let default_ttl = default_ttl?;
    let own = item_ttl
        .and_then(Value::as_i64)
        .filter(|t| *t == -1 || *t > 0);
    match own.unwrap_or(default_ttl) {
        t if t > 0 => u64::try_from(t).ok(),
        _ => None,
    }
}

/// Checks an item's own `ttl` as the service does: absent, -1 (never expires) or a positive whole
/// number of seconds up to 2^31 - 1; 0, null, another negative number or anything else is refused
/// with the reason. Pure.
pub(crate) fn check_item_ttl(item: &serde_json::Map<String, Value>) -> Result<(), String> {
    match item.get("ttl") {
        None => Ok(()),
        Some(v) => match v.as_i64() {
            Some(-1) => Ok(()),
            Some(n) if n > 0 && n <= i64::from(i32::MAX) => Ok(()),
            _ => Err(format!(
                "The value of ttl ({v}) is invalid: an item's ttl is -1 or a positive whole number of seconds up to {}.",
                i32::MAX
            )),
        },
    }
}

/// What the sweep reads of a stored item.
#[derive(Deserialize)]
struct Expiry {
    #[serde(rename = "_ts", default)]
    ts: u64,
    ttl: Option<Value>,
}

/// Whether the stored item `body` has expired at `now` (seconds since the epoch) under the
/// container's `defaultTtl`.
pub(crate) fn expired(default_ttl: Option<i64>, body: &[u8], now: u64) -> bool {
    let Ok(item) = serde_json::from_slice::<Expiry>(body) else {
        return false;
    };
    time_to_live(default_ttl, item.ttl.as_ref())
        .is_some_and(|ttl| item.ts.saturating_add(ttl) <= now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_items_ttl_is_minus_one_or_a_positive_number_of_seconds() {
        let ok = [
            None,
            Some(json!(-1)),
            Some(json!(1)),
            Some(json!(2147483647)),
        ];
        let refused = [
            json!(0),
            json!(null),
            json!(-2),
            json!(2147483648u64),
            json!(1.5),
            json!("10"),
            json!(true),
        ];
        for ttl in ok {
            let mut m = serde_json::Map::new();
            if let Some(t) = ttl.clone() {
                m.insert("ttl".into(), t);
            }
            assert_eq!(check_item_ttl(&m), Ok(()), "{ttl:?}");
        }
        for ttl in refused {
            let mut m = serde_json::Map::new();
            m.insert("ttl".into(), ttl.clone());
            assert!(check_item_ttl(&m).is_err(), "{ttl}");
        }
    }

    #[test]
    fn the_time_to_live_table() {
        // (container defaultTtl, item ttl) -> seconds
        let table = [
            (None, None, None),
            (None, Some(json!(10)), None),
            (Some(-1), None, None),
            (Some(-1), Some(json!(10)), Some(10)),
            (Some(-1), Some(json!(-1)), None),
            (Some(60), None, Some(60)),
            (Some(60), Some(json!(5)), Some(5)),
            (Some(60), Some(json!(-1)), None),
            (Some(60), Some(json!(0)), Some(60)),
            (Some(60), Some(json!("5")), Some(60)),
            (Some(60), Some(json!(null)), Some(60)),
        ];
        for (container, item, want) in table {
            assert_eq!(
                time_to_live(container, item.as_ref()),
                want,
                "{container:?} {item:?}"
            );
        }
    }

    #[test]
    fn an_item_expires_once_its_ts_plus_ttl_has_passed() {
        let body = json!({"id": "a", "_ts": 1000, "ttl": 10}).to_string();
        assert!(!expired(Some(-1), body.as_bytes(), 1009));
        assert!(expired(Some(-1), body.as_bytes(), 1010));
        assert!(!expired(None, body.as_bytes(), 5000), "expiry off");
        assert!(!expired(Some(60), b"not json", 5000));
    }
}
