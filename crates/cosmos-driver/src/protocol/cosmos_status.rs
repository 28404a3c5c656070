//! HTTP status and Cosmos DB sub-status codes.

use std::fmt;

/// An HTTP status code with the service's `x-ms-substatus` (0 when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CosmosStatus {
    /// HTTP status code.
    pub status: u16,
    /// Cosmos DB sub-status (`x-ms-substatus`), 0 when the response had none.
    pub sub_status: u32,
}

impl CosmosStatus {
    /// A status with its sub-status.
    pub const fn new(status: u16, sub_status: u32) -> Self {
        Self { status, sub_status }
    }

    /// 2xx.
    pub const fn is_success(self) -> bool {
        self.status >= 200 && self.status < 300
    }
}

impl fmt::Display for CosmosStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.sub_status == 0 {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{}/{}", self.status, self.sub_status)
        }
    }
}

/// HTTP status codes the driver reasons about.
pub mod status {
    /// `200 OK`.
    pub const OK: u16 = 200;
    /// `201 Created`.
    pub const CREATED: u16 = 201;
    /// `204 No Content`.
    pub const NO_CONTENT: u16 = 204;
    /// `304 Not Modified`.
    pub const NOT_MODIFIED: u16 = 304;
    /// `400 Bad Request`.
    pub const BAD_REQUEST: u16 = 400;
    /// `401 Unauthorized`.
    pub const UNAUTHORIZED: u16 = 401;
    /// `403 Forbidden`.
    pub const FORBIDDEN: u16 = 403;
    /// `404 Not Found`.
    pub const NOT_FOUND: u16 = 404;
    /// `405 Method Not Allowed`.
    pub const METHOD_NOT_ALLOWED: u16 = 405;
    /// `408 Request Timeout`.
    pub const REQUEST_TIMEOUT: u16 = 408;
    /// `409 Conflict`.
    pub const CONFLICT: u16 = 409;
    /// `410 Gone`.
    pub const GONE: u16 = 410;
    /// `412 Precondition Failed`.
    pub const PRECONDITION_FAILED: u16 = 412;
    /// `413 Payload Too Large`.
    pub const PAYLOAD_TOO_LARGE: u16 = 413;
    /// `422 Unprocessable Entity`.
    pub const UNPROCESSABLE_ENTITY: u16 = 422;
    /// `429 Too Many Requests`.
    pub const TOO_MANY_REQUESTS: u16 = 429;
    /// `451 Unavailable For Legal Reasons`.
    pub const UNAVAILABLE_FOR_LEGAL_REASONS: u16 = 451;
    /// `500 Internal Server Error`.
    pub const INTERNAL_SERVER_ERROR: u16 = 500;
    /// `501 Not Implemented`.
    pub const NOT_IMPLEMENTED: u16 = 501;
    /// `503 Service Unavailable`.
    pub const SERVICE_UNAVAILABLE: u16 = 503;
    /// `505 HTTP Version Not Supported`.
    pub const HTTP_VERSION_NOT_SUPPORTED: u16 = 505;
}

/// Cosmos DB sub-status codes (`x-ms-substatus`) the driver reasons about.
pub mod sub_status {
    /// No sub-status.
    pub const NONE: u32 = 0;
    /// 403: the region cannot take writes (WriteForbidden).
    pub const WRITE_FORBIDDEN: u32 = 3;
    /// 403: the account is not available in the requested region / database account not found.
    pub const DATABASE_ACCOUNT_NOT_FOUND: u32 = 1008;
    /// 404: the replica has not caught up with the session token (ReadSessionNotAvailable).
    pub const READ_SESSION_NOT_AVAILABLE: u32 = 1002;
    /// 410: the name cache is stale (the container was recreated or moved): refresh the container.
    pub const NAME_CACHE_STALE: u32 = 1000;
    /// 410: the partition key range is gone (split or merge).
    pub const PARTITION_KEY_RANGE_GONE: u32 = 1002;
    /// 410: the partition is completing a split.
    pub const COMPLETING_SPLIT: u32 = 1007;
    /// 410: the partition is completing a migration (merge or move).
    pub const COMPLETING_PARTITION_MIGRATION: u32 = 1008;
    /// 429: transient backend capacity pressure (SystemResourceUnavailable).
    pub const SYSTEM_RESOURCE_UNAVAILABLE: u32 = 3092;
    /// 429: provisioned throughput exhausted (RU budget exceeded).
    pub const RU_BUDGET_EXCEEDED: u32 = 3200;
    /// 429: master-partition RU budget exceeded.
    pub const RU_BUDGET_EXCEEDED_FOR_MASTER: u32 = 3210;
    /// 429: a hot partition key is throttled.
    pub const HOT_PARTITION_KEY_THROTTLED: u32 = 3214;
}
