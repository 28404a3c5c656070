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

/// The vector property of the `vector` workload's items.
pub const EMBEDDING_PATH: &str = "/embedding";

/// A repeatable pseudo-random vector of `dimensions` numbers in [-1, 1): item `index`'s embedding
/// (`stream` 0) or the probe of operation `index` (`stream` 1), so every run queries the same
/// probes over the same vectors.
pub fn embedding(stream: u64, index: u64, dimensions: u32) -> Vec<f32> {
    let mut state = index
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
    (0..dimensions)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            // The top 24 bits as a fraction of 2^24: exact in an f32.
            ((z >> 40) as f32 / (1u32 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The document seeded for item `index` of the `vector` workload: id, partition key (the id) and a
/// `dimensions`-number embedding.
pub fn vector_item_body(index: u64, dimensions: u32) -> Value {
    json!({
        "id": item_id(index),
        "pk": item_id(index),
        "embedding": embedding(0, index, dimensions),
    })
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
        let v = vector_item_body(3, 16);
        assert_eq!(v["pk"], "item-3");
        assert_eq!(v["embedding"].as_array().unwrap().len(), 16);
    }

    #[test]
    fn embeddings_are_repeatable_spread_and_distinct() {
        let a = embedding(0, 7, 256);
        assert_eq!(a, embedding(0, 7, 256));
        assert_eq!(a.len(), 256);
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)), "{a:?}");
        // Both signs, no constant runs.
        assert!(a.iter().any(|x| *x < -0.5) && a.iter().any(|x| *x > 0.5));
        assert_ne!(a, embedding(0, 8, 256));
        assert_ne!(a, embedding(1, 7, 256), "probes differ from the items");
        let mean: f32 = a.iter().sum::<f32>() / a.len() as f32;
        assert!(mean.abs() < 0.15, "{mean}");
        assert!(embedding(0, 1, 0).is_empty());
    }
}
