//! Documents read one at a time from JSON Lines or from one JSON array, with a bound on each
//! record's size: a record past the bound is skipped to its end (its bytes are counted, not kept),
//! so memory stays bounded whatever the input. The format is told by the first byte that is not
//! white space: `[` starts an array, anything else is JSON Lines (blank lines are skipped).

use std::io::{self, BufRead};

/// One record: its line number (1-based, where it starts) and its text, or its size when it was
/// larger than the bound.
#[derive(Debug, PartialEq, Eq)]
pub struct Record {
    /// The line the record starts on.
    pub line: u64,
    /// The record's bytes, or how many there were when past the bound.
    pub text: Result<Vec<u8>, TooLarge>,
}

/// A record past the size bound.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct TooLarge {
    /// Its size in bytes.
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Unknown,
    Lines,
    Array,
    Done,
}

/// Reads records from `input`, each at most `limit` bytes.
pub struct RecordReader<R> {
    input: R,
    limit: usize,
    format: Format,
    /// The line the reader is on (1-based).
    line: u64,
}

/// Where the array scanner is within one element.
#[derive(Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `input` whose records are at most `limit` bytes.
    pub fn new(input: R, limit: usize) -> Self {
        RecordReader {
            input,
            limit,
            format: Format::Unknown,
            line: 1,
        }
    }

    /// The next record, `None` at the end of the input.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        if self.format == Format::Unknown {
            self.format = match self.skip_white()? {
                None => Format::Done,
                Some(b'[') => {
                    self.input.consume(1);
                    Format::Array
                }
                Some(_) => Format::Lines,
            };
        }
        match self.format {
            Format::Lines => self.next_line(),
            Format::Array => self.next_element(),
            Format::Unknown | Format::Done => Ok(None),
        }
    }

    /// Skips white space (counting lines) and answers the next byte without taking it.
    fn skip_white(&mut self) -> io::Result<Option<u8>> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let mut taken = 0;
            for &b in buf {
                if !b.is_ascii_whitespace() {
                    let lines = buf[..taken].iter().filter(|&&c| c == b'\n').count();
                    self.line += lines as u64;
                    self.input.consume(taken);
                    return Ok(Some(b));
                }
                taken += 1;
            }
            let lines = buf.iter().filter(|&&c| c == b'\n').count();
            self.line += lines as u64;
            self.input.consume(taken);
        }
    }

    fn next_line(&mut self) -> io::Result<Option<Record>> {
        loop {
            let line = self.line;
            let mut text = Vec::new();
            let mut size: u64 = 0;
            let mut ended = false;
            loop {
                let buf = self.input.fill_buf()?;
                if buf.is_empty() {
                    break;
                }
                let (part, found) = match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => (&buf[..i], true),
                    None => (buf, false),
                };
                size += part.len() as u64;
                if size <= self.limit as u64 {
                    text.extend_from_slice(part);
                } else if !text.is_empty() {
                    text = Vec::new();
                }
                let used = part.len() + usize::from(found);
                self.input.consume(used);
                if found {
                    self.line += 1;
                    ended = true;
                    break;
                }
            }
            if size == 0 && !ended {
                return Ok(None);
            }
            if size > self.limit as u64 {
                return Ok(Some(Record {
                    line,
                    text: Err(TooLarge { bytes: size }),
                }));
            }
            if text.iter().all(u8::is_ascii_whitespace) {
                if !ended {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(Record {
                line,
                text: Ok(text),
            }));
        }
    }

    fn next_element(&mut self) -> io::Result<Option<Record>> {
        let first = match self.skip_white()? {
            None => {
                self.format = Format::Done;
                return Ok(None);
            }
            Some(b']') => {
                self.input.consume(1);
                self.format = Format::Done;
                return Ok(None);
            }
            Some(b) => b,
        };
        let line = self.line;
        let _ = first;
        let mut scan = Scan::default();
        let mut text = Vec::new();
        let mut size: u64 = 0;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                self.format = Format::Done;
                break;
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate() {
                if scan.step(b) {
                    end = Some(i);
                    break;
                }
            }
            let part = &buf[..end.unwrap_or(buf.len())];
            self.line += part.iter().filter(|&&c| c == b'\n').count() as u64;
            size += part.len() as u64;
            if size <= self.limit as u64 {
                text.extend_from_slice(part);
            } else if !text.is_empty() {
                text = Vec::new();
            }
            match end {
                Some(i) => {
                    let closing = buf[i] == b']';
                    self.input.consume(i + 1);
                    if closing {
                        self.format = Format::Done;
                    }
                    break;
                }
                None => {
                    let n = part.len();
                    self.input.consume(n);
                }
            }
        }
        if size > self.limit as u64 {
            return Ok(Some(Record {
                line,
                text: Err(TooLarge { bytes: size }),
            }));
        }
        while text.last().is_some_and(u8::is_ascii_whitespace) {
            text.pop();
        }
        Ok(Some(Record {
            line,
            text: Ok(text),
        }))
    }
}

impl Scan {
    /// Takes one byte of an element; `true` when the byte ends the element (a `,` or `]` outside
    /// strings and nested values; the byte is not part of the element).
    fn step(&mut self, b: u8) -> bool {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return false;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' if self.depth > 0 => self.depth -= 1,
            b',' | b']' if self.depth == 0 => return true,
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's line and its text, or its size when past the bound.
    type Got = (u64, Result<String, u64>);

    fn all(input: &str, limit: usize) -> Vec<Got> {
        let mut r = RecordReader::new(io::BufReader::with_capacity(4, input.as_bytes()), limit);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push((
                rec.line,
                rec.text
                    .map(|t| String::from_utf8(t).unwrap())
                    .map_err(|e| e.bytes),
            ));
        }
        out
    }

    fn ok(line: u64, s: &str) -> Got {
        (line, Ok(s.to_owned()))
    }

    #[test]
    fn records_by_format() {
        let table: Vec<(&str, usize, Vec<Got>)> = vec![
            ("", 100, vec![]),
            ("  \n ", 100, vec![]),
            (
                "{\"a\":1}\n{\"b\":2}",
                100,
                vec![ok(1, "{\"a\":1}"), ok(2, "{\"b\":2}")],
            ),
            (
                "{\"a\":1}\n\n  \nnot json\n",
                100,
                vec![ok(1, "{\"a\":1}"), ok(4, "not json")],
            ),
            (
                "{\"a\":\"0123456789\"}\n{}\n",
                8,
                vec![(1, Err(18)), ok(2, "{}")],
            ),
            ("[]", 100, vec![]),
            (" [ ] ", 100, vec![]),
            (
                "[{\"a\":[1,2]},\n {\"s\":\"x,]\\\"\"} , 3\n]",
                100,
                vec![
                    ok(1, "{\"a\":[1,2]}"),
                    ok(2, "{\"s\":\"x,]\\\"\"}"),
                    ok(2, "3"),
                ],
            ),
            (
                "[\n{\"a\":\"0123456789\"},\n{}]",
                8,
                vec![(2, Err(18)), ok(3, "{}")],
            ),
            ("[{\"a\":1}", 100, vec![ok(1, "{\"a\":1}")]),
            ("[{\"a\":1},", 100, vec![ok(1, "{\"a\":1}")]),
        ];
        for (input, limit, want) in table {
            assert_eq!(all(input, limit), want, "{input:?}");
        }
    }

    #[test]
    fn a_huge_record_is_counted_not_kept() {
        let big = format!("{{\"id\":\"x\",\"p\":\"{}\"}}\n{{}}\n", "a".repeat(3 << 20));
        let mut r = RecordReader::new(io::BufReader::new(big.as_bytes()), 1 << 20);
        let first = r.next_record().unwrap().unwrap();
        assert_eq!(
            first.text,
            Err(TooLarge {
                bytes: (3 << 20) + 17
            })
        );
        assert_eq!(r.next_record().unwrap().unwrap().text, Ok(b"{}".to_vec()));
        assert_eq!(r.next_record().unwrap(), None);
    }
}
