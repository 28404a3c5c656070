//! Moving many items: records read from JSON Lines or a JSON array with bounded memory, each
//! checked before it is sent, rejects with their line numbers, and progress on stderr.

pub mod document;
pub mod export_token;
pub mod progress;
pub mod query_split;
pub mod range_reader;
pub mod records;
pub mod rejects;
