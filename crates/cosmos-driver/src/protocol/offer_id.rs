//! The id of a throughput offer (`/offers/{id}`): the resource id the service gave it.

use std::fmt;
use std::sync::Arc;

use super::ProtocolError;

/// The longest offer id accepted (service offer ids are short resource ids).
const MAX_OFFER_ID_LENGTH: usize = 64;

/// The id of a throughput offer. Offer ids are resource ids (letters, digits and `+ - = _`), so
/// they need no encoding in a path; the signature uses the id in lower case, as the service does.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OfferId {
    id: Arc<str>,
    link: Arc<str>,
    path: bytes::Bytes,
}

impl OfferId {
    /// Checks `id` (as found in an offer's `id` or `_rid`).
    pub fn new(id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let id = id.as_ref();
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '=' | '_');
        if id.is_empty() || id.len() > MAX_OFFER_ID_LENGTH || !id.chars().all(allowed) {
            return Err(ProtocolError::new(format!(
                "{id:?} is not an offer id: offer ids are 1 to {MAX_OFFER_ID_LENGTH} letters, digits, '+', '-', '=' or '_'"
            )));
        }
        Ok(Self {
            id: Arc::from(id),
            link: Arc::from(id.to_ascii_lowercase()),
            path: bytes::Bytes::from(format!("/offers/{id}")),
        })
    }

    /// The id as the service gave it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The resource link used in the signature: the id in lower case.
    pub fn link(&self) -> &str {
        &self.link
    }

    /// The request path, `/offers/{id}`.
    pub fn path_bytes(&self) -> &bytes::Bytes {
        &self.path
    }
}

impl fmt::Debug for OfferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OfferId({})", self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_ids_are_resource_ids() {
        let id = OfferId::new("Ab3+").unwrap();
        assert_eq!(id.link(), "ab3+");
        assert_eq!(id.path_bytes().as_ref(), b"/offers/Ab3+");
        for bad in ["", "a/b", "a b", "é", &"x".repeat(65)] {
            let err = OfferId::new(bad).unwrap_err();
            assert!(err.message().contains("not an offer id"), "{bad}");
        }
    }
}
