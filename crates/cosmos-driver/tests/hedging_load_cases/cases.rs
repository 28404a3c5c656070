//! One test per (kind of read, fault): the three invariants of the harness.

use cosmos_emulator::faults::Reaction;

use super::harness::{check, Fault, Kind, Spec, NORTH, WEST};

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

/// A bare 429 with a 20 ms retry-after from every region.
mod throttle_storm {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::everywhere(Reaction::respond_retry_after(429, 0, 20)),
        )
        .await;
    }
}

/// 429/3200 (RU budget) from every region.
mod throttle_ru_budget {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::everywhere(Reaction::respond_retry_after(429, 3200, 20)),
        )
        .await;
    }
}

/// 429/3092 from every region.
mod throttle_regional {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::everywhere(Reaction::respond(429, 3092)),
        )
        .await;
    }
}

/// Range 0 split after the driver learnt the ranges (410/1002 everywhere for it).
mod split {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(Kind::PointRead, Fault::Split).await;
    }

    #[tokio::test]
    async fn query_page() {
        check(Kind::QueryPage, Fault::Split).await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(Kind::CrossPartitionQuery, Fault::Split).await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(Kind::ChangeFeedPage, Fault::Split).await;
    }

    #[tokio::test]
    async fn read_many() {
        check(Kind::ReadMany, Fault::Split).await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(Kind::MetadataRead, Fault::Split).await;
    }
}

/// 410/1007 (a split completing) for the first four requests, everywhere.
mod split_completing {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::first(4, Reaction::respond(410, 1007)),
        )
        .await;
    }
}

/// 503 from the primary region.
mod unavailable_primary {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::in_region(WEST, Reaction::respond(503, 0)),
        )
        .await;
    }
}

/// 503 from every region.
mod unavailable_everywhere {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::everywhere(Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::everywhere(Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::everywhere(Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::everywhere(Reaction::respond(503, 0)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(Kind::ReadMany, Fault::everywhere(Reaction::respond(503, 0))).await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::everywhere(Reaction::respond(503, 0)),
        )
        .await;
    }
}

/// A slow primary (150 ms) while the alternate answers 403/1008.
mod alternate_not_in_account {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            slow_primary_and(Reaction::respond(403, 1008)),
        )
        .await;
    }
}

/// 404/1002 from the primary region (its replica lags the session).
mod lagging_primary {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::in_region(WEST, Reaction::respond(404, 1002)),
        )
        .await;
    }
}

/// 404/1002 from every region but the hub.
mod lagging_everywhere_but_hub {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(
            Kind::PointRead,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn query_page() {
        check(
            Kind::QueryPage,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(
            Kind::ReadMany,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(
            Kind::MetadataRead,
            Fault::in_regions(&[WEST, NORTH], Reaction::respond(404, 1002)),
        )
        .await;
    }
}

/// The primary region never answers.
mod stalled_primary {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(Kind::PointRead, Fault::in_region(WEST, Reaction::Stall)).await;
    }

    #[tokio::test]
    async fn query_page() {
        check(Kind::QueryPage, Fault::in_region(WEST, Reaction::Stall)).await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(
            Kind::CrossPartitionQuery,
            Fault::in_region(WEST, Reaction::Stall),
        )
        .await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(
            Kind::ChangeFeedPage,
            Fault::in_region(WEST, Reaction::Stall),
        )
        .await;
    }

    #[tokio::test]
    async fn read_many() {
        check(Kind::ReadMany, Fault::in_region(WEST, Reaction::Stall)).await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(Kind::MetadataRead, Fault::in_region(WEST, Reaction::Stall)).await;
    }
}

/// Every region refuses connections.
mod all_regions_refuse {
    use super::*;

    #[tokio::test]
    async fn point_read() {
        check(Kind::PointRead, Fault::AllRefuse).await;
    }

    #[tokio::test]
    async fn query_page() {
        check(Kind::QueryPage, Fault::AllRefuse).await;
    }

    #[tokio::test]
    async fn cross_partition_query() {
        check(Kind::CrossPartitionQuery, Fault::AllRefuse).await;
    }

    #[tokio::test]
    async fn change_feed_page() {
        check(Kind::ChangeFeedPage, Fault::AllRefuse).await;
    }

    #[tokio::test]
    async fn read_many() {
        check(Kind::ReadMany, Fault::AllRefuse).await;
    }

    #[tokio::test]
    async fn metadata_read() {
        check(Kind::MetadataRead, Fault::AllRefuse).await;
    }
}
