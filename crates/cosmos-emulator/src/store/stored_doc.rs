//! What a partition stores per item, and the key it is stored under: the types the partition, its
//! change history, its unique key index and the item log all speak.

use bytes::Bytes;

use super::embeddings::Embeddings;
use crate::epk::Epk;

/// Where an item lives within a container: its EPK, then its id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct DocKey {
    pub epk: Epk,
    pub id: String,
}

/// A stored item: its JSON text (system properties included), etag and resource id.
#[derive(Debug)]
pub(crate) struct StoredDoc {
    pub body: Bytes,
    pub etag: String,
    /// The `_rid` bytes, kept across replaces.
    pub rid: [u8; 16],
    /// Its values at the container's unique keys ([`UniqueKeys::entries`]; empty without a
    /// policy), which the partition's index holds while this is the item's committed version.
    ///
    /// [`UniqueKeys::entries`]: super::unique_keys::UniqueKeys::entries
    pub unique: Box<[String]>,
    /// The embeddings vector searches measured in this version, read from `body` on first use.
    pub vectors: Embeddings,
    /// Whether this version is in the container's index (false: written with
    /// `x-ms-indexing-directive: Exclude`, so queries that use the index pass it by).
    pub indexed: bool,
}
