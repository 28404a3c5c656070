//! The cap on open connections across every listener: over it, a connection is answered 503 and
//! closed, and a warning is logged once per busy spell.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Open connections allowed when nothing else is configured.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// Shared by every listener of one emulator.
#[derive(Debug)]
pub(crate) struct ConnectionCap {
    slots: Arc<Semaphore>,
    max: usize,
    /// Whether the cap was hit since the last time a connection got a slot.
    warned: AtomicBool,
}

impl ConnectionCap {
    /// A cap of `max` open connections (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
            warned: AtomicBool::new(false),
        }
    }

    /// The configured maximum.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// A slot for a new connection, held until the connection ends; None when every slot is taken.
    pub(crate) fn admit(&self) -> Option<OwnedSemaphorePermit> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => {
                self.warned.store(false, Relaxed);
                Some(permit)
            }
            Err(_) => {
                if !self.warned.swap(true, Relaxed) {
                    tracing::warn!(
                        max_connections = self.max,
                        "connection limit reached: new connections are answered 503 and closed until one ends (raise it with --max-connections)"
                    );
                }
                None
            }
        }
    }
}

/// Answers a connection over the cap with a 503 and closes it.
pub(super) async fn refuse(mut stream: TcpStream, max: usize) {
    let body = format!(
        "{{\"code\":\"ServiceUnavailable\",\"message\":\"The emulator has {max} open connections, its limit (--max-connections); close some and retry.\"}}"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_cap_and_again_after_a_slot_frees() {
        let cap = ConnectionCap::new(2);
        let a = cap.admit().expect("first");
        let _b = cap.admit().expect("second");
        assert!(cap.admit().is_none());
        drop(a);
        assert!(cap.admit().is_some());
        assert_eq!(ConnectionCap::new(0).max(), 1);
    }
}
