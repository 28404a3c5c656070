//! The driver's session tokens: one merged token per container, covering its partition key ranges.
//!
//! Every response's `x-ms-session-token` is merged in (highest LSN per range wins, so tokens never
//! move backwards, whatever order responses arrive in). Session-consistent requests send the
//! container's token, which names every range the driver has seen; the service uses the entry of
//! the range that serves the request. The rendered header is kept, so sending it is a reference
//! count increment.
//!
//! A container's token is bounded: at most [`MAX_SESSION_TOKEN_BYTES`] (64 KiB). A merge that
//! would take it past that keeps only the ranges the container has, when its partition key ranges
//! are known; when it would still be too long (or they are not known) the response's token is not
//! kept and the capture fails with the size, so that the operation ends with an error saying so.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use http::HeaderValue;

use crate::protocol::{SessionToken, MAX_SESSION_TOKEN_BYTES};
use crate::routing::TargetRange;
use rustc_hash::FxBuildHasher;

/// A response's session token that was not kept: the container's token would have grown past
/// [`MAX_SESSION_TOKEN_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionTokenOverflow {
    /// The bytes the token would have taken.
    pub bytes: usize,
    /// The partition key ranges it would have named.
    pub ranges: usize,
}

#[derive(Debug, Default)]
struct State {
    token: SessionToken,
    header: Option<HeaderValue>,
    /// The last raw header merged, to skip re-parsing a repeated token.
    last_raw: Option<HeaderValue>,
    /// The resource id of the container the token belongs to (`x-ms-content-path`), once seen.
    rid: Option<HeaderValue>,
}

/// The session state of one container, looked up once per operation.
#[derive(Clone, Debug)]
pub(crate) struct ContainerSession(Arc<Mutex<State>>);

impl ContainerSession {
    /// The header to send, if any token is known.
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        self.0.lock().ok()?.header.clone()
    }

    /// Notes the resource id of the container that answered. A different one than before means the
    /// container was deleted and recreated under the same name: the old token is dropped (its
    /// ranges and LSNs belong to the old container) and true is returned, so that the caller drops
    /// the container's other caches too.
    pub(crate) fn observe_rid(&self, rid: &HeaderValue) -> bool {
        let Ok(mut g) = self.0.lock() else {
            return false;
        };
        match &g.rid {
            Some(known) if known == rid => false,
            None => {
                g.rid = Some(rid.clone());
                false
            }
            Some(_) => {
                *g = State {
                    rid: Some(rid.clone()),
                    ..State::default()
                };
                true
            }
        }
    }

    /// Merges a response's `x-ms-session-token` in. Malformed tokens are ignored (and logged).
    /// A merge that would take the token past [`MAX_SESSION_TOKEN_BYTES`] keeps only the ranges in
    /// `known()` (the container's partition key ranges, when known); still too long, the token is
    /// left as it was and the overflow is returned.
    pub(crate) fn capture(
        &self,
        raw: &HeaderValue,
        known: impl FnOnce() -> Option<Arc<[TargetRange]>>,
    ) -> Result<(), SessionTokenOverflow> {
        let Ok(mut g) = self.0.lock() else {
            return Ok(());
        };
        if g.last_raw.as_ref() == Some(raw) {
            return Ok(());
        }
        if raw.len() > MAX_SESSION_TOKEN_BYTES {
            return Err(SessionTokenOverflow {
                bytes: raw.len(),
                ranges: raw.as_bytes().iter().filter(|b| **b == b',').count() + 1,
            });
        }
        let parsed = match raw.to_str().ok().map(SessionToken::parse) {
            Some(Ok(t)) => t,
            _ => {
                tracing::debug!("ignoring a malformed session token");
                return Ok(());
            }
        };
        if g.token.merge_from(&parsed) || g.header.is_none() {
            let mut text = g.token.to_string();
            if text.len() > MAX_SESSION_TOKEN_BYTES {
                if let Some(ranges) = known() {
                    let ids: HashSet<&str> = ranges.iter().map(|r| r.id.as_str()).collect();
                    g.token.retain_ranges(|id| ids.contains(id));
                    text = g.token.to_string();
                }
            }
            if text.len() > MAX_SESSION_TOKEN_BYTES {
                let overflow = SessionTokenOverflow {
                    bytes: text.len(),
                    ranges: g.token.len(),
                };
                // Back to the token the kept header was rendered from.
                g.token = g
                    .header
                    .as_ref()
                    .and_then(|h| h.to_str().ok())
                    .and_then(|t| SessionToken::parse(t).ok())
                    .unwrap_or_default();
                return Err(overflow);
            }
            g.header = HeaderValue::from_str(&text).ok();
        }
        g.last_raw = Some(raw.clone());
        Ok(())
    }
}

/// Session tokens of every container the driver has talked to.
#[derive(Debug, Default)]
pub struct SessionContainer {
    containers: RwLock<HashMap<Arc<str>, Arc<Mutex<State>>, FxBuildHasher>>,
}

impl SessionContainer {
    /// An empty container.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self, container: &Arc<str>) -> Option<Arc<Mutex<State>>> {
        self.containers.read().ok()?.get(container).cloned()
    }

    fn state_or_insert(&self, container: &Arc<str>) -> Option<Arc<Mutex<State>>> {
        if let Some(s) = self.state(container) {
            return Some(s);
        }
        let mut map = self.containers.write().ok()?;
        Some(map.entry(container.clone()).or_default().clone())
    }

    /// The session state of `container`, created empty when the driver has none yet.
    pub(crate) fn session(&self, container: &Arc<str>) -> Option<ContainerSession> {
        self.state_or_insert(container).map(ContainerSession)
    }

    /// The header to send for `container`, if any token is known.
    pub fn header_for(&self, container: &Arc<str>) -> Option<HeaderValue> {
        let state = self.state(container)?;
        let guard = state.lock().ok()?;
        guard.header.clone()
    }

    /// The merged token of `container`.
    pub fn token_for(&self, container: &Arc<str>) -> Option<SessionToken> {
        let state = self.state(container)?;
        let guard = state.lock().ok()?;
        (!guard.token.is_empty()).then(|| guard.token.clone())
    }

    /// Merges a response's `x-ms-session-token` into `container`'s token. Malformed tokens are
    /// ignored (and logged), and so is a token that would take the container's past
    /// [`MAX_SESSION_TOKEN_BYTES`] (the driver's own requests fail with the size instead).
    pub fn capture(&self, container: &Arc<str>, raw: &HeaderValue) {
        if let Some(session) = self.session(container) {
            if session.capture(raw, || None).is_err() {
                tracing::debug!("ignoring a session token past the size limit");
            }
        }
    }

    /// Forgets `container`'s token (it was deleted).
    pub fn forget(&self, container: &Arc<str>) {
        if let Ok(mut map) = self.containers.write() {
            map.remove(container);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c() -> Arc<str> {
        Arc::from("dbs/db/colls/c")
    }

    #[test]
    fn captures_merge_and_never_regress() {
        let s = SessionContainer::new();
        assert!(s.header_for(&c()).is_none());
        s.capture(&c(), &HeaderValue::from_static("0:-1#10"));
        s.capture(&c(), &HeaderValue::from_static("1:-1#3"));
        assert_eq!(s.header_for(&c()).unwrap(), "0:-1#10,1:-1#3");
        s.capture(&c(), &HeaderValue::from_static("0:-1#7"));
        assert_eq!(
            s.header_for(&c()).unwrap(),
            "0:-1#10,1:-1#3",
            "a late response cannot move a token back"
        );
        s.capture(&c(), &HeaderValue::from_static("0:-1#12"));
        assert_eq!(s.header_for(&c()).unwrap(), "0:-1#12,1:-1#3");
        s.capture(&c(), &HeaderValue::from_static("garbage"));
        assert_eq!(s.token_for(&c()).unwrap().to_string(), "0:-1#12,1:-1#3");
        assert!(s.header_for(&Arc::from("dbs/db/colls/other")).is_none());
        s.forget(&c());
        assert!(s.header_for(&c()).is_none());
    }

    /// A token naming `n` ranges, `first` onwards, each with a long vector entry.
    fn many_ranges(first: usize, n: usize) -> HeaderValue {
        let text: Vec<String> = (first..first + n)
            .map(|r| format!("{r}:1#100#1=100#2=100"))
            .collect();
        HeaderValue::from_str(&text.join(",")).unwrap()
    }

    fn ranges(ids: &[&str]) -> Arc<[TargetRange]> {
        ids.iter()
            .map(|id| TargetRange {
                id: (*id).to_owned(),
                min: String::new(),
                max: "FF".into(),
            })
            .collect()
    }

    #[test]
    fn a_token_stays_within_its_limit() {
        let s = SessionContainer::new();
        let session = s.session(&c()).unwrap();
        session
            .capture(&HeaderValue::from_static("0:1#5"), || None)
            .unwrap();
        // 2,000 ranges of ~20 bytes: about 40 KB, within the limit.
        session.capture(&many_ranges(1000, 2000), || None).unwrap();
        let kept = s.header_for(&c()).unwrap();
        assert!(kept.len() <= MAX_SESSION_TOKEN_BYTES);
        // 2,000 more would pass it: with the ranges unknown, refused and the token unchanged.
        let e = session
            .capture(&many_ranges(5000, 2000), || None)
            .unwrap_err();
        assert!(e.bytes > MAX_SESSION_TOKEN_BYTES, "{e:?}");
        assert_eq!(e.ranges, 4001);
        assert_eq!(s.header_for(&c()).unwrap(), kept);
        assert_eq!(s.token_for(&c()).unwrap().len(), 2001);
        // With the container's ranges known, the ones it does not have are dropped instead.
        session
            .capture(&many_ranges(5000, 2000), || Some(ranges(&["0", "5001"])))
            .unwrap();
        assert_eq!(s.header_for(&c()).unwrap(), "0:1#5,5001:1#100#1=100#2=100");
        // A header alone past the limit is refused before it is read.
        let huge = HeaderValue::from_str(&"0:1#5,".repeat(12_000)).unwrap();
        let e = session.capture(&huge, || None).unwrap_err();
        assert_eq!(e.bytes, huge.len());
        assert!(s.header_for(&c()).unwrap().len() < 100);
    }

    #[test]
    fn a_new_resource_id_drops_the_old_token() {
        let s = SessionContainer::new();
        let session = s.session(&c()).unwrap();
        assert!(
            !session.observe_rid(&HeaderValue::from_static("rid1")),
            "first seen"
        );
        session
            .capture(&HeaderValue::from_static("0:-1#10"), || None)
            .unwrap();
        assert!(
            !session.observe_rid(&HeaderValue::from_static("rid1")),
            "same container"
        );
        assert_eq!(s.header_for(&c()).unwrap(), "0:-1#10");
        assert!(
            session.observe_rid(&HeaderValue::from_static("rid2")),
            "recreated"
        );
        assert!(s.header_for(&c()).is_none(), "the old token is gone");
        session
            .capture(&HeaderValue::from_static("0:-1#2"), || None)
            .unwrap();
        assert_eq!(s.header_for(&c()).unwrap(), "0:-1#2");
        assert!(!session.observe_rid(&HeaderValue::from_static("rid2")));
    }

    #[test]
    fn concurrent_captures_keep_the_maximum() {
        let s = Arc::new(SessionContainer::new());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for n in 0..200u32 {
                        let v = HeaderValue::from_str(&format!("0:-1#{}", n * 4 + t)).unwrap();
                        s.capture(&c(), &v);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(s.header_for(&c()).unwrap(), "0:-1#799");
    }
}
