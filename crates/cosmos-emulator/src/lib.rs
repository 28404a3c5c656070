//! Multi-region Cosmos DB emulator.

pub mod epk;
pub mod faults;
pub mod auth;
pub mod protocol;
pub mod store;
