//! Records on disk: a little-endian `u32` payload length, the first four bytes of the payload's
//! SHA-256, then the payload. Reading stops at the first record that is short, too long or whose
//! checksum differs; [`scan`] then looks at what lies after it (whole records, zeros) so that
//! [`super::classify`] can tell a torn tail from damage.

/// The longest record payload written or accepted.
pub(super) const MAX_RECORD_BYTES: usize = 256 << 20;

const HEADER: usize = 8;

fn checksum(payload: &[u8]) -> [u8; 4] {
    let digest = ring::digest::digest(&ring::digest::SHA256, payload);
    let mut out = [0u8; 4];
    out.copy_from_slice(&digest.as_ref()[..4]);
    out
}

/// Appends one framed record to `out`.
pub(super) fn encode(payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(payload));
    out.extend_from_slice(payload);
}

/// What reading a file of records found.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Decoded<'a> {
    /// The whole records, in order.
    pub records: Vec<&'a [u8]>,
    /// Bytes that hold whole records (where a torn tail starts).
    pub good_len: usize,
    /// Why the rest was dropped, when there is a rest.
    pub torn: Option<String>,
}

/// Splits `bytes` into records, stopping at the first damaged one.
pub(super) fn decode(bytes: &[u8]) -> Decoded<'_> {
    let mut records = Vec::new();
    let mut at = 0;
    let torn = loop {
        let rest = &bytes[at..];
        if rest.is_empty() {
            break None;
        }
        if rest.len() < HEADER {
            break Some(format!(
                "a record header is cut short ({} of {HEADER} bytes)",
                rest.len()
            ));
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if len > MAX_RECORD_BYTES {
            break Some(format!(
                "a record claims {len} bytes, more than the {MAX_RECORD_BYTES} allowed"
            ));
        }
        let Some(payload) = rest.get(HEADER..HEADER + len) else {
            break Some(format!(
                "a record is cut short ({} of {len} bytes)",
                rest.len() - HEADER
            ));
        };
        if rest[4..HEADER] != checksum(payload) {
            break Some(format!("a record of {len} bytes fails its checksum"));
        }
        records.push(payload);
        at += HEADER + len;
    };
    Decoded {
        records,
        good_len: at,
        torn,
    }
}

/// Why the first record that could not be read was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fault {
    /// Fewer than the header's 8 bytes are left.
    ShortHeader { left: u64 },
    /// The header claims more bytes than the file holds after it (or than are allowed).
    CutShort { claimed: u64, left: u64 },
    /// The payload is all there but its checksum differs.
    Checksum { len: u64 },
}

/// What reading a file found, as plain facts: where the whole records end, what stopped the
/// reading, and what lies after that.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// The file's length.
    pub len: u64,
    /// Whole records before the fault (all of them when there is none).
    pub records: u64,
    /// Where the whole records end: the fault's offset when there is one.
    pub good_len: u64,
    pub fault: Option<Fault>,
    /// Offsets of whole records (length, checksum and payload right) found after the fault.
    pub after: Vec<u64>,
    /// Whether every byte from the fault on is zero (space the file system had not written).
    pub zeros: bool,
    /// For a checksum fault: whether its payload holds a zero byte, which no written record does
    /// (a record is JSON, which escapes control characters).
    pub nul: bool,
    /// For a record cut short: whether the bytes after its header are one whole JSON value, as
    /// when its length field, not its end, is wrong.
    pub whole_json: bool,
}

/// A whole record at `at` of `bytes`: its payload's length.
fn whole_at(bytes: &[u8], at: usize) -> Option<usize> {
    let header = bytes.get(at..at.checked_add(HEADER)?)?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    if len == 0 || len > MAX_RECORD_BYTES {
        return None;
    }
    let payload = bytes.get(at + HEADER..at + HEADER + len)?;
    (header[4..] == checksum(payload)).then_some(len)
}

/// Reads `bytes` as [`decode`] does and, past a fault, looks for whole records after it.
pub(super) fn scan(bytes: &[u8]) -> Scan {
    let decoded = decode(bytes);
    let at = decoded.good_len;
    let mut scan = Scan {
        len: bytes.len() as u64,
        records: decoded.records.len() as u64,
        good_len: at as u64,
        ..Scan::default()
    };
    if decoded.torn.is_none() {
        return scan;
    }
    let rest = &bytes[at..];
    let left = rest.len();
    let claimed = if left >= HEADER {
        u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize
    } else {
        0
    };
    scan.fault = Some(if left < HEADER {
        Fault::ShortHeader { left: left as u64 }
    } else if claimed > MAX_RECORD_BYTES || claimed > left - HEADER {
        Fault::CutShort {
            claimed: claimed as u64,
            left: (left - HEADER) as u64,
        }
    } else {
        Fault::Checksum {
            len: claimed as u64,
        }
    });
    match scan.fault {
        Some(Fault::Checksum { .. }) => {
            scan.nul = rest[HEADER..HEADER + claimed].contains(&0);
        }
        Some(Fault::CutShort { .. }) => {
            scan.whole_json =
                serde_json::from_slice::<serde::de::IgnoredAny>(&rest[HEADER..]).is_ok();
        }
        _ => {}
    }
    scan.zeros = rest.iter().all(|&b| b == 0);
    let mut p = at + 1;
    while p < bytes.len() {
        match whole_at(bytes, p) {
            Some(len) => {
                scan.after.push(p as u64);
                p += HEADER + len;
            }
            None => p += 1,
        }
    }
    scan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            encode(p, &mut out);
        }
        out
    }

    #[test]
    fn whole_records_read_back_in_order() {
        let bytes = framed(&[b"one", b"", b"three"]);
        let d = decode(&bytes);
        assert_eq!(d.records, vec![&b"one"[..], b"", b"three"]);
        assert_eq!((d.good_len, d.torn), (bytes.len(), None));
    }

    #[test]
    fn every_cut_of_the_last_record_drops_just_it() {
        let bytes = framed(&[b"first", b"second record"]);
        let first_len = 8 + 5;
        for cut in first_len + 1..bytes.len() {
            let d = decode(&bytes[..cut]);
            assert_eq!(d.records, vec![&b"first"[..]], "cut at {cut}");
            assert_eq!(d.good_len, first_len);
            assert!(d.torn.is_some());
        }
    }

    #[test]
    fn a_scan_finds_the_whole_records_after_a_fault() {
        let mut bytes = framed(&[b"{\"a\":1}", b"{\"b\":2}", b"{\"c\":3}"]);
        let second = 8 + 7;
        let third = second + 8 + 7;
        bytes[second + 9] ^= 1;
        let s = scan(&bytes);
        assert_eq!((s.records, s.good_len), (1, second as u64));
        assert_eq!(s.fault, Some(Fault::Checksum { len: 7 }));
        assert_eq!(s.after, vec![third as u64]);
        assert!(!s.zeros && !s.nul);
        // Zeros past the last record: space never written.
        let mut zeros = framed(&[b"{}"]);
        zeros.extend_from_slice(&[0; 20]);
        let s = scan(&zeros);
        assert!(s.zeros && s.after.is_empty());
        assert_eq!(s.fault, Some(Fault::Checksum { len: 0 }));
        // Cut short: the rest is not a whole JSON value; a length that lies: it is.
        let whole = framed(&[b"{}", b"{\"long\":true}"]);
        let s = scan(&whole[..whole.len() - 2]);
        assert!(matches!(s.fault, Some(Fault::CutShort { .. })) && !s.whole_json);
        let mut lying = whole.clone();
        lying[10] += 1;
        let s = scan(&lying);
        assert!(matches!(s.fault, Some(Fault::CutShort { .. })) && s.whole_json);
        assert_eq!(scan(&whole).fault, None);
        assert_eq!(
            scan(&whole[..whole.len() - 20]).fault,
            Some(Fault::ShortHeader { left: 1 })
        );
    }

    #[test]
    fn decoding_stops_at_a_flipped_byte_or_a_huge_length() {
        let mut bytes = framed(&[b"first", b"second"]);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let d = decode(&bytes);
        assert_eq!(d.records.len(), 1);
        assert!(d.torn.unwrap().contains("checksum"));
        let mut huge = framed(&[b"first"]);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&[0; 12]);
        let d = decode(&huge);
        assert_eq!(d.records.len(), 1);
        assert!(d.torn.unwrap().contains("more than"));
    }
}
