//! Which driver errors leave a write's outcome unknown: the one place the chaos benchmark decides
//! it.
//!
//! The driver says so itself: a write whose request may have been carried out without its answer
//! reaching the driver (a lost connection or a timeout after sending, a 408, 500 or 503, or a
//! retry's 412/404/409 after one of those) ends with [`ErrorKind::OutcomeUnknown`]. Every other
//! error claims the write did not land, and the read-back holds the driver to it (a write that is
//! present after such an error is a phantom).

use cosmos_driver::{CosmosError, ErrorKind};

/// True when `error` does not tell whether the write it answers landed.
pub fn is_ambiguous(error: &CosmosError) -> bool {
    error.kind() == ErrorKind::OutcomeUnknown
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmos_driver::protocol::CosmosStatus;

    fn service(status: u16, sub_status: u32) -> CosmosError {
        CosmosError::new(ErrorKind::Service, "answered")
            .with_status(CosmosStatus::new(status, sub_status))
    }

    #[test]
    fn table() {
        let cases = [
            (CosmosError::new(ErrorKind::OutcomeUnknown, "lost"), true),
            (CosmosError::new(ErrorKind::Transport, "refused"), false),
            (CosmosError::new(ErrorKind::RequestTimeout, "slow"), false),
            (CosmosError::new(ErrorKind::EndToEndTimeout, "slow"), false),
            (service(503, 0), false),
            (service(409, 0), false),
            (service(412, 0), false),
            (service(429, 3200), false),
            (service(403, 3), false),
            (CosmosError::new(ErrorKind::NoEligibleRegion, "none"), false),
            (CosmosError::invalid_input("bad"), false),
        ];
        for (error, want) in cases {
            assert_eq!(
                is_ambiguous(&error),
                want,
                "{:?} {:?}",
                error.kind(),
                error.status()
            );
        }
    }
}
