//! Priority-based execution: which requests the service throttles first when a partition runs
//! out of throughput.

use http::HeaderValue;

/// A request's priority (`x-ms-cosmos-priority-level`). When a partition's throughput runs short,
/// the service throttles `Low` requests before `High` ones; without one, a request is `High`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PriorityLevel {
    /// Served first (the default).
    High,
    /// Throttled first, to leave room for high-priority work.
    Low,
}

impl PriorityLevel {
    /// The level as the service spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            PriorityLevel::High => "High",
            PriorityLevel::Low => "Low",
        }
    }

    /// The header value.
    pub fn header_value(self) -> HeaderValue {
        HeaderValue::from_static(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_spelled_as_the_service_spells_them() {
        for (level, text) in [(PriorityLevel::High, "High"), (PriorityLevel::Low, "Low")] {
            assert_eq!(level.as_str(), text);
            assert_eq!(level.header_value(), text);
        }
    }
}
