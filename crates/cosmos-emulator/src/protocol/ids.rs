//! Generated identifiers: activity ids, etags and resource ids (`_rid`).

use std::sync::atomic::{AtomicU64, Ordering};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

static ETAG_COUNTER: AtomicU64 = AtomicU64::new(1);

/// A random UUID (version 4) in its hyphenated form.
pub(crate) fn activity_id() -> String {
    let bits: u128 = rand::random();
    let bits = (bits & !(0xF << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A new, unique etag, quoted as the service sends it.
pub(crate) fn new_etag() -> String {
    let n = ETAG_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "\"{:08x}-0000-0200-0000-{:012x}\"",
        (n >> 48) as u32,
        n & 0xFFFF_FFFF_FFFF
    )
}

/// Encodes resource-id bytes the way the service writes `_rid` ('/' becomes '-').
pub(crate) fn encode_rid(bytes: &[u8]) -> String {
    STANDARD.encode(bytes).replace('/', "-")
}

/// Seconds since the Unix epoch (the `_ts` property).
pub(crate) fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_ids_look_like_uuids() {
        let id = activity_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
        assert_ne!(id, activity_id());
    }

    #[test]
    fn etags_are_quoted_and_unique() {
        let a = new_etag();
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert_ne!(a, new_etag());
    }

    #[test]
    fn rids_never_contain_slashes() {
        assert!(!encode_rid(&[0xFF, 0xFF, 0xFF, 0xFF]).contains('/'));
    }
}
