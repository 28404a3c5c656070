//! How one operation is carried out across attempts and regions.

mod retry;

pub use retry::LocationEffects;
