//! One test per (kind of read, fault): the three invariants of the harness. `faults!` makes the
//! six tests of one fault, one per kind of read, named after the kind.

use cosmos_emulator::faults::Reaction;

use super::harness::{check, warm_up_requests, Fault, Kind, Spec, KINDS, NORTH, WEST};

/// The primary answers after 150 ms (past the threshold, so the alternate goes), and the
/// alternate answers `alternate`.
fn slow_primary_and(alternate: Reaction) -> Fault {
    Fault::Rules(vec![
        Spec {
            regions: vec![WEST],
            reaction: Reaction::delay_ms(150),
            first: None,
        },
        Spec {
            regions: vec![NORTH],
            reaction: alternate,
            first: None,
        },
    ])
}

/// A module of one test per kind of read under the fault `$fault` builds.
macro_rules! faults {
    ($(#[$doc:meta])* $name:ident => $fault:expr) => {
        $(#[$doc])*
        mod $name {
            use super::*;

            fn fault() -> Fault {
                $fault
            }

            #[tokio::test]
            async fn point_read() {
                check(Kind::PointRead, fault()).await;
            }

            #[tokio::test]
            async fn query_page() {
                check(Kind::QueryPage, fault()).await;
            }

            #[tokio::test]
            async fn cross_partition_query() {
                check(Kind::CrossPartitionQuery, fault()).await;
            }

            #[tokio::test]
            async fn change_feed_page() {
                check(Kind::ChangeFeedPage, fault()).await;
            }

            #[tokio::test]
            async fn read_many() {
                check(Kind::ReadMany, fault()).await;
            }

            #[tokio::test]
            async fn metadata_read() {
                check(Kind::MetadataRead, fault()).await;
            }
        }
    };
}

faults! {
    /// A bare 429 with a 20 ms retry-after from every region.
    throttle_storm => Fault::everywhere(Reaction::respond_retry_after(429, 0, 20))
}

faults! {
    /// 429/3200 (RU budget) from every region.
    throttle_ru_budget => Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20))
}

faults! {
    /// 429/3092 from every region.
    throttle_regional => Fault::everywhere(Reaction::respond(429, 3092))
}

faults! {
    /// Range 0 split after the driver learnt the ranges (410/1002 everywhere for it).
    split => Fault::Split
}

faults! {
    /// 410/1007 (a split completing) for the first four requests, everywhere.
    split_completing => Fault::first(4, Reaction::respond(410, 1007))
}

faults! {
    /// 503 from the primary region.
    unavailable_primary => Fault::in_region(WEST, Reaction::respond(503, 0))
}

faults! {
    /// 503 from every region.
    unavailable_everywhere => Fault::everywhere(Reaction::respond(503, 0))
}

faults! {
    /// A slow primary (150 ms) while the alternate answers 403/1008.
    alternate_not_in_account => slow_primary_and(Reaction::respond(403, 1008))
}

faults! {
    /// 404/1002 from the primary region (its replica lags the session).
    lagging_primary => Fault::in_region(WEST, Reaction::respond(404, 1002))
}

faults! {
    /// 404/1002 from every region but the hub.
    lagging_everywhere_but_hub => Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002))
}

faults! {
    /// The primary region never answers.
    stalled_primary => Fault::in_region(WEST, Reaction::Stall)
}

faults! {
    /// Every region refuses connections.
    all_regions_refuse => Fault::AllRefuse
}

faults! {
    /// 429/3092 from the primary and the alternate while the third region serves: the alternate must
    /// not wait out throttle backoffs in place where the read without hedging moves on.
    throttle_regional_but_the_third => Fault::in_regions(&[WEST, NORTH], Reaction::respond(429, 3092))
}

faults! {
    /// The primary's region no longer serves the account (403/1008) while every region answers
    /// 429/3092: the read after the race may come back to the race's regions, as the read without
    /// hedging does, instead of waiting out throttle backoffs in the one region left.
    account_gone_and_throttled_everywhere => Fault::Rules(vec![ Spec { regions: vec![WEST], reaction: Reaction::respond(403, 1008), first: None, }, Spec { regions: Vec::new(), reaction: Reaction::respond(429, 3092), first: None, }, ])
}

/// The warm-up before each measured read sends nothing to the alternate, even with a primary slow
/// enough to start a race: an alternate a warm-up race dropped could still reach the emulator after
/// the counters are reset and be counted as a request of the measured read.
#[tokio::test]
async fn warm_up_sends_no_alternate() {
    let slow_primary = Fault::in_region(WEST, Reaction::delay_ms(150));
    for kind in KINDS {
        let [_, west, north] = warm_up_requests(kind, &slow_primary).await;
        assert!(west > 0, "{kind:?}: the warm-up reads from the primary");
        assert_eq!(
            north, 0,
            "{kind:?}: the warm-up sent requests to the alternate"
        );
    }
}
