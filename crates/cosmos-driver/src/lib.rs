//! Cosmos DB driver.
