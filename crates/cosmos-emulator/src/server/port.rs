//! Which listener a request arrived on.

/// Which listener a request arrived on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Port {
    /// The global endpoint: served as the current hub (write) region.
    Global,
    /// A region's own endpoint (index into the topology).
    Region(usize),
}
