//! Session consistency: the tokens the driver captures from responses and sends with requests.

mod container;

pub use container::SessionContainer;
pub(crate) use container::{ContainerSession, SessionTokenOverflow};
