//! Location effects, the hub latch, throttle waits and pinned legs: what the retry decisions do
//! beyond the table's next action (helpers from the parent `retry_tests`).

use super::*;

#[test]
fn effects_table() {
    let none = LocationEffects::default();
    let mark_read = LocationEffects {
        mark_endpoint_unavailable: Some(AccessScope::Read),
        partition_failure: true,
        ..none
    };
    let partition = LocationEffects {
        partition_failure: true,
        ..none
    };
    let mark_write = LocationEffects {
        mark_endpoint_unavailable: Some(AccessScope::Write),
        partition_failure: true,
        ..none
    };
    let table: Vec<(&str, OperationFacts, AttemptOutcome, LocationEffects)> = vec![
        (
            "success",
            read(),
            resp(200, 0),
            LocationEffects {
                partition_success: true,
                ..none
            },
        ),
        // A status from one partition stays with that partition.
        ("503 read", read(), resp(503, 0), partition),
        ("503 write", create(), resp(503, 0), partition),
        ("410", read(), resp(410, 0), partition),
        ("408", read(), resp(408, 0), partition),
        ("500", read(), resp(500, 0), partition),
        (
            "410/1002",
            read(),
            resp(410, 1002),
            LocationEffects {
                refresh_partition_ranges: true,
                ..none
            },
        ),
        (
            "410/1007",
            create(),
            resp(410, 1007),
            LocationEffects {
                refresh_partition_ranges: true,
                ..none
            },
        ),
        (
            "410/1008",
            read(),
            resp(410, 1008),
            LocationEffects {
                refresh_partition_ranges: true,
                ..none
            },
        ),
        (
            "410/1000",
            read(),
            resp(410, 1000),
            LocationEffects {
                refresh_container: true,
                ..none
            },
        ),
        ("3092", read(), throttled(3092, None), none),
        ("too large", read(), AttemptOutcome::TooLarge, none),
        // Only connection-level failures mark the region.
        ("refused", read(), AttemptOutcome::ConnectFailed, mark_read),
        ("lost", create(), AttemptOutcome::ConnectionLost, mark_write),
        ("timeout", read(), AttemptOutcome::TimedOut, mark_read),
        (
            "403/3",
            create(),
            resp(403, 3),
            LocationEffects {
                refresh_account: true,
                mark_endpoint_unavailable: Some(AccessScope::Write),
                ..none
            },
        ),
        (
            "403/1008",
            read(),
            resp(403, 1008),
            LocationEffects {
                refresh_account: true,
                mark_endpoint_unavailable: Some(AccessScope::Read),
                ..none
            },
        ),
        ("403/0", read(), resp(403, 0), none),
        ("404", read(), resp(404, 0), none),
        ("1002", read(), resp(404, 1002), none),
        ("429", read(), throttled(0, Some(5)), none),
    ];
    for (name, f, outcome, want) in table {
        assert_eq!(location_effects(&f, &outcome), want, "{name}");
        let d = decide(
            &f,
            NEXT,
            &outcome,
            RetryCounters::default(),
            false,
            &RetryLimits::default(),
        );
        assert_eq!(d.effects, want, "decide carries the same effects: {name}");
    }
}

#[test]
fn hub_latch_turns_on_once_for_data_plane_single_write() {
    let limits = RetryLimits::default();
    let second = counters(|c| c.session_retries = 1);
    let d = decide(&read(), NEXT, &resp(404, 1002), second, false, &limits);
    assert!(d.latch_hub_region);
    assert_eq!(d.counters.hub_escalations, 1);
    let d = decide(&read(), NEXT, &resp(404, 1002), second, true, &limits);
    assert!(!d.latch_hub_region, "already latched");
    let metadata = OperationFacts {
        resource_type: ResourceType::Container,
        ..read()
    };
    let d = decide(&metadata, NEXT, &resp(404, 1002), second, false, &limits);
    assert!(!d.latch_hub_region, "metadata operations never latch");
    let d = decide(
        &read(),
        NEXT,
        &resp(404, 1002),
        RetryCounters::default(),
        false,
        &limits,
    );
    assert!(
        !d.latch_hub_region,
        "the first 1002 retries in place without the header"
    );
}

#[test]
fn throttle_waits_accumulate() {
    let limits = RetryLimits::default();
    let mut c = RetryCounters::default();
    let mut waited = Duration::ZERO;
    loop {
        let d = decide(&read(), NEXT, &throttled(0, Some(4000)), c, false, &limits);
        match d.action {
            RetryLocal { delay } => waited += delay,
            Abort(RetriesExhausted) => break,
            other => panic!("unexpected {other:?}"),
        }
        c = d.counters;
    }
    assert_eq!(
        waited,
        Duration::from_secs(28),
        "seven 4 s waits fit in 30 s, the eighth does not"
    );
}

#[test]
fn pinned_legs_never_fail_over_under_any_trigger() {
    let limits = RetryLimits::default();
    let outcomes = [
        resp(503, 0),
        resp(500, 0),
        resp(408, 0),
        resp(410, 0),
        throttled(3092, Some(1)),
        throttled(0, Some(1)),
        resp(404, 1002),
        resp(403, 3),
        resp(403, 1008),
        AttemptOutcome::ConnectFailed,
        AttemptOutcome::ConnectionLost,
        AttemptOutcome::TimedOut,
    ];
    for outcome in outcomes {
        let mut c = RetryCounters::default();
        for _ in 0..40 {
            let d = decide(&pinned_read(), NO_HUB, &outcome, c, false, &limits);
            assert!(
                !matches!(
                    d.action,
                    Failover
                        | SessionRetry { target: NextRegion }
                        | SessionRetry { target: HubRegion }
                ),
                "{outcome:?} -> {:?}",
                d.action
            );
            if !d.action.retries() {
                break;
            }
            assert!(d.action.retries() || matches!(d.action, Complete | Abort(_)));
            c = d.counters;
        }
        assert!(c.attempts < limits.max_attempts, "{outcome:?} terminates");
    }
}
