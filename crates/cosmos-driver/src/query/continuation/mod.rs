//! The continuation stage: the composite continuation token a query resumes from, and its text
//! encoding within its size limit.

pub(crate) mod continuation_token;
pub(crate) mod token_text;
