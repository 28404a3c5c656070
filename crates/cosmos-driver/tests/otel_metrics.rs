//! The `otel` feature: metrics and spans of real operations against the embedded emulator, read
//! back through the OpenTelemetry SDK's in-memory exporters (feature `otel`; the SDK is a dev-dependency).
//!
//! One create and two reads: a plain one, and one whose primary region is held past the hedge
//! threshold so the alternate wins. Each instrument must report what those operations did.

mod common;

use std::time::Duration;

use cosmos_driver::diagnostics::otel::Telemetry;
use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::OperationOptions;
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};

/// Every data point of `name` as (attributes, value): sums for counters, counts for histograms.
fn points(metrics: &[ResourceMetrics], name: &str) -> Vec<(Vec<KeyValue>, f64)> {
    let mut out = Vec::new();
    for rm in metrics {
        for sm in rm.scope_metrics() {
            for m in sm.metrics().filter(|m| m.name() == name) {
                match m.data() {
                    AggregatedMetrics::U64(MetricData::Sum(s)) => out.extend(
                        s.data_points()
                            .map(|p| (p.attributes().cloned().collect(), p.value() as f64)),
                    ),
                    AggregatedMetrics::F64(MetricData::Sum(s)) => out.extend(
                        s.data_points()
                            .map(|p| (p.attributes().cloned().collect(), p.value())),
                    ),
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => out.extend(
                        h.data_points()
                            .map(|p| (p.attributes().cloned().collect(), p.count() as f64)),
                    ),
                    other => panic!("{name}: unexpected data {other:?}"),
                }
            }
        }
    }
    out
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attrs
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn has(attrs: &[KeyValue], key: &str, value: &str) -> bool {
    attr(attrs, key).is_some_and(|v| v.as_str() == value)
}

/// The sum of the points of `name` whose attributes hold every `(key, value)` of `filter`.
fn total(metrics: &[ResourceMetrics], name: &str, filter: &[(&str, &str)]) -> f64 {
    points(metrics, name)
        .iter()
        .filter(|(a, _)| filter.iter().all(|(k, v)| has(a, k, v)))
        .map(|(_, v)| v)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_spans_read_back_through_the_sdk() {
    let metric_exporter = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metric_exporter.clone()).build())
        .build();
    let span_exporter = InMemorySpanExporter::default();
    let tracers = SdkTracerProvider::builder()
        .with_simple_exporter(span_exporter.clone())
        .build();

    let emu = common::start(EmulatorBuilder::new().regions(["East US", "West US"])).await;
    let threshold = HedgeThreshold::new(Duration::from_millis(50)).expect("non-zero");
    let options = common::options(&emu)
        .with_preferred_regions(["East US", "West US"])
        .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
            threshold,
        )))
        .with_telemetry(Telemetry::new(&meters, &tracers));
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;

    let plain = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::default())
        .await
        .expect("plain read");
    assert_eq!(plain.status(), 200);
    let slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(400))
            .in_regions(["East US"])
            .for_ops([OpKind::Read]),
    );
    let hedged = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::default())
        .await
        .expect("hedged read");
    drop(slow);
    let hedge = hedged.diagnostics().hedge().expect("a race");
    assert!(hedge.was_hedge(), "the alternate won: {hedge:?}");

    meters.force_flush().expect("flush metrics");
    let metrics = metric_exporter
        .get_finished_metrics()
        .expect("finished metrics");
    let reads = [("db.operation.name", "read_item")];

    // Two reads, each one operation the caller saw, both in the duration histogram.
    assert_eq!(total(&metrics, "cosmos.client.operations", &reads), 2.0);
    assert_eq!(total(&metrics, "db.client.operation.duration", &reads), 2.0);
    assert_eq!(
        total(
            &metrics,
            "db.client.operation.duration",
            &[
                ("db.operation.name", "read_item"),
                ("cosmos.hedge.terminal_state", "alternate_won"),
                ("cosmos.region", "West US"),
                ("db.response.status_code", "200"),
                ("db.system.name", "azure.cosmosdb"),
                ("db.namespace", "db"),
                ("db.collection.name", "c"),
            ]
        ),
        1.0
    );
    // Requests: the plain read's one, and both legs of the race.
    assert_eq!(total(&metrics, "cosmos.client.requests", &reads), 3.0);
    assert_eq!(
        total(
            &metrics,
            "cosmos.client.requests",
            &[
                ("db.operation.name", "read_item"),
                ("cosmos.attempt.reason", "hedge"),
                ("cosmos.region", "West US"),
                ("cosmos.attempt.outcome", "200")
            ]
        ),
        1.0
    );
    assert_eq!(
        total(
            &metrics,
            "cosmos.client.requests",
            &[
                ("cosmos.region", "East US"),
                ("cosmos.attempt.outcome", "cancelled")
            ]
        ),
        1.0
    );
    // Request units: the caller saw the two answers; the total counts every request answered.
    let visible = total(
        &metrics,
        "cosmos.client.request_charge",
        &[
            ("db.operation.name", "read_item"),
            ("cosmos.charge.scope", "caller_visible"),
        ],
    );
    let all = total(
        &metrics,
        "cosmos.client.request_charge",
        &[
            ("db.operation.name", "read_item"),
            ("cosmos.charge.scope", "total"),
        ],
    );
    let expected = plain.request_charge() + hedged.request_charge();
    assert!(expected > 0.0);
    assert!((visible - expected).abs() < 1e-9, "{visible} vs {expected}");
    assert!(all >= visible, "{all} < {visible}");
    // Hedge events of the race, by primary region and terminal state.
    for (event, want) in [
        ("started", 1.0),
        ("won", 1.0),
        ("cancelled", 1.0),
        ("budget_denied", 0.0),
    ] {
        let got = total(
            &metrics,
            "cosmos.client.hedges",
            &[
                ("cosmos.hedge.event", event),
                ("cosmos.region", "East US"),
                ("cosmos.hedge.terminal_state", "alternate_won"),
            ],
        );
        assert_eq!(got, want, "hedge event {event}");
    }

    // Spans: one per operation with the Cosmos DB semantic-convention attributes.
    let spans = span_exporter.get_finished_spans().expect("finished spans");
    let read_spans: Vec<_> = spans.iter().filter(|s| s.name == "read_item c").collect();
    assert_eq!(
        read_spans.len(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let race = read_spans
        .iter()
        .find(|s| {
            has(
                &s.attributes,
                "cosmos.hedge.terminal_state",
                "alternate_won",
            )
        })
        .expect("the hedged read's span");
    assert_eq!(race.span_kind, opentelemetry::trace::SpanKind::Client);
    assert!(has(&race.attributes, "db.system.name", "azure.cosmosdb"));
    assert!(has(&race.attributes, "db.operation.name", "read_item"));
    assert!(has(&race.attributes, "db.response.status_code", "200"));
    assert!(has(
        &race.attributes,
        "azure.cosmosdb.connection.mode",
        "gateway"
    ));
    let charge = attr(&race.attributes, "azure.cosmosdb.operation.request_charge");
    assert_eq!(charge, Some(&Value::F64(hedged.request_charge())));
    let regions = attr(
        &race.attributes,
        "azure.cosmosdb.operation.contacted_regions",
    );
    assert_eq!(
        regions.map(|v| v.to_string()),
        Some("[\"East US\",\"West US\"]".to_owned()),
        "{regions:?}"
    );
    assert!(race.end_time > race.start_time);
    assert!(spans.iter().any(|s| s.name == "create_item c"));
}
