//! Request authentication and authorization: master-key signatures, Entra ID tokens, the
//! date-skew check, resource tokens and what their permissions allow (decided from a request's
//! resolved operation), and the admin API's access rules.

mod admin_access;
mod decide;
mod header;
mod intent;
mod resource_token;
mod signature;
mod verify;

pub use admin_access::AdminAccess;
pub use decide::{decide, same_key};
pub use header::{parse as parse_authorization, AuthHeader, TokenType};
pub use intent::{Action, Decision, Intent, Keys};
pub use resource_token::{lifetime as token_lifetime, ResourceToken, EXPIRY_SECONDS_HEADER};
pub use signature::{key_from_base64, sign, string_to_sign, SignedFields};
pub use verify::{parse_http_date, Access, AuthPolicy, Credentials, MAX_DATE_SKEW};
