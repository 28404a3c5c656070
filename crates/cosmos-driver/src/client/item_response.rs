//! A point operation's response with its item typed as the call's `T`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::CosmosStatus;
use crate::response::CosmosResponse;

/// The response of a point operation on an item: status, RU charge, ETag, session token and
/// diagnostics, plus the item as `T` (the type the call was made with).
pub struct ItemResponse<T = serde_json::Value> {
    response: CosmosResponse,
    item: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for ItemResponse<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemResponse")
            .field("response", &self.response)
            .finish()
    }
}

impl<T> ItemResponse<T> {
    pub(crate) fn new(response: CosmosResponse) -> Self {
        ItemResponse {
            response,
            item: PhantomData,
        }
    }

    /// The whole response.
    pub fn response(&self) -> &CosmosResponse {
        &self.response
    }

    /// The whole response, owned.
    pub fn into_response(self) -> CosmosResponse {
        self.response
    }

    /// HTTP status.
    pub fn status(&self) -> u16 {
        self.response.status()
    }

    /// Status and sub-status.
    pub fn cosmos_status(&self) -> CosmosStatus {
        self.response.cosmos_status()
    }

    /// The request units the caller is billed for this operation. For a PATCH carried out as
    /// read-modify-write that is the read and the replace together, the same number as
    /// [`DiagnosticsContext::request_charge`] of [`ItemResponse::diagnostics`].
    pub fn request_charge(&self) -> f64 {
        self.response.diagnostics().request_charge()
    }

    /// The session token the service returned.
    pub fn session_token(&self) -> Option<&str> {
        self.response.session_token()
    }

    /// The item's ETag (pass it to `ItemOptions::with_if_match` for a conditional write).
    pub fn etag(&self) -> Option<&str> {
        self.response.etag()
    }

    /// The service's activity id.
    pub fn activity_id(&self) -> Option<&str> {
        self.response.activity_id()
    }

    /// What happened: every attempt, its region, charge and duration.
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        self.response.diagnostics()
    }
}

impl<T: DeserializeOwned> ItemResponse<T> {
    /// The item. Fails when the response carries none (a write with
    /// `content_response_on_write(false)`, or a delete).
    pub fn into_item(self) -> Result<T, CosmosError> {
        self.item()
    }

    /// The item, keeping the response.
    pub fn item(&self) -> Result<T, CosmosError> {
        if self.response.body().is_empty() {
            return Err(CosmosError::new(
                ErrorKind::Deserialization,
                format!(
                    "the response (status {}) carries no item: a delete, or a write asked for no content",
                    self.response.status()
                ),
            ));
        }
        self.response.json()
    }
}
