//! The driver's session tokens: per container, the token of each partition key range it has seen.
//!
//! Every response's `x-ms-session-token` is merged in, range by range (highest LSN per range wins,
//! so tokens never move backwards, whatever order responses arrive in). A session-consistent
//! request sends only the entry of the range that serves it (`"3:1#80#2=75"`), kept rendered, so
//! picking it is a hash lookup and a reference count increment whatever the number of ranges; a
//! range the driver has no entry for yet (a split's child) sends its newest parent's entry; only a
//! request whose range is unknown sends the whole token, rendered when first needed after a change.
//!
//! A container's whole token is bounded: at most [`MAX_SESSION_TOKEN_BYTES`] (64 KiB). A merge that
//! would take it past that keeps only the ranges the container has, when its partition key ranges
//! are known; when it would still be too long (or they are not known) the response's token is not
//! kept and the capture fails with the size, so that the operation ends with an error saying so.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use http::HeaderValue;

use crate::protocol::{PartitionSessionToken, SessionToken, MAX_SESSION_TOKEN_BYTES};
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
    /// Each range's entry as a header value (`"{range}:{token}"`).
    per_range: HashMap<Arc<str>, HeaderValue, FxBuildHasher>,
    /// The length of the whole token rendered: every entry and the commas between them.
    whole_len: usize,
    /// The whole token rendered, while it is current.
    whole: Option<HeaderValue>,
    /// The last raw header merged, to skip re-parsing a repeated token.
    last_raw: Option<HeaderValue>,
    /// The resource id of the container the token belongs to (`x-ms-content-path`), once seen.
    rid: Option<HeaderValue>,
}

impl State {
    /// The whole token, rendered now if a change made the kept one stale.
    fn whole(&mut self) -> Option<HeaderValue> {
        if self.whole.is_none() && !self.token.is_empty() {
            self.whole = HeaderValue::from_str(&self.token.to_string()).ok();
        }
        self.whole.clone()
    }

    /// Renders every range's entry again and recounts the whole length (after ranges were dropped).
    fn rebuild(&mut self) {
        self.per_range.clear();
        self.whole_len = 0;
        let entries: Vec<(Arc<str>, String)> = self
            .token
            .partitions()
            .map(|(r, t)| (Arc::from(r), format!("{r}:{t}")))
            .collect();
        for (range, text) in entries {
            self.whole_len += text.len() + usize::from(self.whole_len > 0);
            if let Ok(v) = HeaderValue::from_str(&text) {
                self.per_range.insert(range, v);
            }
        }
        self.whole = None;
    }

    /// The whole length after merging `incoming` in, and the entries that advance, rendered.
    fn prospective(
        &self,
        incoming: &SessionToken,
    ) -> (usize, Vec<(Arc<str>, PartitionSessionToken, String)>) {
        let mut len = self.whole_len;
        let mut count = self.token.len();
        let mut changes = Vec::new();
        for (range, token) in incoming.partitions() {
            let merged = match self.token.get(range) {
                Some(known) => {
                    let merged = known.merge(token);
                    if &merged == known {
                        continue;
                    }
                    len -= self.per_range.get(range).map_or(0, HeaderValue::len);
                    merged
                }
                None => {
                    count += 1;
                    if count > 1 {
                        len += 1;
                    }
                    token.clone()
                }
            };
            let text = format!("{range}:{merged}");
            len += text.len();
            changes.push((Arc::from(range), merged, text));
        }
        (len, changes)
    }

    /// Applies what [`State::prospective`] found.
    fn apply(&mut self, len: usize, changes: Vec<(Arc<str>, PartitionSessionToken, String)>) {
        if changes.is_empty() {
            return;
        }
        for (range, token, text) in changes {
            self.token.merge_partition(&range, &token);
            if let Ok(v) = HeaderValue::from_str(&text) {
                self.per_range.insert(range, v);
            }
        }
        self.whole_len = len;
        self.whole = None;
    }
}

/// The session state of one container, looked up once per operation.
#[derive(Clone, Debug)]
pub(crate) struct ContainerSession(Arc<Mutex<State>>);

impl ContainerSession {
    /// The token to send to `range`: its own entry; else, for a range born of a split, the entry
    /// of its newest parent that has one (`parents` lists them oldest first); else none (the
    /// driver has seen nothing of that range that a read must catch up with). When the range is
    /// not known, the whole token.
    pub(crate) fn header_for_range(
        &self,
        range: Option<&str>,
        parents: impl FnOnce(&str) -> Option<Arc<[Arc<str>]>>,
    ) -> Option<HeaderValue> {
        let mut g = self.0.lock().ok()?;
        if let Some(range) = range {
            if let Some(entry) = g.per_range.get(range) {
                return Some(entry.clone());
            }
            let parents = parents(range)?;
            return parents
                .iter()
                .rev()
                .find_map(|p| g.per_range.get(p))
                .cloned();
        }
        g.whole()
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

    /// Merges a response's `x-ms-session-token` in, at a cost that follows the ranges the response
    /// names, not the ranges kept. Malformed tokens are ignored (and logged). A merge that would
    /// take the whole token past [`MAX_SESSION_TOKEN_BYTES`] keeps only the ranges in `known()`
    /// (the container's partition key ranges, when known); still too long, the token is left as it
    /// was and the overflow is returned.
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
        let (len, changes) = g.prospective(&parsed);
        if len > MAX_SESSION_TOKEN_BYTES {
            // Cut to the container's ranges, then merge again; still too long: refused, unchanged.
            let kept = g.token.clone();
            let mut incoming = parsed;
            if let Some(ranges) = known() {
                let ids: HashSet<&str> = ranges.iter().map(|r| r.id.as_str()).collect();
                g.token.retain_ranges(|id| ids.contains(id));
                incoming.retain_ranges(|id| ids.contains(id));
                g.rebuild();
            }
            let (len, changes) = g.prospective(&incoming);
            if len > MAX_SESSION_TOKEN_BYTES {
                let ranges = g.token.len()
                    + changes
                        .iter()
                        .filter(|(r, _, _)| g.token.get(r).is_none())
                        .count();
                g.token = kept;
                g.rebuild();
                return Err(SessionTokenOverflow { bytes: len, ranges });
            }
            g.apply(len, changes);
        } else {
            g.apply(len, changes);
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

    /// The whole token to send for `container`, if any token is known.
    pub fn header_for(&self, container: &Arc<str>) -> Option<HeaderValue> {
        let state = self.state(container)?;
        let mut guard = state.lock().ok()?;
        guard.whole()
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

    #[test]
    fn a_request_sends_the_entry_of_its_range() {
        let s = SessionContainer::new();
        let session = s.session(&c()).unwrap();
        session
            .capture(&HeaderValue::from_static("0:1#10#1=9,1:1#20#1=19"), || None)
            .unwrap();
        session
            .capture(&HeaderValue::from_static("2:1#30"), || None)
            .unwrap();
        let none = |_: &str| None;
        let lineage = |range: &str| -> Option<Arc<[Arc<str>]>> {
            (range == "7").then(|| Arc::from(vec![Arc::from("2"), Arc::from("5")]))
        };
        let table: Vec<(Option<&str>, bool, &str)> = vec![
            // (the request's range, whether its lineage is known, what it sends)
            (Some("1"), false, "1:1#20#1=19"),
            (Some("0"), false, "0:1#10#1=9"),
            (Some("2"), false, "2:1#30"),
            // A split's child without an entry: its newest parent that has one (5 has none).
            (Some("7"), true, "2:1#30"),
            // A range the driver has no entry for (nothing read or written there): nothing.
            (Some("9"), false, ""),
            (Some("9"), true, ""),
            // No range known: the whole token.
            (None, false, "0:1#10#1=9,1:1#20#1=19,2:1#30"),
        ];
        for (range, with_lineage, sent) in table {
            let header = if with_lineage {
                session.header_for_range(range, lineage)
            } else {
                session.header_for_range(range, none)
            };
            let sent = (!sent.is_empty()).then_some(sent);
            assert_eq!(
                header.as_ref().map(|h| h.to_str().unwrap()),
                sent,
                "{range:?}"
            );
        }
        // An entry advances alone; the whole token follows.
        session
            .capture(&HeaderValue::from_static("1:1#25#1=24"), || None)
            .unwrap();
        assert_eq!(
            session.header_for_range(Some("1"), none).unwrap(),
            "1:1#25#1=24"
        );
        assert_eq!(s.header_for(&c()).unwrap(), "0:1#10#1=9,1:1#25#1=24,2:1#30");
    }

    #[test]
    fn the_whole_length_is_kept_exactly_as_entries_change() {
        let s = SessionContainer::new();
        let session = s.session(&c()).unwrap();
        for raw in [
            "3:1#5",
            "10:1#7#2=1",
            "3:1#50",
            "4:2#1",
            "10:1#7#2=100",
            "3:1#6",
        ] {
            session
                .capture(&HeaderValue::from_str(raw).unwrap(), || None)
                .unwrap();
            let g = session.0.lock().unwrap();
            assert_eq!(g.whole_len, g.token.to_string().len(), "after {raw}");
        }
    }
}
