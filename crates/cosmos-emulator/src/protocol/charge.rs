//! The emulator's deterministic request-charge model (request units), so RU accounting can be tested.
//!
//! | operation                         | charge                                       |
//! |-----------------------------------|----------------------------------------------|
//! | point read (200)                  | 1 RU per started KiB of the document         |
//! | read answered 304                 | 1 RU                                         |
//! | create, replace, upsert           | 5 RU per started KiB of the stored document  |
//! | patch                             | 5 RU per started KiB of the result, + 1 RU when a condition was evaluated |
//! | delete                            | 5 RU per started KiB of the deleted document |
//! | read feed page                    | 1 RU + 1 RU per started KiB of the page's documents |
//! | query page                        | 2 RU + 0.1 RU per document scanned + 1 RU per started KiB returned + 1 RU per whole 100,000 units of work |
//! | query plan                        | 1 RU                                         |
//! | metadata (account, dbs, colls, pkranges) | 1 RU                                  |
//! | a data-plane error after routing  | 1 RU                                         |
//! | auth failures, injected faults    | 0 RU                                         |

/// Started KiB of `bytes`, at least one.
fn started_kib(bytes: usize) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

pub(crate) fn point_read(doc_bytes: usize) -> f64 {
    started_kib(doc_bytes)
}

pub(crate) fn not_modified() -> f64 {
    1.0
}

pub(crate) fn write(doc_bytes: usize) -> f64 {
    5.0 * started_kib(doc_bytes)
}

pub(crate) fn patch(doc_bytes: usize, had_condition: bool) -> f64 {
    write(doc_bytes) + if had_condition { 1.0 } else { 0.0 }
}

pub(crate) fn read_feed(page_bytes: usize) -> f64 {
    1.0 + if page_bytes == 0 {
        0.0
    } else {
        started_kib(page_bytes)
    }
}

/// Units of query work ([`crate::sql::meter`]) one request unit pays for.
pub(crate) const QUERY_WORK_PER_RU: u64 = 100_000;

/// A query page that read `scanned` documents, returned `returned_bytes` of results and used
/// `work` units of work.
pub(crate) fn query(scanned: usize, returned_bytes: usize, work: u64) -> f64 {
    let returned = if returned_bytes == 0 {
        0.0
    } else {
        started_kib(returned_bytes)
    };
    2.0 + (scanned as f64 * 0.1 * 100.0).round() / 100.0
        + returned
        + (work / QUERY_WORK_PER_RU) as f64
}

pub(crate) fn metadata() -> f64 {
    1.0
}

pub(crate) fn data_error() -> f64 {
    1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_follow_the_table() {
        assert_eq!(point_read(10), 1.0);
        assert_eq!(point_read(1024), 1.0);
        assert_eq!(point_read(1025), 2.0);
        assert_eq!(write(3000), 15.0);
        assert_eq!(patch(100, true), 6.0);
        assert_eq!(read_feed(0), 1.0);
        assert_eq!(read_feed(2048), 3.0);
        assert_eq!(query(0, 0, 0), 2.0);
        assert_eq!(query(10, 1500, 99_999), 5.0);
        assert_eq!(query(10, 1500, 250_000), 7.0);
    }
}
