//! Percent-decoding, as URL paths and the `authorization` header carry it.

/// Percent-decodes `text` ('+' stays '+': base64 signatures contain it). None if an escape is bad.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = bytes.get(i + 1).and_then(|c| (*c as char).to_digit(16))?;
            let lo = bytes.get(i + 2).and_then(|c| (*c as char).to_digit(16))?;
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
