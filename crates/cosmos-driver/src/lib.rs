//! An Azure Cosmos DB (NoSQL API) driver over HTTP whose reads stay fast when a region is slow.

pub mod protocol;
pub mod hedging;
