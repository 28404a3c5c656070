//! Random fault schedules: which regions fault, with which answers, for how many requests, and
//! whether a range splits first. Every schedule must keep the harness's three invariants.

use cosmos_emulator::faults::Reaction;
use proptest::prelude::*;

use super::harness::{check, Fault, Spec, EAST, KINDS, NORTH, WEST};

/// The answers a region may give instead of serving.
fn reaction(i: usize) -> Reaction {
    match i {
        0 => Reaction::respond_retry_after(429, 0, 10),
        1 => Reaction::respond(429, 3092),
        2 => Reaction::respond_retry_after(429, 3200, 10),
        3 => Reaction::respond(503, 0),
        4 => Reaction::respond(410, 1002),
        5 => Reaction::respond(410, 1007),
        6 => Reaction::respond(404, 1002),
        7 => Reaction::respond(403, 1008),
        8 => Reaction::respond(408, 0),
        9 => Reaction::respond(500, 0),
        _ => Reaction::delay_ms(120),
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::sample::subsequence(vec![WEST, NORTH, EAST], 0..=3),
        0usize..11,
        proptest::option::of(1u64..8),
    )
        .prop_map(|(regions, r, first)| Spec {
            regions,
            reaction: reaction(r),
            first,
        })
}

fn schedule() -> impl Strategy<Value = (usize, Fault)> {
    (
        0..KINDS.len(),
        proptest::collection::vec(spec(), 1..=2),
        any::<bool>(),
    )
        .prop_map(|(kind, specs, split)| {
            let fault = if split {
                Fault::SplitAnd(specs)
            } else {
                Fault::Rules(specs)
            };
            (kind, fault)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        max_shrink_iters: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_fault_schedules_keep_the_invariants((kind, fault) in schedule()) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(check(KINDS[kind], fault));
    }
}
