//! Request authentication: master-key signatures, Entra ID tokens, the date-skew check, and the
//! admin API's access rules.

mod admin_access;
mod header;
mod resource_token;
mod signature;
mod verify;

pub use admin_access::AdminAccess;
pub use header::{parse as parse_authorization, percent_decode, AuthHeader, TokenType};
pub use signature::{key_from_base64, sign, string_to_sign, SignedFields};
pub use verify::{parse_http_date, Access, AuthPolicy, Credentials, MAX_DATE_SKEW};
