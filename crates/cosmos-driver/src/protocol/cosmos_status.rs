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
    pub const OK: u16 = 200;
    pub const CREATED: u16 = 201;
    pub const NO_CONTENT: u16 = 204;
    pub const NOT_MODIFIED: u16 = 304;
    pub const BAD_REQUEST: u16 = 400;
    pub const UNAUTHORIZED: u16 = 401;
    pub const FORBIDDEN: u16 = 403;
    pub const NOT_FOUND: u16 = 404;
    pub const METHOD_NOT_ALLOWED: u16 = 405;
    pub const REQUEST_TIMEOUT: u16 = 408;
    pub const CONFLICT: u16 = 409;
    pub const GONE: u16 = 410;
    pub const PRECONDITION_FAILED: u16 = 412;
    pub const PAYLOAD_TOO_LARGE: u16 = 413;
    pub const UNPROCESSABLE_ENTITY: u16 = 422;
    pub const TOO_MANY_REQUESTS: u16 = 429;
    pub const UNAVAILABLE_FOR_LEGAL_REASONS: u16 = 451;
    pub const INTERNAL_SERVER_ERROR: u16 = 500;
    pub const NOT_IMPLEMENTED: u16 = 501;
    pub const SERVICE_UNAVAILABLE: u16 = 503;
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
    /// 410: the partition key range is gone (split or merge).
    pub const PARTITION_KEY_RANGE_GONE: u32 = 1002;
    /// 429: transient backend capacity pressure (SystemResourceUnavailable).
    pub const SYSTEM_RESOURCE_UNAVAILABLE: u32 = 3092;
    /// 429: provisioned throughput exhausted (RU budget exceeded).
    pub const RU_BUDGET_EXCEEDED: u32 = 3200;
    /// 429: master-partition RU budget exceeded.
    pub const RU_BUDGET_EXCEEDED_FOR_MASTER: u32 = 3210;
    /// 429: a hot partition key is throttled.
    pub const HOT_PARTITION_KEY_THROTTLED: u32 = 3214;
}
