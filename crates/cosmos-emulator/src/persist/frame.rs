//! Records on disk: a little-endian `u32` payload length, the first four bytes of the payload's
//! SHA-256, then the payload. Reading stops at the first record that is short, too long or whose
//! checksum differs: everything after it is a torn tail.

/// The longest record payload written or accepted.
pub const MAX_RECORD_BYTES: usize = 256 << 20;

const HEADER: usize = 8;

fn checksum(payload: &[u8]) -> [u8; 4] {
    let digest = ring::digest::digest(&ring::digest::SHA256, payload);
    let mut out = [0u8; 4];
    out.copy_from_slice(&digest.as_ref()[..4]);
    out
}

/// Appends one framed record to `out`.
pub fn encode(payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(payload));
    out.extend_from_slice(payload);
}

/// What reading a file of records found.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// The whole records, in order.
    pub records: Vec<&'a [u8]>,
    /// Bytes that hold whole records (where a torn tail starts).
    pub good_len: usize,
    /// Why the rest was dropped, when there is a rest.
    pub torn: Option<String>,
}

/// Splits `bytes` into records, stopping at the first damaged one.
pub fn decode(bytes: &[u8]) -> Decoded<'_> {
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
    fn a_flipped_byte_or_a_huge_length_is_a_torn_tail() {
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
