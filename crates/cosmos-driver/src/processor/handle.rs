//! The processor's handle: built from the monitored container, the lease container, the
//! processor's name and this instance's name; started with a typed handler; stopped with
//! `stop().await`. Dropping the handle without `stop` ends every task at once (the leases then
//! expire).

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};

use futures::FutureExt;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::coordinator::coordinate;
use super::events::{EventSink, ProcessorEvent};
use super::lease::check_name;
use super::options::ProcessorOptions;
use super::shared::{Control, Handler, ProcessorContext, Shared};
use super::store::LeaseStore;
use crate::change_feed::FeedRange;
use crate::client::ContainerClient;
use crate::error::CosmosError;
use crate::operations::partition_key_ranges;
use crate::options::OperationOptions;

/// A change feed processor instance at work. See the [module](super) docs.
pub struct ChangeFeedProcessor {
    control: Arc<dyn Control>,
    coordinator: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ChangeFeedProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeedProcessor")
            .field("owned", &self.control.owned())
            .finish_non_exhaustive()
    }
}

/// Builds a [`ChangeFeedProcessor`].
#[derive(Debug)]
pub struct ChangeFeedProcessorBuilder {
    monitored: ContainerClient,
    leases: ContainerClient,
    name: String,
    instance: String,
    options: ProcessorOptions,
    events: EventSink,
}

impl ChangeFeedProcessor {
    /// A processor named `name` (every instance of one processor shares it; it prefixes the
    /// lease ids) reading `monitored`, keeping its leases in `leases` (a container partitioned
    /// on `/id`), as instance `instance` (unique per running process).
    pub fn builder(
        monitored: ContainerClient,
        leases: ContainerClient,
        name: &str,
        instance: &str,
    ) -> ChangeFeedProcessorBuilder {
        ChangeFeedProcessorBuilder {
            monitored,
            leases,
            name: name.to_owned(),
            instance: instance.to_owned(),
            options: ProcessorOptions::default(),
            events: EventSink::none(),
        }
    }

    /// The lease tokens this instance works on now, sorted.
    pub fn owned_leases(&self) -> Vec<String> {
        self.control.owned()
    }

    /// Stops: every lease's batch in flight finishes and is checkpointed, then the lease is
    /// released (its owner cleared) so another instance takes it at its next acquire round.
    pub async fn stop(mut self) {
        self.control.signal_stop();
        if let Some(c) = self.coordinator.take() {
            let _ = c.await;
        }
        loop {
            let tasks = self.control.take_tasks();
            if tasks.is_empty() {
                break;
            }
            for t in tasks {
                let _ = t.await;
            }
        }
    }
}

impl Drop for ChangeFeedProcessor {
    fn drop(&mut self) {
        self.control.signal_stop();
        if let Some(c) = self.coordinator.take() {
            c.abort();
        }
        for t in self.control.take_tasks() {
            t.abort();
        }
    }
}

impl ChangeFeedProcessorBuilder {
    /// Sets the options.
    pub fn with_options(mut self, options: ProcessorOptions) -> Self {
        self.options = options;
        self
    }

    /// Calls `f` with each [`ProcessorEvent`] (acquired, released, lost, split, every lease
    /// write, handler and read failures). `f` runs on the processor's tasks: keep it short.
    pub fn on_event(mut self, f: impl Fn(ProcessorEvent) + Send + Sync + 'static) -> Self {
        self.events = EventSink::new(f);
        self
    }

    /// Starts the instance: creates the leases if this is the processor's first start (one
    /// instance does it), then renews, acquires and reads. `handler` is called with each batch
    /// of at most `max_items` changes as `T`; an `Err` retries the same batch after a backoff
    /// (reported as [`ProcessorEvent::HandlerFailed`]).
    pub async fn start<T, F, Fut, E>(self, handler: F) -> Result<ChangeFeedProcessor, CosmosError>
    where
        T: DeserializeOwned + Send + Sync + 'static,
        F: Fn(Vec<T>, ProcessorContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Display,
    {
        check_name("processor name", &self.name)?;
        check_name("instance name", &self.instance)?;
        self.options.validate()?;
        let reference = self.monitored.reference()?.clone();
        let ranges = partition_key_ranges(
            self.monitored.driver().core(),
            &reference,
            true,
            &OperationOptions::default(),
        )
        .await?;
        let ranges: Vec<(String, FeedRange)> = ranges
            .iter()
            .map(|t| FeedRange::new(t.min.clone(), t.max.clone()).map(|r| (t.id.clone(), r)))
            .collect::<Result<_, _>>()?;
        let store = LeaseStore::new(self.leases, &self.name);
        let wait = self
            .options
            .acquire_interval
            .min(std::time::Duration::from_millis(500));
        store
            .initialize(&ranges, self.options.expiration_interval, wait)
            .await?;
        let handler: Handler<T> = Arc::new(move |batch, ctx| {
            handler(batch, ctx)
                .map(|r| r.map_err(|e| e.to_string()))
                .boxed()
        });
        let (stop, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            monitored: self.monitored,
            store,
            instance: self.instance,
            name: self.name,
            options: self.options,
            handler,
            events: self.events,
            held: StdMutex::new(HashMap::new()),
            stop,
        });
        let coordinator = tokio::spawn(coordinate(shared.clone()));
        Ok(ChangeFeedProcessor {
            control: shared,
            coordinator: Some(coordinator),
        })
    }
}
