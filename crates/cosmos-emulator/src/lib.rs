//! Multi-region Cosmos DB emulator.
