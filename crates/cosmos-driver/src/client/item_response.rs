//! A point operation's response with its item typed on demand.

use serde::de::DeserializeOwned;

use crate::{CosmosError, CosmosResponse};

/// The response of a point operation on an item: status, headers, RU charge, session token and
/// diagnostics as in [`CosmosResponse`], plus the item.
#[derive(Debug)]
pub struct ItemResponse {
    response: CosmosResponse,
}

impl ItemResponse {
    pub(crate) fn new(response: CosmosResponse) -> Self {
        ItemResponse { response }
    }

    /// The item, deserialized as `T`.
    pub fn into_item<T: DeserializeOwned>(self) -> Result<T, CosmosError> {
        self.response.json()
    }

    /// The item, deserialized as `T`, keeping the response.
    pub fn item<T: DeserializeOwned>(&self) -> Result<T, CosmosError> {
        self.response.json()
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

    /// Request units charged.
    pub fn request_charge(&self) -> f64 {
        self.response.request_charge()
    }

    /// The session token the service returned.
    pub fn session_token(&self) -> Option<&str> {
        self.response.session_token()
    }

    /// The item's ETag.
    pub fn etag(&self) -> Option<&str> {
        self.response.etag()
    }
}
