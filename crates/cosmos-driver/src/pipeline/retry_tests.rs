//! The retry table, row by row.

use super::*;
use crate::protocol::CosmosStatus;

const MS: fn(u64) -> Duration = Duration::from_millis;

fn facts(op: OperationType, multi_write: bool, local_only: bool) -> OperationFacts {
    OperationFacts {
        operation_type: op,
        resource_type: ResourceType::Document,
        multi_write,
        local_only,
        range_pinned: false,
    }
}
fn range_page() -> OperationFacts {
    OperationFacts {
        operation_type: OperationType::Query,
        range_pinned: true,
        ..read()
    }
}
fn read() -> OperationFacts {
    facts(OperationType::Read, false, false)
}
fn pinned_read() -> OperationFacts {
    facts(OperationType::Read, false, true)
}
fn create() -> OperationFacts {
    facts(OperationType::Create, false, false)
}
fn replace() -> OperationFacts {
    facts(OperationType::Replace, false, false)
}
fn mw(op: OperationType) -> OperationFacts {
    facts(op, true, false)
}

const NEXT: RoutingView = RoutingView {
    has_next_region: true,
    hub_reachable: true,
};
const LAST: RoutingView = RoutingView {
    has_next_region: false,
    hub_reachable: true,
};
const NO_HUB: RoutingView = RoutingView {
    has_next_region: false,
    hub_reachable: false,
};

fn resp(status: u16, sub: u32) -> AttemptOutcome {
    AttemptOutcome::Response {
        status: CosmosStatus::new(status, sub),
        retry_after: None,
    }
}
fn throttled(sub: u32, after: Option<u64>) -> AttemptOutcome {
    AttemptOutcome::Response {
        status: CosmosStatus::new(429, sub),
        retry_after: after.map(MS),
    }
}

fn counters(f: impl FnOnce(&mut RetryCounters)) -> RetryCounters {
    let mut c = RetryCounters::default();
    f(&mut c);
    c
}

use AbortReason::*;
use RetryAction::*;
use SessionRetryTarget::*;

struct Row {
    name: &'static str,
    facts: OperationFacts,
    routing: RoutingView,
    outcome: AttemptOutcome,
    before: RetryCounters,
    latched: bool,
    action: RetryAction,
}

fn row(
    name: &'static str,
    facts: OperationFacts,
    routing: RoutingView,
    outcome: AttemptOutcome,
    action: RetryAction,
) -> Row {
    Row {
        name,
        facts,
        routing,
        outcome,
        before: RetryCounters::default(),
        latched: false,
        action,
    }
}

#[test]
fn retry_table() {
    let rows = vec![
        row("200 completes", read(), NEXT, resp(200, 0), Complete),
        row("201 completes", create(), NEXT, resp(201, 0), Complete),
        row("304 completes", read(), NEXT, resp(304, 0), Complete),
        row(
            "404/0 aborts",
            read(),
            NEXT,
            resp(404, 0),
            Abort(NotRetryable),
        ),
        row(
            "409 aborts",
            create(),
            NEXT,
            resp(409, 0),
            Abort(NotRetryable),
        ),
        row(
            "412 aborts",
            replace(),
            NEXT,
            resp(412, 0),
            Abort(NotRetryable),
        ),
        row(
            "400 aborts",
            read(),
            NEXT,
            resp(400, 0),
            Abort(NotRetryable),
        ),
        row(
            "401 aborts",
            read(),
            NEXT,
            resp(401, 0),
            Abort(NotRetryable),
        ),
        row(
            "403/0 aborts",
            read(),
            NEXT,
            resp(403, 0),
            Abort(NotRetryable),
        ),
        row(
            "413 aborts",
            create(),
            NEXT,
            resp(413, 0),
            Abort(NotRetryable),
        ),
        // 429
        row(
            "429 waits retry-after",
            read(),
            NEXT,
            throttled(0, Some(100)),
            RetryLocal { delay: MS(100) },
        ),
        row(
            "429 without retry-after backs off",
            read(),
            NEXT,
            throttled(0, None),
            RetryLocal { delay: MS(50) },
        ),
        row(
            "429 on a create retries in place",
            create(),
            NEXT,
            throttled(3200, Some(10)),
            RetryLocal { delay: MS(10) },
        ),
        row(
            "429/3092 read fails over",
            read(),
            NEXT,
            throttled(3092, Some(10)),
            Failover,
        ),
        row(
            "429/3092 pinned read waits in place",
            pinned_read(),
            NEXT,
            throttled(3092, Some(10)),
            RetryLocal { delay: MS(10) },
        ),
        row(
            "429/3092 read in the last region waits",
            read(),
            LAST,
            throttled(3092, Some(10)),
            RetryLocal { delay: MS(10) },
        ),
        Row {
            before: counters(|c| c.throttle_retries = 9),
            ..row(
                "429 budget exhausted",
                read(),
                NEXT,
                throttled(0, Some(1)),
                Abort(RetriesExhausted),
            )
        },
        Row {
            before: counters(|c| c.throttle_wait = Duration::from_secs(29)),
            ..row(
                "429 total wait bounded",
                read(),
                NEXT,
                throttled(0, Some(2000)),
                Abort(RetriesExhausted),
            )
        },
        // 408/500/503/410 and connections
        row("503 read fails over", read(), NEXT, resp(503, 0), Failover),
        row("408 read fails over", read(), NEXT, resp(408, 0), Failover),
        row("500 read fails over", read(), NEXT, resp(500, 0), Failover),
        row(
            "410 read fails over",
            read(),
            NEXT,
            resp(410, 1001),
            Failover,
        ),
        row(
            "503 read in the last region retries in place",
            read(),
            LAST,
            resp(503, 0),
            RetryLocal { delay: MS(20) },
        ),
        Row {
            before: counters(|c| c.local_retries = 1),
            ..row(
                "second local retry waits longer",
                read(),
                LAST,
                resp(503, 0),
                RetryLocal { delay: MS(40) },
            )
        },
        Row {
            before: counters(|c| c.local_retries = 2),
            ..row(
                "local retries bounded",
                read(),
                LAST,
                resp(503, 0),
                Abort(RetriesExhausted),
            )
        },
        row(
            "503 pinned read never leaves its region",
            pinned_read(),
            NEXT,
            resp(503, 0),
            RetryLocal { delay: MS(20) },
        ),
        Row {
            before: counters(|c| c.failovers = 8),
            ..row(
                "failover budget exhausted",
                read(),
                NEXT,
                resp(503, 0),
                RetryLocal { delay: MS(20) },
            )
        },
        row(
            "503 create retries in place (a repeat answers 409, never writes twice)",
            create(),
            NEXT,
            resp(503, 0),
            RetryLocal { delay: MS(20) },
        ),
        row(
            "503 multi-write create fails over",
            mw(OperationType::Create),
            NEXT,
            resp(503, 0),
            Failover,
        ),
        row(
            "503 upsert is unsafe to retry",
            facts(OperationType::Upsert, false, false),
            NEXT,
            resp(503, 0),
            Abort(UnsafeToRetry),
        ),
        row(
            "503 replace retries in the write region",
            replace(),
            NEXT,
            resp(503, 0),
            RetryLocal { delay: MS(20) },
        ),
        row(
            "503 multi-write replace fails over",
            mw(OperationType::Replace),
            NEXT,
            resp(503, 0),
            Failover,
        ),
        row(
            "503 delete retries in place",
            facts(OperationType::Delete, false, false),
            NEXT,
            resp(503, 0),
            RetryLocal { delay: MS(20) },
        ),
        row(
            "refused connection: create retries (nothing was sent)",
            create(),
            NEXT,
            AttemptOutcome::ConnectFailed,
            RetryLocal { delay: MS(20) },
        ),
        row(
            "refused connection: multi-write create fails over",
            mw(OperationType::Create),
            NEXT,
            AttemptOutcome::ConnectFailed,
            Failover,
        ),
        row(
            "refused connection: read fails over",
            read(),
            NEXT,
            AttemptOutcome::ConnectFailed,
            Failover,
        ),
        row(
            "lost connection: create may have landed, its repeat cannot land twice",
            create(),
            NEXT,
            AttemptOutcome::ConnectionLost,
            RetryLocal { delay: MS(20) },
        ),
        row(
            "lost connection: read fails over",
            read(),
            NEXT,
            AttemptOutcome::ConnectionLost,
            Failover,
        ),
        row(
            "timeout: read fails over",
            read(),
            NEXT,
            AttemptOutcome::TimedOut,
            Failover,
        ),
        row(
            "timeout: create may have landed, its repeat cannot land twice",
            create(),
            NEXT,
            AttemptOutcome::TimedOut,
            RetryLocal { delay: MS(20) },
        ),
        row(
            "timeout: replace retries",
            replace(),
            NEXT,
            AttemptOutcome::TimedOut,
            RetryLocal { delay: MS(20) },
        ),
        // 404/1002
        row(
            "first 1002 retries in place",
            read(),
            NEXT,
            resp(404, 1002),
            SessionRetry { target: SameRegion },
        ),
        row(
            "first 1002 retries in place when pinned",
            pinned_read(),
            NO_HUB,
            resp(404, 1002),
            SessionRetry { target: SameRegion },
        ),
        Row {
            before: counters(|c| c.session_retries = 1),
            ..row(
                "second 1002 goes to the hub",
                read(),
                NEXT,
                resp(404, 1002),
                SessionRetry { target: HubRegion },
            )
        },
        Row {
            before: counters(|c| c.session_retries = 1),
            ..row(
                "second 1002 without a reachable hub stops",
                pinned_read(),
                NO_HUB,
                resp(404, 1002),
                Abort(RetriesExhausted),
            )
        },
        Row {
            before: counters(|c| {
                c.session_retries = 2;
                c.hub_escalations = 1
            }),
            ..row(
                "1002 from the hub stops",
                read(),
                NEXT,
                resp(404, 1002),
                Abort(RetriesExhausted),
            )
        },
        Row {
            before: counters(|c| c.session_retries = 1),
            ..row(
                "multi-write 1002 tries the next region",
                mw(OperationType::Read),
                NEXT,
                resp(404, 1002),
                SessionRetry { target: NextRegion },
            )
        },
        Row {
            before: counters(|c| c.session_retries = 1),
            ..row(
                "multi-write 1002 in the last region stops",
                mw(OperationType::Read),
                LAST,
                resp(404, 1002),
                Abort(RetriesExhausted),
            )
        },
        // 403
        row(
            "first 403/3 of a write refreshes and reroutes at once",
            create(),
            NEXT,
            resp(403, 3),
            RefreshAndReroute {
                delay: Duration::ZERO,
            },
        ),
        Row {
            before: counters(|c| c.write_forbidden_retries = 1),
            ..row(
                "later 403/3 of a write waits a second before the refresh",
                create(),
                NEXT,
                resp(403, 3),
                RefreshAndReroute {
                    delay: Duration::from_secs(1),
                },
            )
        },
        Row {
            before: counters(|c| {
                c.attempts = 60;
                c.write_forbidden_retries = 60
            }),
            ..row(
                "403/3 retries do not count against the attempt ceiling",
                create(),
                NEXT,
                resp(403, 3),
                RefreshAndReroute {
                    delay: Duration::from_secs(1),
                },
            )
        },
        Row {
            before: counters(|c| c.write_forbidden_retries = 120),
            ..row(
                "403/3 retries bounded",
                create(),
                NEXT,
                resp(403, 3),
                Abort(RetriesExhausted),
            )
        },
        row(
            "403/3 of a multi-write write goes to the next write region",
            mw(OperationType::Create),
            NEXT,
            resp(403, 3),
            Failover,
        ),
        row(
            "403/3 of a multi-write write in the last region waits it out",
            mw(OperationType::Create),
            LAST,
            resp(403, 3),
            RefreshAndReroute {
                delay: Duration::ZERO,
            },
        ),
        row(
            "403/3 of a read refreshes and follows the hub",
            read(),
            NEXT,
            resp(403, 3),
            RefreshAndReroute {
                delay: Duration::ZERO,
            },
        ),
        row(
            "403/3 of a read that cannot reach the hub (an alternate pinned elsewhere) stops",
            pinned_read(),
            NO_HUB,
            resp(403, 3),
            Abort(RetriesExhausted),
        ),
        Row {
            before: counters(|c| c.refreshes = 2),
            ..row(
                "403/3 of a read: refreshes bounded",
                read(),
                NEXT,
                resp(403, 3),
                Abort(RetriesExhausted),
            )
        },
        // 410 sub-statuses
        row(
            "410/1002 (split) retries in place at once",
            read(),
            NEXT,
            resp(410, 1002),
            RetryLocal {
                delay: Duration::ZERO,
            },
        ),
        row(
            "410/1007 (completing split) of a create retries in place: not executed",
            create(),
            NEXT,
            resp(410, 1007),
            RetryLocal {
                delay: Duration::ZERO,
            },
        ),
        Row {
            before: counters(|c| c.partition_moved_retries = 2),
            ..row(
                "410/1008 (migration) retries in place, backing off",
                read(),
                NEXT,
                resp(410, 1008),
                RetryLocal { delay: MS(40) },
            )
        },
        row(
            "410/1002 of a request pinned to the range goes straight to the split handling",
            range_page(),
            NEXT,
            resp(410, 1002),
            Abort(NotRetryable),
        ),
        row(
            "410/1007 of a request pinned to the range: no retry in place either",
            range_page(),
            NEXT,
            resp(410, 1007),
            Abort(NotRetryable),
        ),
        row(
            "410/1008 of a request pinned to the range: no retry in place either",
            range_page(),
            LAST,
            resp(410, 1008),
            Abort(NotRetryable),
        ),
        row(
            "410/1000 of a request pinned to a range still retries in place (the range is there)",
            range_page(),
            NEXT,
            resp(410, 1000),
            RetryLocal {
                delay: Duration::ZERO,
            },
        ),
        row(
            "410/1000 (name cache stale) retries in place",
            replace(),
            LAST,
            resp(410, 1000),
            RetryLocal {
                delay: Duration::ZERO,
            },
        ),
        Row {
            before: counters(|c| c.partition_moved_retries = 5),
            ..row(
                "410 partition moves bounded",
                read(),
                NEXT,
                resp(410, 1002),
                Abort(RetriesExhausted),
            )
        },
        row(
            "410/0 is transient: reads fail over",
            read(),
            NEXT,
            resp(410, 0),
            Failover,
        ),
        // 429/3092 as a 503
        row(
            "429/3092 multi-write write goes to the next region",
            mw(OperationType::Create),
            NEXT,
            throttled(3092, Some(10)),
            Failover,
        ),
        row(
            "429/3092 single-write write waits in place",
            create(),
            NEXT,
            throttled(3092, Some(10)),
            RetryLocal { delay: MS(10) },
        ),
        row(
            "a response too large is never retried",
            read(),
            NEXT,
            AttemptOutcome::TooLarge,
            Abort(NotRetryable),
        ),
        row(
            "403/1008 fails over",
            read(),
            NEXT,
            resp(403, 1008),
            Failover,
        ),
        row(
            "403/1008 pinned stops",
            pinned_read(),
            NEXT,
            resp(403, 1008),
            Abort(RetriesExhausted),
        ),
        // global bound
        Row {
            before: counters(|c| c.attempts = 31),
            ..row(
                "attempt ceiling",
                read(),
                NEXT,
                resp(503, 0),
                Abort(RetriesExhausted),
            )
        },
    ];
    let limits = RetryLimits::default();
    for r in rows {
        let d = decide(
            &r.facts, r.routing, &r.outcome, r.before, r.latched, &limits,
        );
        assert_eq!(d.action, r.action, "row: {}", r.name);
        assert_eq!(
            d.counters.attempts,
            r.before.attempts + 1,
            "row: {}",
            r.name
        );
    }
}

#[path = "retry_effects_tests.rs"]
mod effects;

#[test]
fn a_read_refused_outside_the_hub_by_a_leg_that_cannot_reach_it_changes_nothing() {
    let limits = RetryLimits::default();
    let d = decide(
        &pinned_read(),
        NO_HUB,
        &resp(403, 3),
        RetryCounters::default(),
        true,
        &limits,
    );
    assert_eq!(d.effects, LocationEffects::default(), "no refresh, no mark");
    let d = decide(
        &read(),
        NEXT,
        &resp(403, 3),
        RetryCounters::default(),
        true,
        &limits,
    );
    assert!(
        d.effects.refresh_account,
        "a leg free to follow the hub refreshes"
    );
}
