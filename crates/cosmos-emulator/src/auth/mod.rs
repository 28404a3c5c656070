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

pub(crate) use admin_access::AdminAccess;
pub(crate) use decide::decide;
pub(crate) use intent::{Action, Decision, Intent, Keys};
pub(crate) use resource_token::{lifetime as token_lifetime, ResourceToken, EXPIRY_SECONDS_HEADER};
pub(crate) use signature::key_from_base64;
pub(crate) use verify::{Access, AuthPolicy, Credentials};
