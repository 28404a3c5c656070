//! Deterministic capture of `tracing` events in unit tests.
//!
//! `tracing` caches each callsite's interest the first time the callsite is reached. While exactly
//! one dispatcher is registered process-wide, that computation consults only the *current thread's*
//! default, so a callsite first reached on a test thread without a subscriber is cached as
//! "never", and a capturing test running at the same time on another thread silently loses that
//! event. Two things make capture deterministic here:
//!
//! - a process-wide anchor dispatcher that is never dropped, so at least two dispatchers are
//!   registered whenever a capture is: interest is then computed over every live dispatcher
//!   (under the registry's lock, which also orders it against a capture's registration), and a
//!   live capture always contributes its interest;
//! - each capture runs its future on its own current-thread runtime (paused time) inside
//!   `tracing::dispatcher::with_default`, so only events of that test reach it.

use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::NoSubscriber;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

/// One captured event.
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    pub name: &'static str,
    pub level: Level,
    pub fields: Vec<(&'static str, String)>,
}

impl Captured {
    /// The value of a field, formatted.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The events one capture saw, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events(Vec<Captured>);

impl Events {
    /// The event names, in order.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|c| c.name).collect()
    }

    /// Every event with this name, in order.
    pub(crate) fn all(&self, name: &str) -> Vec<&Captured> {
        self.0.iter().filter(|c| c.name == name).collect()
    }

    /// The first event with this name; panics naming the events seen when there is none.
    pub(crate) fn get(&self, name: &str) -> &Captured {
        self.0
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} event in {:?}", self.names()))
    }
}

/// Runs the future from `make` on a fresh current-thread runtime with paused time, capturing the
/// events of `target` that it emits. Events emitted while the runtime shuts down (futures dropped
/// at the end) are captured too.
pub(crate) fn capture_paused<F: Future>(
    target: &'static str,
    make: impl FnOnce() -> F,
) -> (F::Output, Events) {
    anchor();
    let sink = Sink {
        target,
        events: Arc::default(),
    };
    let dispatch = Dispatch::new(sink.clone());
    let output = tracing::dispatcher::with_default(&dispatch, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime builds");
        let output = runtime.block_on(make());
        drop(runtime);
        output
    });
    let events = sink.events.lock().expect("no capture panicked").clone();
    (output, Events(events))
}

/// The never-dropped second dispatcher (see the module docs).
fn anchor() {
    static ANCHOR: OnceLock<Dispatch> = OnceLock::new();
    ANCHOR.get_or_init(|| Dispatch::new(NoSubscriber::default()));
}

#[derive(Clone)]
struct Sink {
    target: &'static str,
    events: Arc<Mutex<Vec<Captured>>>,
}

struct Fields<'a>(&'a mut Vec<(&'static str, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_string()));
    }
}

impl Subscriber for Sink {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == self.target
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let m = event.metadata();
        self.events
            .lock()
            .expect("no capture panicked")
            .push(Captured {
                name: m.name(),
                level: *m.level(),
                fields,
            });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: &str = "event_capture_self_test";

    fn emit(n: u32) {
        tracing::debug!(name: "probe", target: "event_capture_self_test", n);
    }

    /// The failure this module exists to prevent: the callsite is first reached on a thread with
    /// no subscriber while this capture is live, and its later use on the capturing thread must
    /// still be seen.
    #[test]
    fn an_event_first_reached_on_another_thread_is_still_captured() {
        let ((), events) = capture_paused(TARGET, || async {
            std::thread::spawn(|| emit(1)).join().expect("emitter ran");
            emit(2);
        });
        assert_eq!(events.names(), ["probe"]);
        assert_eq!(events.get("probe").field("n"), Some("2"));
    }

    #[test]
    fn other_targets_are_not_captured() {
        let ((), events) = capture_paused(TARGET, || async {
            tracing::debug!(target: "elsewhere", "not this one");
            emit(3);
        });
        assert_eq!(events.names(), ["probe"]);
    }

    #[test]
    fn time_is_paused() {
        let (elapsed, _) = capture_paused(TARGET, || async {
            let start = tokio::time::Instant::now();
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            start.elapsed()
        });
        assert_eq!(elapsed, std::time::Duration::from_secs(3600));
    }
}
