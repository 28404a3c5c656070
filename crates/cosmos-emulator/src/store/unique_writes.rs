//! Checking a commit's writes against the unique key values a partition already holds.

use std::collections::HashMap;
use std::sync::Arc;

use super::partition::Partition;
use super::stored_doc::{DocKey, StoredDoc};
use super::unique_keys::UniqueKeys;
use crate::protocol::ApiError;

impl UniqueKeys {
    /// Checks the writes of one commit (a single write, or a transactional batch in operation
    /// order) against the partition's index and each other: `Err((i, 409))` for the first write
    /// that would hold a unique value another item holds once the writes before it are applied.
    pub(crate) fn check_writes(
        &self,
        partition: &Partition,
        writes: &[(DocKey, Option<Arc<StoredDoc>>)],
    ) -> Result<(), (usize, ApiError)> {
        if self.is_empty() {
            return Ok(());
        }
        // The items written so far, as they will be.
        let mut staged: HashMap<&DocKey, Option<&StoredDoc>> = HashMap::new();
        for (i, (key, doc)) in writes.iter().enumerate() {
            if let Some(doc) = doc {
                for entry in doc.unique.iter() {
                    let committed = partition.unique_owner(key.epk, entry).filter(|owner| {
                        *owner != key.id
                            && !staged.contains_key(&DocKey {
                                epk: key.epk,
                                id: (*owner).to_owned(),
                            })
                    });
                    let written = staged.iter().any(|(other, d)| {
                        *other != key
                            && other.epk == key.epk
                            && d.is_some_and(|d| d.unique.contains(entry))
                    });
                    if committed.is_some() || written {
                        return Err((i, self.violation(entry)));
                    }
                }
            }
            staged.insert(key, doc.as_deref());
        }
        Ok(())
    }
}
