//! The emulator's deterministic request-charge model (request units), so RU accounting can be
//! tested and planned with: the same request over the same state is charged the same. The model
//! and how far it is from the service's published figures are in `docs/charges.md`.
//!
//! Reading a document costs its *read units* ([`read_units`]): its share of 1 RU up to 1 KiB, then
//! 0.09 RU per further KiB, so a 1 KB item reads for 1 RU and a 100 KB item for about 10 RU, as
//! the service publishes.
//!
//! | operation                         | charge                                       |
//! |-----------------------------------|----------------------------------------------|
//! | point read (200)                  | the document's read units, at least 1 RU     |
//! | read answered 304                 | 1 RU                                         |
//! | create, replace, upsert, delete   | 5 × the point read of the stored document     |
//! | patch                             | as a write of the result, + 1 RU when a condition was evaluated |
//! | read feed page                    | 1 RU + 1 RU per started KiB of the page's documents |
//! | query page                        | 2 RU + 0.1 RU per document loaded + 0.1 RU per index lookup + the read units of each result + 1 RU per whole 100,000 units of the loaded documents' work |
//! | query plan                        | 1 RU                                         |
//! | metadata (account, dbs, colls, pkranges) | 1 RU                                  |
//! | a data-plane error after routing  | 1 RU                                         |
//! | auth failures, injected faults    | 0 RU                                         |
//!
//! A query's loaded documents are those its index lookups find when the index answers its WHERE
//! clause ([`crate::sql::index_lookup`]), else every document it reads.

/// Bytes of one KiB.
const KIB: f64 = 1024.0;
/// What each KiB of a document past its first costs to read.
const RU_PER_FURTHER_KIB: f64 = 0.09;
/// What a write costs against a point read of the same document.
const WRITE_FACTOR: f64 = 5.0;
/// What a query page costs before it reads anything.
const QUERY_BASE: f64 = 2.0;
/// What each document a query loads costs.
const RU_PER_LOADED_DOC: f64 = 0.1;
/// What each index lookup of a query costs.
const RU_PER_LOOKUP: f64 = 0.1;

/// Started KiB of `bytes`, at least one.
fn started_kib(bytes: usize) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

/// Rounded to hundredths, as charges are answered.
fn hundredths(ru: f64) -> f64 {
    (ru * 100.0).round() / 100.0
}

/// The read units of `bytes` bytes: their share of 1 RU up to 1 KiB, then
/// [`RU_PER_FURTHER_KIB`] per further KiB.
pub(crate) fn read_units(bytes: usize) -> f64 {
    let kib = bytes as f64 / KIB;
    if kib <= 1.0 {
        kib
    } else {
        1.0 + (kib - 1.0) * RU_PER_FURTHER_KIB
    }
}

pub(crate) fn point_read(doc_bytes: usize) -> f64 {
    hundredths(read_units(doc_bytes).max(1.0))
}

pub(crate) fn not_modified() -> f64 {
    1.0
}

pub(crate) fn write(doc_bytes: usize) -> f64 {
    hundredths(WRITE_FACTOR * read_units(doc_bytes).max(1.0))
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

/// What one query page did, as its charge counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct QueryWork {
    /// Documents the page read.
    pub read: usize,
    /// Documents it loaded: those its index lookups find, or every one it read.
    pub loaded: usize,
    /// Index lookups (0 when it scans).
    pub lookups: usize,
    /// Units of work it used reading its `read` documents.
    pub work: u64,
}

/// A query page that did `done` and answered results of `result_sizes` bytes. Work is charged for
/// the loaded documents' share of it (all of it when the page loaded what it read).
pub(crate) fn query(done: QueryWork, result_sizes: impl IntoIterator<Item = usize>) -> f64 {
    let returned: f64 = result_sizes.into_iter().map(read_units).sum();
    let work = if done.read == 0 || done.loaded >= done.read {
        done.work
    } else {
        // The loaded share of the work; u128 keeps the product from overflowing.
        (done.work as u128 * done.loaded as u128 / done.read as u128) as u64
    };
    hundredths(
        QUERY_BASE
            + done.loaded as f64 * RU_PER_LOADED_DOC
            + done.lookups as f64 * RU_PER_LOOKUP
            + returned
            + (work / QUERY_WORK_PER_RU) as f64,
    )
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
    fn point_operations_follow_the_published_figures() {
        // (bytes, read, write): 1 KB and 100 KB items read for 1 and 10 RU, write for 5 and 50.
        let table = [
            (10, 1.0, 5.0),
            (1024, 1.0, 5.0),
            (1025, 1.0, 5.0),
            (2048, 1.09, 5.45),
            (3000, 1.17, 5.87),
            (100 * 1024, 9.91, 49.55),
            (2 * 1024 * 1024, 185.23, 926.15),
        ];
        for (bytes, read, written) in table {
            assert_eq!(point_read(bytes), read, "read {bytes}");
            assert_eq!(write(bytes), written, "write {bytes}");
        }
        assert_eq!(patch(100, true), 6.0);
        assert_eq!(read_feed(0), 1.0);
        assert_eq!(read_feed(2048), 3.0);
    }

    #[test]
    fn a_query_pays_for_what_it_loads_looks_up_and_returns() {
        let q = |read, loaded, lookups, work| QueryWork {
            read,
            loaded,
            lookups,
            work,
        };
        let table: [(QueryWork, Vec<usize>, f64); 7] = [
            (q(0, 0, 0, 0), vec![], 2.0),
            // A scan of 10 documents returning 1.5 KB, under and over 100,000 units of work.
            (q(10, 10, 0, 99_999), vec![1536], 4.05),
            (q(10, 10, 0, 250_000), vec![1536], 6.05),
            // A read many of 50 1 KB items out of 50,000: about its 50 point reads.
            (q(50_000, 50, 50, 900_000), vec![1024; 50], 62.0),
            // An equality with no match out of 50,000.
            (q(50_000, 0, 1, 900_000), vec![], 2.1),
            // 8-byte results pay their share of a KiB.
            (q(100, 100, 0, 0), vec![8; 128], 13.0),
            // The loaded share of the work: half of 400,000 units.
            (q(100, 50, 1, 400_000), vec![], 9.1),
        ];
        for (done, sizes, expected) in table {
            assert_eq!(query(done, sizes), expected, "{done:?}");
        }
    }
}
