//! Which driver errors leave a write's outcome unknown: the one place the chaos benchmark decides
//! it.
//!
//! Until the driver reports an "outcome ambiguous" error kind of its own, an error is ambiguous
//! when the request may have been carried out without its answer reaching the driver: a transport
//! failure (the driver does not say whether it happened before or after sending, so every one
//! counts), a timeout, or a 408, 500 or 503 answer (the service may have executed the write before
//! answering it). When the driver gains that kind, this function reads it instead.

use cosmos_driver::{CosmosError, ErrorKind};

/// True when `error` does not tell whether the write it answers landed.
pub fn is_ambiguous(error: &CosmosError) -> bool {
    match error.kind() {
        ErrorKind::Transport | ErrorKind::RequestTimeout | ErrorKind::EndToEndTimeout => true,
        ErrorKind::Service => matches!(error.status(), Some(408 | 500 | 503)),
        _ => false,
    }
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
            (CosmosError::new(ErrorKind::Transport, "reset"), true),
            (CosmosError::new(ErrorKind::RequestTimeout, "slow"), true),
            (CosmosError::new(ErrorKind::EndToEndTimeout, "slow"), true),
            (service(408, 0), true),
            (service(500, 0), true),
            (service(503, 0), true),
            (service(409, 0), false),
            (service(412, 0), false),
            (service(429, 3200), false),
            (service(403, 3), false),
            (service(404, 0), false),
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
