//! OpenTelemetry metrics and spans of every operation (feature `otel`).
//!
//! Everything is read from the operation's [`DiagnosticsContext`] once it has ended, so the
//! request path is untouched: one call per operation records
//!
//! | instrument | kind, unit | one point per | attributes besides the operation's |
//! |---|---|---|---|
//! | `db.client.operation.duration` | histogram, s | operation | status, region, hedge state |
//! | `cosmos.client.operations` | counter | operation (the caller-visible request) | same |
//! | `cosmos.client.requests` | counter | attempt (every request, both legs) | region, reason, outcome |
//! | `cosmos.client.request_charge` | counter, RU | operation | `cosmos.charge.scope`: `caller_visible` or `total` |
//! | `cosmos.client.hedges` | counter | hedge event | `cosmos.hedge.event`: `started`, `won`, `cancelled`, `budget_denied`; primary region; hedge state |
//!
//! The operation's attributes are `db.system.name` (`azure.cosmosdb`), `db.operation.name`
//! (`read_item`, `query_items`, ...), `db.namespace` and `db.collection.name`. One span per
//! operation (kind client, named `{db.operation.name} {db.collection.name}`) carries the Cosmos DB
//! semantic-convention attributes: those, `azure.cosmosdb.connection.mode`,
//! `azure.cosmosdb.operation.request_charge`, `db.response.status_code`,
//! `azure.cosmosdb.response.sub_status_code` and `azure.cosmosdb.operation.contacted_regions`.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider};
use opentelemetry::trace::{Span, SpanKind, Status, Tracer, TracerProvider};
use opentelemetry::{InstrumentationScope, KeyValue, Value};

use super::DiagnosticsContext;
use super::HedgeTerminalState;
use crate::protocol::{CosmosStatus, OperationType, ResourceType};

/// The instrumentation scope name of the driver's metrics and spans.
pub const SCOPE: &str = "cosmos-driver";

/// The semantic-convention name of an operation (`read_item`, `query_items`, `read_container`).
pub const fn operation_name(operation: OperationType, resource: ResourceType) -> &'static str {
    use OperationType as O;
    use ResourceType as R;
    match (resource, operation) {
        (R::Document, O::Read) => "read_item",
        (R::Document, O::Create) => "create_item",
        (R::Document, O::Upsert) => "upsert_item",
        (R::Document, O::Replace) => "replace_item",
        (R::Document, O::Delete) => "delete_item",
        (R::Document, O::Patch) => "patch_item",
        (R::Document, O::Query) => "query_items",
        (R::Document, O::ReadFeed) => "read_all_items",
        (R::Container, O::Read) => "read_container",
        (R::Container, O::Create) => "create_container",
        (R::Container, O::Replace) => "replace_container",
        (R::Container, O::Delete) => "delete_container",
        (R::Container, O::ReadFeed | O::Query) => "read_all_containers",
        (R::Database, O::Read) => "read_database",
        (R::Database, O::Create) => "create_database",
        (R::Database, O::Delete) => "delete_database",
        (R::Database, O::ReadFeed | O::Query) => "read_all_databases",
        (R::PartitionKeyRange, _) => "read_partition_key_ranges",
        (R::DatabaseAccount, _) => "read_account",
        (R::Offer, O::Replace) => "replace_throughput",
        (R::Offer, _) => "read_throughput",
        _ => "other",
    }
}

/// What the telemetry is told about one finished operation.
#[derive(Clone, Copy, Debug)]
pub struct OperationSummary<'a> {
    /// `db.operation.name`.
    pub name: &'static str,
    /// The database id, when the operation has one.
    pub database: Option<&'a str>,
    /// The container id, when the operation has one.
    pub container: Option<&'a str>,
    /// The status the caller got (`None`: no response at all).
    pub status: Option<CosmosStatus>,
    /// Whether the caller got an error.
    pub failed: bool,
    /// When the operation started, by the wall clock.
    pub started: SystemTime,
    /// What happened.
    pub diagnostics: &'a DiagnosticsContext,
}

/// The hedge events of one operation, read from its diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HedgeEvents {
    /// The alternate attempt was sent.
    pub started: bool,
    /// The alternate's answer was returned.
    pub won: bool,
    /// Attempts of the race dropped while in flight (the loser, or both at the deadline).
    pub cancelled: u32,
    /// The threshold passed but the hedge budget was spent: no alternate was sent.
    pub budget_denied: bool,
}

/// The hedge events of an operation (all empty when it entered no race).
pub fn hedge_events(d: &DiagnosticsContext) -> HedgeEvents {
    let Some(hedge) = d.hedge() else {
        return HedgeEvents::default();
    };
    HedgeEvents {
        started: hedge.alternate_region().is_some(),
        won: hedge.was_hedge(),
        cancelled: d
            .requests()
            .iter()
            .filter(|r| r.failure() == Some("cancelled"))
            .count() as u32,
        budget_denied: hedge.budget_denied(),
    }
}

/// The driver's instruments and tracer.
pub struct Telemetry {
    duration: Histogram<f64>,
    operations: Counter<u64>,
    requests: Counter<u64>,
    request_charge: Counter<f64>,
    hedges: Counter<u64>,
    tracer: BoxedTracer,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

impl Telemetry {
    /// Instruments from the global meter and tracer providers (what a driver uses by default).
    pub fn global() -> Self {
        Self::with(
            global::meter_with_scope(scope()),
            global::tracer_with_scope(scope()),
        )
    }

    /// Instruments from these providers.
    pub fn new<M, P, T, S>(meters: &M, tracers: &P) -> Self
    where
        M: MeterProvider,
        P: TracerProvider<Tracer = T>,
        T: Tracer<Span = S> + Send + Sync + 'static,
        S: Span + Send + Sync + 'static,
    {
        let tracer = BoxedTracer::new(Box::new(tracers.tracer_with_scope(scope())));
        Self::with(meters.meter_with_scope(scope()), tracer)
    }

    fn with(meter: Meter, tracer: BoxedTracer) -> Self {
        Self {
            duration: meter
                .f64_histogram("db.client.operation.duration")
                .with_unit("s")
                .with_description("Duration of operations, retries and hedges included")
                .build(),
            operations: meter
                .u64_counter("cosmos.client.operations")
                .with_unit("{operation}")
                .with_description("Operations: the requests whose answer the caller saw")
                .build(),
            requests: meter
                .u64_counter("cosmos.client.requests")
                .with_unit("{request}")
                .with_description("Every request sent: retries and both legs of hedge races")
                .build(),
            request_charge: meter
                .f64_counter("cosmos.client.request_charge")
                .with_unit("{request_unit}")
                .with_description("Request units: caller-visible and total")
                .build(),
            hedges: meter
                .u64_counter("cosmos.client.hedges")
                .with_unit("{hedge}")
                .with_description("Hedge events: started, won, cancelled, budget_denied")
                .build(),
            tracer,
        }
    }

    /// Records one finished operation: its metrics and its span.
    pub fn record(&self, op: &OperationSummary<'_>) {
        let d = op.diagnostics;
        let mut base = vec![
            KeyValue::new("db.system.name", "azure.cosmosdb"),
            KeyValue::new("db.operation.name", op.name),
        ];
        if let Some(db) = op.database {
            base.push(KeyValue::new("db.namespace", db.to_owned()));
        }
        if let Some(c) = op.container {
            base.push(KeyValue::new("db.collection.name", c.to_owned()));
        }
        let terminal = d.hedge().map(|h| h.terminal_state());
        let answered_in = d
            .requests()
            .iter()
            .rev()
            .find(|r| r.status().is_some())
            .and_then(|r| r.region());

        let mut per_op = base.clone();
        if let Some(s) = op.status {
            per_op.push(KeyValue::new(
                "db.response.status_code",
                s.status.to_string(),
            ));
        }
        if op.failed {
            per_op.push(KeyValue::new("error.type", error_type(op.status)));
        }
        if let Some(region) = answered_in {
            per_op.push(KeyValue::new("cosmos.region", region.as_str().to_owned()));
        }
        if let Some(t) = terminal {
            per_op.push(KeyValue::new("cosmos.hedge.terminal_state", t.as_str()));
        }
        self.duration.record(d.duration().as_secs_f64(), &per_op);
        self.operations.add(1, &per_op);

        for r in d.requests() {
            let mut attrs = base.clone();
            if let Some(region) = r.region() {
                attrs.push(KeyValue::new("cosmos.region", region.as_str().to_owned()));
            }
            attrs.push(KeyValue::new("cosmos.attempt.reason", r.reason().as_str()));
            let outcome: Cow<'static, str> = match (r.status(), r.failure()) {
                (Some(s), _) => s.status.to_string().into(),
                (None, Some(f)) => f.into(),
                (None, None) => "no_response".into(),
            };
            attrs.push(KeyValue::new("cosmos.attempt.outcome", outcome));
            self.requests.add(1, &attrs);
        }

        for (scope, charge) in [
            ("caller_visible", d.request_charge()),
            ("total", d.total_request_charge()),
        ] {
            let mut attrs = base.clone();
            attrs.push(KeyValue::new("cosmos.charge.scope", scope));
            self.request_charge.add(charge, &attrs);
        }

        if let Some(hedge) = d.hedge() {
            let events = hedge_events(d);
            let mut attrs = base.clone();
            attrs.push(KeyValue::new(
                "cosmos.region",
                hedge.primary_region().as_str().to_owned(),
            ));
            attrs.push(KeyValue::new(
                "cosmos.hedge.terminal_state",
                hedge.terminal_state().as_str(),
            ));
            let counts = [
                ("started", u64::from(events.started)),
                ("won", u64::from(events.won)),
                ("cancelled", u64::from(events.cancelled)),
                ("budget_denied", u64::from(events.budget_denied)),
            ];
            for (event, n) in counts {
                if n > 0 {
                    let mut a = attrs.clone();
                    a.push(KeyValue::new("cosmos.hedge.event", event));
                    self.hedges.add(n, &a);
                }
            }
        }

        self.span(op, base, terminal);
    }

    fn span(
        &self,
        op: &OperationSummary<'_>,
        mut attrs: Vec<KeyValue>,
        terminal: Option<HedgeTerminalState>,
    ) {
        let d = op.diagnostics;
        let name = match op.container {
            Some(c) => format!("{} {c}", op.name),
            None => op.name.to_owned(),
        };
        attrs.push(KeyValue::new("azure.cosmosdb.connection.mode", "gateway"));
        attrs.push(KeyValue::new(
            "azure.cosmosdb.operation.request_charge",
            d.request_charge(),
        ));
        if let Some(s) = op.status {
            attrs.push(KeyValue::new(
                "db.response.status_code",
                s.status.to_string(),
            ));
            if s.sub_status != 0 {
                attrs.push(KeyValue::new(
                    "azure.cosmosdb.response.sub_status_code",
                    i64::from(s.sub_status),
                ));
            }
        }
        let mut contacted: Vec<opentelemetry::StringValue> = Vec::new();
        for region in d.regions_contacted().flatten() {
            let name = region.as_str();
            if !contacted.iter().any(|c| c.as_str() == name) {
                contacted.push(name.to_owned().into());
            }
        }
        attrs.push(KeyValue::new(
            "azure.cosmosdb.operation.contacted_regions",
            Value::Array(contacted.into()),
        ));
        if let Some(t) = terminal {
            attrs.push(KeyValue::new("cosmos.hedge.terminal_state", t.as_str()));
        }
        if op.failed {
            attrs.push(KeyValue::new("error.type", error_type(op.status)));
        }
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_start_time(op.started)
            .with_attributes(attrs)
            .start(&self.tracer);
        if op.failed {
            span.set_status(Status::error(error_type(op.status)));
        }
        span.end_with_timestamp(op.started + d.duration());
    }
}

/// `error.type` of a failed operation: its status code, or `no_response`.
fn error_type(status: Option<CosmosStatus>) -> String {
    match status {
        Some(s) => s.status.to_string(),
        None => "no_response".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_table() {
        use OperationType as O;
        use ResourceType as R;
        let cases = [
            (O::Read, R::Document, "read_item"),
            (O::Query, R::Document, "query_items"),
            (O::ReadFeed, R::Document, "read_all_items"),
            (O::Patch, R::Document, "patch_item"),
            (O::Upsert, R::Document, "upsert_item"),
            (O::Read, R::Container, "read_container"),
            (O::ReadFeed, R::Database, "read_all_databases"),
            (O::Read, R::PartitionKeyRange, "read_partition_key_ranges"),
            (O::Read, R::DatabaseAccount, "read_account"),
            (O::Patch, R::Database, "other"),
        ];
        for (op, rt, want) in cases {
            assert_eq!(operation_name(op, rt), want, "{op:?} {rt:?}");
        }
    }

    #[test]
    fn no_race_no_hedge_events() {
        assert_eq!(
            hedge_events(&DiagnosticsContext::default()),
            HedgeEvents::default()
        );
    }
}
