//! The benchmark's items: their ids, partition keys and bodies, and which one each operation reads.
//! Every client compared by the benchmark uses these, so they read the same items in the same order.

use serde_json::{json, Value};

/// The id (and partition key) of item `index`.
pub fn item_id(index: u64) -> String {
    format!("item-{index}")
}

/// The partition key path of the benchmark container.
pub const PARTITION_KEY_PATH: &str = "/pk";

/// The id of the shared counter item of the `patch-counter` workload.
pub const COUNTER_ID: &str = "counter";

/// The document seeded for item `index`: id, partition key (equal to the id, so reads spread over
/// every partition), a counter and about 200 bytes of payload.
pub fn item_body(index: u64) -> Value {
    json!({
        "id": item_id(index),
        "pk": item_id(index),
        "n": 0,
        "payload": "x".repeat(180),
    })
}

/// The shared counter document.
pub fn counter_body() -> Value {
    json!({ "id": COUNTER_ID, "pk": COUNTER_ID, "n": 0 })
}

/// Which item operation `seq` touches: a fixed pseudo-random permutation-like walk (SplitMix64), so
/// runs are repeatable and reads do not sweep partitions in order.
pub fn item_for(seq: u64, items: u64) -> u64 {
    let mut z = seq.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    z % items.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_spread_and_repeatable() {
        let n = 1000;
        let mut seen = vec![0u32; n as usize];
        for seq in 0..10_000 {
            let i = item_for(seq, n);
            assert!(i < n);
            seen[i as usize] += 1;
        }
        assert_eq!(item_for(42, n), item_for(42, n));
        // Every item is read, none more than a few times its share of 10.
        assert!(
            seen.iter().all(|&c| (1..=40).contains(&c)),
            "{:?}",
            seen.iter().max()
        );
        assert_eq!(item_for(7, 0), 0);
    }

    #[test]
    fn bodies_carry_their_keys() {
        let b = item_body(3);
        assert_eq!(b["id"], "item-3");
        assert_eq!(b["pk"], "item-3");
        assert_eq!(counter_body()["pk"], COUNTER_ID);
    }
}
