//! The layout of an item's resource id (`_rid`): which container, which range created it, and
//! its number within that range. Pure: bytes in, bytes out.

/// Most items one range's counter numbers (the counter's 5 bytes).
const ITEM_COUNTER_LIMIT: u64 = 1 << 40;

/// An item resource id as the service lays one out: the container's 8 bytes, then a counter kept
/// per physical partition (little-endian, 5 bytes here), then the partition's marker (2 bytes)
/// and a zero type byte. Ids are unique because each range counts its own and markers differ;
/// sorted as text (how clients break ties, by `_rid`), the items of all ranges interleave in
/// the order each range received them.
pub(crate) fn item_rid(container: &[u8; 8], marker: u16, counter: u64) -> [u8; 16] {
    let mut rid = [0u8; 16];
    rid[..8].copy_from_slice(container);
    rid[8..13].copy_from_slice(&(counter % ITEM_COUNTER_LIMIT).to_le_bytes()[..5]);
    rid[13..15].copy_from_slice(&marker.to_le_bytes());
    rid
}

/// The range marker and counter an item resource id carries ([`item_rid`]'s inverse).
pub(crate) fn item_rid_parts(rid: &[u8; 16]) -> (u16, u64) {
    let mut counter = [0u8; 8];
    counter[..5].copy_from_slice(&rid[8..13]);
    (
        u16::from_le_bytes([rid[13], rid[14]]),
        u64::from_le_bytes(counter),
    )
}
