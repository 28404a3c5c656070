//! Items addressed by their `_rid` (`/dbs/{db}/colls/{coll}/docs/{item _rid}`, the `_self` links
//! SDKs follow): the resource id names the item in place of its id. The partition key header
//! still says which partition holds it, as for any point operation.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::epk::EpkFilter;
use crate::exchange::RequestCtx;
use crate::protocol::{headers, ApiError};

/// Items compared per lock hold while looking for a resource id.
const CHUNK: usize = 256;

/// The 16 resource-id bytes `segment` encodes when it is an item id of container `container`
/// (its first 8 bytes are the container's).
pub(super) fn item_rid(segment: &str, container: &[u8; 8]) -> Option<[u8; 16]> {
    if segment.len() != 24 {
        return None;
    }
    let bytes = STANDARD.decode(segment.replace('-', "/")).ok()?;
    let rid: [u8; 16] = bytes.try_into().ok()?;
    (rid[..8] == container[..]).then_some(rid)
}

/// The id of the item `id` names: itself, or the id of the item whose `_rid` it is.
pub(super) fn resolve<'a>(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &'a str,
) -> Result<Cow<'a, str>, ApiError> {
    let Ok(container) = ctx.shared.store.catalog.container(db, coll) else {
        return Ok(Cow::Borrowed(id));
    };
    let Some(rid) = item_rid(id, &container.rid_bytes) else {
        return Ok(Cow::Borrowed(id));
    };
    let Some(raw) = ctx.header(headers::PARTITION_KEY) else {
        return Ok(Cow::Borrowed(id));
    };
    let epk = container.point_epk(raw)?;
    let range = container.range_index(epk);
    let Some(lock) = container.partition(range) else {
        return Ok(Cow::Borrowed(id));
    };
    let mut after = None;
    loop {
        let chunk = {
            let partition = lock
                .read()
                .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))?;
            let lsn = partition.committed_lsn();
            partition.scan(lsn, after.as_ref(), Some(EpkFilter::Key(epk)), CHUNK)
        };
        if let Some((key, _)) = chunk.iter().find(|(_, doc)| doc.rid == rid) {
            // An item whose id is itself a resource id keeps its id.
            return Ok(if key.id == id {
                Cow::Borrowed(id)
            } else {
                Cow::Owned(key.id.clone())
            });
        }
        if chunk.len() < CHUNK {
            return Ok(Cow::Borrowed(id));
        }
        after = chunk.last().map(|(k, _)| k.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_rids_of_a_container() {
        let container = [0, 0, 0, 1, 0x80, 0, 0, 2];
        let mut rid = [0u8; 16];
        rid[..8].copy_from_slice(&container);
        rid[8] = 5;
        let text = STANDARD.encode(rid).replace('/', "-");
        assert_eq!(item_rid(&text, &container), Some(rid));
        let other = [0, 0, 0, 1, 0x80, 0, 0, 3];
        assert_eq!(item_rid(&text, &other), None);
        assert_eq!(item_rid("my-item", &container), None);
        assert_eq!(item_rid("AAAAAQ==", &container), None);
    }
}
