//! Error answers: status, sub-status, the service's error code word, and a message.

/// Sub-status codes the emulator sends.
pub(crate) mod sub_status {
    /// 403: the region cannot take writes.
    pub(crate) const WRITE_FORBIDDEN: u32 = 3;
    /// 404: the session token is ahead of this region's replica.
    pub(crate) const READ_SESSION_NOT_AVAILABLE: u32 = 1002;
    /// 404: the database or container of the request does not exist.
    pub(crate) const OWNER_RESOURCE_NOT_FOUND: u32 = 1003;
    /// 400: the request was meant for a container of the same name that has since been deleted
    /// (and perhaps re-created): its `x-ms-cosmos-intended-collection-rid` names another one.
    pub(crate) const COLLECTION_RID_MISMATCH: u32 = 1024;
}

/// A request that fails: the response status, sub-status and a message a person can act on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ApiError {
    pub status: u16,
    pub sub_status: u32,
    pub message: String,
    /// Sent as `x-ms-retry-after-ms` (429s).
    pub retry_after_ms: Option<u64>,
    /// Further response headers: the session token, `lsn` and range id when the request reached a
    /// partition (412, 409, a missing item's 404, a patch the item refused).
    pub headers: Vec<(&'static str, String)>,
    /// Sent as the body's `additionalErrorInfo` (a cross-partition query's plan, which SDKs read
    /// to tell a query that needs a plan from other 400s).
    pub additional_error_info: Option<String>,
}

impl ApiError {
    /// An error with sub-status 0.
    pub(crate) fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            sub_status: 0,
            message: message.into(),
            retry_after_ms: None,
            headers: Vec::new(),
            additional_error_info: None,
        }
    }

    /// Adds a response header (`name` is one of [`crate::protocol::headers`]).
    pub(crate) fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets the body's `additionalErrorInfo`.
    pub(crate) fn with_additional_error_info(mut self, info: impl Into<String>) -> Self {
        self.additional_error_info = Some(info.into());
        self
    }

    /// Sets the sub-status.
    pub(crate) fn with_sub_status(mut self, sub_status: u32) -> Self {
        self.sub_status = sub_status;
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(409, message)
    }

    /// 409: a resource with that id exists already.
    pub(crate) fn already_exists() -> Self {
        Self::conflict("Entity with the specified id already exists in the system.")
    }

    pub(crate) fn precondition_failed() -> Self {
        Self::new(412, "One of the specified pre-condition is not met.")
    }

    pub(crate) fn write_forbidden(region: &str) -> Self {
        Self::new(403, format!("The requested operation cannot be performed at this region ({region}): it does not accept writes."))
            .with_sub_status(sub_status::WRITE_FORBIDDEN)
    }

    /// The entity does not exist.
    pub(crate) fn missing_entity() -> Self {
        Self::not_found("Entity with the specified id does not exist in the system.")
    }

    /// The database or container named by the request does not exist.
    pub(crate) fn missing_owner(what: &str) -> Self {
        Self::not_found(format!("Owner resource does not exist: {what}"))
            .with_sub_status(sub_status::OWNER_RESOURCE_NOT_FOUND)
    }

    /// The service's code word for the status.
    pub(crate) fn code(&self) -> &'static str {
        code_for(self.status)
    }
}

/// The service's code word for an HTTP status.
pub(crate) fn code_for(status: u16) -> &'static str {
    match status {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        408 => "RequestTimeout",
        409 => "Conflict",
        410 => "Gone",
        412 => "PreconditionFailed",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        429 => "TooManyRequests",
        449 => "RetryWith",
        500 => "InternalServerError",
        503 => "ServiceUnavailable",
        _ if status >= 500 => "ServiceError",
        _ => "Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_service_words() {
        for (status, code) in [
            (400, "BadRequest"),
            (404, "NotFound"),
            (412, "PreconditionFailed"),
            (429, "TooManyRequests"),
            (599, "ServiceError"),
        ] {
            assert_eq!(code_for(status), code);
        }
        assert_eq!(ApiError::write_forbidden("West US").sub_status, 3);
    }
}
