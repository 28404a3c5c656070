//! What a processor reports while it works: leases acquired, released, lost and split, every
//! lease write (owner and the new etag: a fencing history), handler failures and read failures.

use std::fmt;
use std::sync::Arc;

/// Why a lease was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseWrite {
    /// Created (the first leases, or a split's children).
    Create,
    /// Taken by this instance.
    Acquire,
    /// Kept (timestamp written).
    Renew,
    /// The continuation written after a batch.
    Checkpoint,
    /// Owner cleared on stop.
    Release,
    /// Deleted (a split's parent).
    Delete,
}

/// One thing a processor did or saw. `lease` is the lease token (the partition key range id).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProcessorEvent {
    /// This instance took the lease and starts reading it.
    Acquired {
        /// The lease token.
        lease: String,
    },
    /// This instance gave the lease up on stop (owner cleared).
    Released {
        /// The lease token.
        lease: String,
    },
    /// The lease was taken by another instance or deleted: its range's work stopped.
    Lost {
        /// The lease token.
        lease: String,
        /// What showed it (a 412 on renew or checkpoint, another owner, a 404).
        reason: String,
    },
    /// The lease's range split: it was replaced by its children's leases.
    Split {
        /// The parent's lease token.
        lease: String,
        /// The children's lease tokens.
        children: Vec<String>,
    },
    /// The handler failed on a batch; it is retried after a backoff.
    HandlerFailed {
        /// The lease token.
        lease: String,
        /// Which attempt failed (1 for the first).
        attempt: u32,
        /// The handler's error.
        error: String,
    },
    /// Reading a page or writing a lease failed (it is retried), or a document under the
    /// processor's prefix is no lease (it is left alone).
    Failed {
        /// The lease token (the document id for a malformed lease; empty for the listing).
        lease: String,
        /// What failed.
        error: String,
    },
    /// A lease document was written by this instance.
    LeaseWritten {
        /// The lease token.
        lease: String,
        /// Why.
        write: LeaseWrite,
        /// The owner written.
        owner: Option<String>,
        /// The etag before the write (the If-Match), if any.
        previous_etag: Option<String>,
        /// The etag after it.
        etag: Option<String>,
    },
}

/// Where events go.
#[derive(Clone)]
pub(crate) struct EventSink(Option<Arc<dyn Fn(ProcessorEvent) + Send + Sync>>);

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "EventSink(set)"
        } else {
            "EventSink(none)"
        })
    }
}

impl EventSink {
    pub(crate) fn none() -> Self {
        EventSink(None)
    }

    pub(crate) fn new(f: impl Fn(ProcessorEvent) + Send + Sync + 'static) -> Self {
        EventSink(Some(Arc::new(f)))
    }

    pub(crate) fn emit(&self, event: ProcessorEvent) {
        if let Some(f) = &self.0 {
            f(event);
        }
    }
}
