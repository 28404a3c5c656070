//! Session consistency: the tokens the driver captures from responses and sends with requests.

mod container;

pub(crate) use container::ContainerSession;
pub use container::SessionContainer;
