//! Cosmos binary JSON: the tagged encoding an SDK may send item bodies in (the buffer starts with
//! the byte 0x80) and may ask answers in (`x-ms-cosmos-supported-serialization-formats`).
//!
//! Every value starts with one type-marker byte; all multi-byte fields are little-endian.
//!
//! | markers     | value                                                                   |
//! |-------------|-------------------------------------------------------------------------|
//! | 0x00–0x1F   | the integer 0–31 itself                                                 |
//! | 0x20–0x3F   | a string from the fixed system dictionary (`SYSTEM_STRINGS`)          |
//! | 0x40–0x67   | a string from a user dictionary (refused: a request carries none)       |
//! | 0x71–0x74   | base64 text stored as its bytes (refused)                               |
//! | 0x75–0x77   | a GUID string (lower case, upper case, lower case in double quotes)     |
//! | 0x78–0x7F   | compressed and bit-packed strings (refused)                             |
//! | 0x80–0xBF   | a string of `marker & 0x7F` (0–63) UTF-8 bytes                           |
//! | 0xC0–0xC2   | a string with a 1-, 2- or 4-byte length                                 |
//! | 0xC3–0xC6   | a string repeated from an earlier offset (1-, 2-, 3- or 4-byte offset)  |
//! | 0xC7–0xCC   | u64, u8, i16, i32, i64, f64                                             |
//! | 0xCD–0xCF   | f32, f64, f16 (f16 refused)                                             |
//! | 0xD0–0xD3   | null, false, true, a 16-byte GUID value                                 |
//! | 0xD7–0xDC   | u8, i8, i16, i32, i64, u32                                              |
//! | 0xDD–0xDF   | binary blobs (refused: JSON has no binary value)                        |
//! | 0xE0–0xE7   | arrays: empty, one item, byte length (1/2/4), byte length and count     |
//! | 0xE8–0xEF   | objects, the same eight forms; a property is a string then a value      |
//! | 0xF0–0xF3   | arrays of numbers sharing one item marker, and arrays of those          |
//!
//! A whole buffer is the preamble 0x80 followed by exactly one value. [`decode`] walks it with an
//! explicit stack (no recursion), bounded in nesting (`MAX_DEPTH`), in values
//! (`MAX_VALUES`) and in bytes repeated by reference strings (`MAX_REFERENCED_BYTES`).
//! [`encode`] writes a value in the compact forms above.

use std::fmt;

use serde_json::{Map, Number, Value};

/// The first byte of every Cosmos binary JSON buffer (no UTF-8 text starts with it).
pub const PREAMBLE: u8 = 0x80;

/// The deepest nesting of arrays and objects accepted (the outermost container is level 1).
/// Above the 100 levels an item may have, so a deep item is refused with the item rule's message.
pub(crate) const MAX_DEPTH: usize = 120;

/// The most values (scalars, containers, property names) one buffer may hold.
pub(crate) const MAX_VALUES: usize = 1 << 21;

/// The most string bytes reference strings may repeat in one buffer.
pub(crate) const MAX_REFERENCED_BYTES: usize = 4 * 1024 * 1024;

/// The fixed dictionary of markers 0x20–0x3F, in marker order.
pub(crate) const SYSTEM_STRINGS: [&str; 32] = [
    "$s",
    "$t",
    "$v",
    "_attachments",
    "_etag",
    "_rid",
    "_self",
    "_ts",
    "attachments/",
    "coordinates",
    "geometry",
    "GeometryCollection",
    "id",
    "url",
    "Value",
    "label",
    "LineString",
    "link",
    "MultiLineString",
    "MultiPoint",
    "MultiPolygon",
    "name",
    "Name",
    "Type",
    "Point",
    "Polygon",
    "properties",
    "type",
    "value",
    "Feature",
    "FeatureCollection",
    "_id",
];

/// Type-marker bytes.
// The format's whole table of markers: some are only read as part of a range.
#[allow(dead_code)]
pub(crate) mod marker {
    pub(crate) const LITERAL_INT_END: u8 = 0x20;
    pub(crate) const SYSTEM_STRING: u8 = 0x20;
    pub(crate) const USER_STRING: u8 = 0x40;
    pub(crate) const USER_STRING_2: u8 = 0x60;
    pub(crate) const BASE64_FIRST: u8 = 0x71;
    pub(crate) const BASE64_LAST: u8 = 0x74;
    pub(crate) const GUID_LOWER: u8 = 0x75;
    pub(crate) const GUID_UPPER: u8 = 0x76;
    pub(crate) const GUID_QUOTED: u8 = 0x77;
    pub(crate) const PACKED_FIRST: u8 = 0x78;
    pub(crate) const PACKED_LAST: u8 = 0x7F;
    pub(crate) const SHORT_STRING: u8 = 0x80;
    pub(crate) const STRING_1: u8 = 0xC0;
    pub(crate) const STRING_2: u8 = 0xC1;
    pub(crate) const STRING_4: u8 = 0xC2;
    pub(crate) const REFERENCE_1: u8 = 0xC3;
    pub(crate) const REFERENCE_2: u8 = 0xC4;
    pub(crate) const REFERENCE_3: u8 = 0xC5;
    pub(crate) const REFERENCE_4: u8 = 0xC6;
    pub(crate) const NUMBER_U64: u8 = 0xC7;
    pub(crate) const NUMBER_U8: u8 = 0xC8;
    pub(crate) const NUMBER_I16: u8 = 0xC9;
    pub(crate) const NUMBER_I32: u8 = 0xCA;
    pub(crate) const NUMBER_I64: u8 = 0xCB;
    pub(crate) const NUMBER_DOUBLE: u8 = 0xCC;
    pub(crate) const FLOAT32: u8 = 0xCD;
    pub(crate) const FLOAT64: u8 = 0xCE;
    pub(crate) const FLOAT16: u8 = 0xCF;
    pub(crate) const NULL: u8 = 0xD0;
    pub(crate) const FALSE: u8 = 0xD1;
    pub(crate) const TRUE: u8 = 0xD2;
    pub(crate) const GUID: u8 = 0xD3;
    pub(crate) const UINT8: u8 = 0xD7;
    pub(crate) const INT8: u8 = 0xD8;
    pub(crate) const INT16: u8 = 0xD9;
    pub(crate) const INT32: u8 = 0xDA;
    pub(crate) const INT64: u8 = 0xDB;
    pub(crate) const UINT32: u8 = 0xDC;
    pub(crate) const BINARY_FIRST: u8 = 0xDD;
    pub(crate) const BINARY_LAST: u8 = 0xDF;
    pub(crate) const ARRAY_EMPTY: u8 = 0xE0;
    pub(crate) const ARRAY_ONE: u8 = 0xE1;
    pub(crate) const ARRAY_L1: u8 = 0xE2;
    pub(crate) const ARRAY_L2: u8 = 0xE3;
    pub(crate) const ARRAY_L4: u8 = 0xE4;
    pub(crate) const ARRAY_LC1: u8 = 0xE5;
    pub(crate) const ARRAY_LC2: u8 = 0xE6;
    pub(crate) const ARRAY_LC4: u8 = 0xE7;
    pub(crate) const OBJECT_EMPTY: u8 = 0xE8;
    pub(crate) const OBJECT_ONE: u8 = 0xE9;
    pub(crate) const OBJECT_L1: u8 = 0xEA;
    pub(crate) const OBJECT_L2: u8 = 0xEB;
    pub(crate) const OBJECT_L4: u8 = 0xEC;
    pub(crate) const OBJECT_LC1: u8 = 0xED;
    pub(crate) const OBJECT_LC2: u8 = 0xEE;
    pub(crate) const OBJECT_LC4: u8 = 0xEF;
    pub(crate) const NUMBERS_C1: u8 = 0xF0;
    pub(crate) const NUMBERS_C2: u8 = 0xF1;
    pub(crate) const NUMBER_ARRAYS_C1: u8 = 0xF2;
    pub(crate) const NUMBER_ARRAYS_C2: u8 = 0xF3;
}

use marker as m;

/// Whether `body` is Cosmos binary JSON (it starts with [`PREAMBLE`]).
pub(crate) fn is_binary(body: &[u8]) -> bool {
    body.first() == Some(&PREAMBLE)
}

/// Why a buffer is not valid Cosmos binary JSON: the byte offset and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub problem: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.problem)
    }
}

impl std::error::Error for DecodeError {}

fn fail<T>(offset: usize, problem: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError {
        offset,
        problem: problem.into(),
    })
}

/// A read position in the buffer.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let available = self.buf.len() - self.pos;
        if n > available {
            return fail(
                self.pos,
                format!("{what} needs {n} bytes but the buffer has {available} left"),
            );
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn fixed<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.fixed::<1>(what)?[0])
    }

    /// An unsigned little-endian field of `width` bytes (1, 2, 3 or 4).
    fn uint(&mut self, width: usize, what: &str) -> Result<usize, DecodeError> {
        let bytes = self.take(width, what)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b)))
    }
}

/// What the walk may still spend.
struct Budget {
    values: usize,
    referenced: usize,
}

impl Budget {
    fn count(&mut self, at: usize, n: usize) -> Result<(), DecodeError> {
        self.values += n;
        if self.values > MAX_VALUES {
            return fail(at, format!("more than {MAX_VALUES} values"));
        }
        Ok(())
    }
}

/// An open array or object.
struct Frame {
    items: Open,
    /// Offset of its marker (for messages).
    at: usize,
    /// Where its payload ends, when the form declares a byte length.
    end: Option<usize>,
    /// How many items or properties it declares, when the form declares a count.
    count: Option<usize>,
    seen: usize,
}

enum Open {
    Array(Vec<Value>),
    /// Properties so far and a name waiting for its value.
    Object(Map<String, Value>, Option<String>),
}

impl Frame {
    fn kind(&self) -> &'static str {
        match self.items {
            Open::Array(_) => "array",
            Open::Object(..) => "object",
        }
    }

    fn wants_name(&self) -> bool {
        matches!(self.items, Open::Object(_, None))
    }

    /// Whether every item has been read (checked before each read).
    fn complete(&self, pos: usize) -> bool {
        match self.end {
            Some(end) => pos >= end,
            None => self.count.is_some_and(|n| self.seen >= n),
        }
    }

    fn close(self) -> Result<Value, DecodeError> {
        if let Open::Object(_, Some(name)) = &self.items {
            return fail(
                self.at,
                format!("the object ends after the property name {name:?} without its value"),
            );
        }
        if let Some(n) = self.count {
            if n != self.seen {
                return fail(
                    self.at,
                    format!(
                        "the {} declares {n} items but holds {}",
                        self.kind(),
                        self.seen
                    ),
                );
            }
        }
        Ok(match self.items {
            Open::Array(items) => Value::Array(items),
            Open::Object(map, _) => Value::Object(map),
        })
    }

    /// Adds a finished value (a property name when the object waits for one).
    fn push(&mut self, value: Value, pos: usize) -> Result<(), DecodeError> {
        match &mut self.items {
            Open::Array(items) => {
                items.push(value);
                self.seen += 1;
            }
            Open::Object(map, pending) => match pending.take() {
                Some(name) => {
                    map.insert(name, value);
                    self.seen += 1;
                }
                None => match value {
                    Value::String(name) => *pending = Some(name),
                    // Names are read as strings before they reach here.
                    _ => return fail(self.at, "a property name is not a string"),
                },
            },
        }
        if let Some(end) = self.end {
            if pos > end {
                return fail(
                    self.at,
                    format!(
                        "an item runs {} bytes past the end of the {}",
                        pos - end,
                        self.kind()
                    ),
                );
            }
        }
        Ok(())
    }
}

/// Decodes a whole buffer (preamble and one value) into JSON.
pub fn decode(buf: &[u8]) -> Result<Value, DecodeError> {
    if !is_binary(buf) {
        return fail(0, "the buffer does not start with the preamble byte 0x80");
    }
    let mut cur = Cursor { buf, pos: 1 };
    let mut budget = Budget {
        values: 0,
        referenced: 0,
    };
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        // Close every container that is complete, handing each to its parent.
        while stack.last().is_some_and(|f| f.complete(cur.pos)) {
            let Some(frame) = stack.pop() else { break };
            let value = frame.close()?;
            match stack.last_mut() {
                Some(parent) => parent.push(value, cur.pos)?,
                None => return whole(value, &cur),
            }
        }
        let at = cur.pos;
        let wants_name = stack.last().is_some_and(Frame::wants_name);
        let mk = cur.u8(if wants_name {
            "a property name"
        } else {
            "a type marker"
        })?;
        budget.count(at, 1)?;
        let value = match open(mk, at, &mut cur)? {
            Some(frame) => {
                if wants_name {
                    return fail(
                        at,
                        format!("a property name must be a string, not an {}", frame.kind()),
                    );
                }
                if stack.len() >= MAX_DEPTH {
                    return fail(
                        at,
                        format!("arrays and objects nest deeper than {MAX_DEPTH} levels"),
                    );
                }
                stack.push(frame);
                continue;
            }
            None => {
                let value = leaf(mk, at, &mut cur, &mut budget, stack.len(), true)?;
                if wants_name && !value.is_string() {
                    return fail(
                        at,
                        format!("a property name must be a string, not marker 0x{mk:02X}"),
                    );
                }
                value
            }
        };
        match stack.last_mut() {
            Some(parent) => parent.push(value, cur.pos)?,
            None => return whole(value, &cur),
        }
    }
}

/// The root value, when nothing follows it.
fn whole(value: Value, cur: &Cursor<'_>) -> Result<Value, DecodeError> {
    let rest = cur.buf.len() - cur.pos;
    if rest > 0 {
        return fail(cur.pos, format!("{rest} bytes follow the value"));
    }
    Ok(value)
}

/// The frame an array or object marker opens (its header read), or `None` for other markers.
fn open(mk: u8, at: usize, cur: &mut Cursor<'_>) -> Result<Option<Frame>, DecodeError> {
    let array = (m::ARRAY_EMPTY..=m::ARRAY_LC4).contains(&mk);
    let object = (m::OBJECT_EMPTY..=m::OBJECT_LC4).contains(&mk);
    if !array && !object {
        return Ok(None);
    }
    let form = mk & 0x07;
    let (end, count) = match form {
        0 => (None, Some(0)),
        1 => (None, Some(1)),
        _ => {
            let width = [1, 2, 4][usize::from((form - 2) % 3)];
            let length = cur.uint(width, "a container's byte length")?;
            let count = if form >= 5 {
                Some(cur.uint(width, "a container's item count")?)
            } else {
                None
            };
            let available = cur.buf.len() - cur.pos;
            if length > available {
                return fail(
                    at,
                    format!(
                        "the container declares {length} bytes but the buffer has {available} left"
                    ),
                );
            }
            (Some(cur.pos + length), count)
        }
    };
    let items = if array {
        Open::Array(Vec::new())
    } else {
        Open::Object(Map::new(), None)
    };
    Ok(Some(Frame {
        items,
        at,
        end,
        count,
        seen: 0,
    }))
}

fn refused<T>(at: usize, mk: u8, what: &str) -> Result<T, DecodeError> {
    fail(
        at,
        format!("marker 0x{mk:02X} ({what}) is not supported by the emulator"),
    )
}

fn int(v: i64) -> Value {
    Value::Number(v.into())
}

fn float(at: usize, v: f64) -> Result<Value, DecodeError> {
    match Number::from_f64(v) {
        Some(n) => Ok(Value::Number(n)),
        None => fail(at, format!("{v} is not a JSON number")),
    }
}

/// A value that opens no container. `depth` is the nesting it sits at (for the number arrays);
/// `references` is false inside a referenced string, so references never chain.
fn leaf(
    mk: u8,
    at: usize,
    cur: &mut Cursor<'_>,
    budget: &mut Budget,
    depth: usize,
    references: bool,
) -> Result<Value, DecodeError> {
    match mk {
        0x00..m::LITERAL_INT_END => Ok(int(i64::from(mk))),
        m::SYSTEM_STRING..m::USER_STRING => Ok(Value::String(
            SYSTEM_STRINGS[usize::from(mk - m::SYSTEM_STRING)].to_owned(),
        )),
        m::USER_STRING..0x68 => refused(
            at,
            mk,
            "a string from a user dictionary, which a request does not carry",
        ),
        m::BASE64_FIRST..=m::BASE64_LAST => refused(at, mk, "base64 text stored as bytes"),
        m::GUID_LOWER | m::GUID_UPPER | m::GUID_QUOTED => {
            let bytes = cur.fixed::<16>("a GUID string")?;
            Ok(Value::String(guid_string(&bytes, mk)))
        }
        m::PACKED_FIRST..=m::PACKED_LAST => refused(at, mk, "a compressed string"),
        m::SHORT_STRING..m::STRING_1 => string(cur, at, usize::from(mk & 0x7F)),
        m::STRING_1 | m::STRING_2 | m::STRING_4 => {
            let width = [1, 2, 4][usize::from(mk - m::STRING_1)];
            let len = cur.uint(width, "a string length")?;
            string(cur, at, len)
        }
        m::REFERENCE_1..=m::REFERENCE_4 => {
            if !references {
                return fail(at, "a reference string points at another reference string");
            }
            let width = usize::from(mk - m::REFERENCE_1) + 1;
            let target = cur.uint(width, "a reference string's offset")?;
            referenced(cur.buf, at, target, budget)
        }
        m::NUMBER_U64 => Ok(Value::Number(
            u64::from_le_bytes(cur.fixed("a u64")?).into(),
        )),
        m::NUMBER_U8 | m::UINT8 => Ok(int(i64::from(cur.u8("a u8")?))),
        m::INT8 => Ok(int(i64::from(i8::from_le_bytes(cur.fixed("an i8")?)))),
        m::NUMBER_I16 | m::INT16 => Ok(int(i64::from(i16::from_le_bytes(cur.fixed("an i16")?)))),
        m::NUMBER_I32 | m::INT32 => Ok(int(i64::from(i32::from_le_bytes(cur.fixed("an i32")?)))),
        m::UINT32 => Ok(int(i64::from(u32::from_le_bytes(cur.fixed("a u32")?)))),
        m::NUMBER_I64 | m::INT64 => Ok(int(i64::from_le_bytes(cur.fixed("an i64")?))),
        m::NUMBER_DOUBLE | m::FLOAT64 => float(at, f64::from_le_bytes(cur.fixed("an f64")?)),
        m::FLOAT32 => float(at, f64::from(f32::from_le_bytes(cur.fixed("an f32")?))),
        m::FLOAT16 => refused(at, mk, "a 16-bit float"),
        m::NULL => Ok(Value::Null),
        m::FALSE => Ok(Value::Bool(false)),
        m::TRUE => Ok(Value::Bool(true)),
        m::GUID => {
            let b = cur.fixed::<16>("a GUID")?;
            Ok(Value::String(guid_value(&b)))
        }
        m::BINARY_FIRST..=m::BINARY_LAST => {
            refused(at, mk, "a binary blob, which has no JSON value")
        }
        m::NUMBERS_C1 | m::NUMBERS_C2 => {
            if depth >= MAX_DEPTH {
                return fail(
                    at,
                    format!("arrays and objects nest deeper than {MAX_DEPTH} levels"),
                );
            }
            let width = usize::from(mk - m::NUMBERS_C1) + 1;
            let item = cur.u8("a number array's item marker")?;
            let count = cur.uint(width, "a number array's count")?;
            numbers(cur, budget, item, at, count).map(Value::Array)
        }
        m::NUMBER_ARRAYS_C1 | m::NUMBER_ARRAYS_C2 => {
            if depth + 1 >= MAX_DEPTH {
                return fail(
                    at,
                    format!("arrays and objects nest deeper than {MAX_DEPTH} levels"),
                );
            }
            let width = usize::from(mk - m::NUMBER_ARRAYS_C1) + 1;
            let inner = cur.u8("the inner arrays' marker")?;
            let want = [m::NUMBERS_C1, m::NUMBERS_C2][width - 1];
            if inner != want {
                return fail(
                    at,
                    format!(
                        "marker 0x{mk:02X} holds arrays of marker 0x{want:02X}, not 0x{inner:02X}"
                    ),
                );
            }
            let item = cur.u8("a number array's item marker")?;
            let inner_count = cur.uint(width, "a number array's count")?;
            let outer_count = cur.uint(width, "the number of number arrays")?;
            budget.count(at, outer_count)?;
            let mut outer = Vec::with_capacity(outer_count.min(1024));
            for _ in 0..outer_count {
                outer.push(Value::Array(numbers(cur, budget, item, at, inner_count)?));
            }
            Ok(Value::Array(outer))
        }
        _ => fail(at, format!("0x{mk:02X} is not a type marker")),
    }
}

/// `count` bare numbers of one item marker (no marker byte before each).
fn numbers(
    cur: &mut Cursor<'_>,
    budget: &mut Budget,
    item: u8,
    at: usize,
    count: usize,
) -> Result<Vec<Value>, DecodeError> {
    let size = match item {
        m::UINT8 | m::INT8 => 1,
        m::INT16 => 2,
        m::INT32 | m::UINT32 | m::FLOAT32 => 4,
        m::INT64 | m::FLOAT64 => 8,
        _ => {
            return fail(
                at,
                format!("0x{item:02X} is not an item marker of a number array"),
            )
        }
    };
    let needed = count.saturating_mul(size);
    let available = cur.buf.len() - cur.pos;
    if needed > available {
        return fail(
            at,
            format!("the number array declares {needed} bytes but the buffer has {available} left"),
        );
    }
    budget.count(at, count)?;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let mut scratch = Budget {
            values: 0,
            referenced: 0,
        };
        out.push(leaf(item, at, cur, &mut scratch, 0, false)?);
    }
    Ok(out)
}

fn string(cur: &mut Cursor<'_>, at: usize, len: usize) -> Result<Value, DecodeError> {
    let bytes = cur.take(len, "a string")?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(Value::String(s.to_owned())),
        Err(_) => fail(at, "a string is not valid UTF-8"),
    }
}

/// The string at `target`, an earlier offset of the buffer.
fn referenced(
    buf: &[u8],
    at: usize,
    target: usize,
    budget: &mut Budget,
) -> Result<Value, DecodeError> {
    if target >= at {
        return fail(
            at,
            format!("a reference string points at byte {target}, not at an earlier string"),
        );
    }
    let mk = buf[target];
    if (m::REFERENCE_1..=m::REFERENCE_4).contains(&mk) {
        return fail(at, "a reference string points at another reference string");
    }
    let is_string = (m::SYSTEM_STRING..m::REFERENCE_1).contains(&mk);
    if !is_string {
        return fail(
            at,
            format!("a reference string points at byte {target}, which holds marker 0x{mk:02X}, not a string"),
        );
    }
    let mut cur = Cursor {
        buf,
        pos: target + 1,
    };
    let value = leaf(mk, target, &mut cur, budget, 0, false)?;
    let len = value.as_str().map_or(0, str::len);
    budget.referenced += len;
    if budget.referenced > MAX_REFERENCED_BYTES {
        return fail(
            at,
            format!("reference strings repeat more than {MAX_REFERENCED_BYTES} bytes"),
        );
    }
    Ok(value)
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// A GUID string: each byte gives two hex digits, its low nibble first, with dashes before bytes
/// 4, 6, 8 and 10.
fn guid_string(bytes: &[u8; 16], mk: u8) -> String {
    let digits = if mk == m::GUID_UPPER {
        HEX_UPPER
    } else {
        HEX_LOWER
    };
    let mut out = String::with_capacity(38);
    if mk == m::GUID_QUOTED {
        out.push('"');
    }
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(digits[usize::from(b & 0x0F)]));
        out.push(char::from(digits[usize::from(b >> 4)]));
    }
    if mk == m::GUID_QUOTED {
        out.push('"');
    }
    out
}

/// A GUID value: a little-endian u32, two little-endian u16 and eight bytes in order, in the
/// usual 8-4-4-4-12 lower-case text.
fn guid_value(b: &[u8; 16]) -> String {
    let d1 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let d2 = u16::from_le_bytes([b[4], b[5]]);
    let d3 = u16::from_le_bytes([b[6], b[7]]);
    let tail: String = b[10..].iter().map(|x| format!("{x:02x}")).collect();
    format!("{d1:08x}-{d2:04x}-{d3:04x}-{:02x}{:02x}-{tail}", b[8], b[9])
}

/// Why a value cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError(pub String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

/// Encodes `value` as a whole buffer (preamble and value): integers in the smallest form, other
/// numbers as f64, dictionary strings by their marker, containers with byte length and count.
/// Values nesting deeper than `MAX_DEPTH` are refused (the recursion is bounded by it).
pub fn encode(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![PREAMBLE];
    write_value(value, &mut out, 0)?;
    Ok(out)
}

fn write_value(value: &Value, out: &mut Vec<u8>, depth: usize) -> Result<(), EncodeError> {
    match value {
        Value::Null => out.push(m::NULL),
        Value::Bool(false) => out.push(m::FALSE),
        Value::Bool(true) => out.push(m::TRUE),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            let body = nested(depth, |body| {
                items
                    .iter()
                    .try_for_each(|item| write_value(item, body, depth + 1))
            })?;
            write_container(m::ARRAY_EMPTY, items.len(), &body, out);
        }
        Value::Object(map) => {
            let body = nested(depth, |body| {
                map.iter().try_for_each(|(name, v)| {
                    write_string(name, body);
                    write_value(v, body, depth + 1)
                })
            })?;
            write_container(m::OBJECT_EMPTY, map.len(), &body, out);
        }
    }
    Ok(())
}

/// The payload of a container at `depth`, written by `fill` into its own buffer.
fn nested(
    depth: usize,
    fill: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    if depth >= MAX_DEPTH {
        return Err(EncodeError(format!(
            "the value nests arrays and objects deeper than {MAX_DEPTH} levels"
        )));
    }
    let mut body = Vec::new();
    fill(&mut body)?;
    Ok(body)
}

fn write_number(n: &Number, out: &mut Vec<u8>) {
    if let Some(i) = n.as_i64() {
        if (0..i64::from(m::LITERAL_INT_END)).contains(&i) {
            out.push(i as u8);
        } else if let Ok(v) = u8::try_from(i) {
            out.extend_from_slice(&[m::NUMBER_U8, v]);
        } else if let Ok(v) = i16::try_from(i) {
            out.push(m::NUMBER_I16);
            out.extend_from_slice(&v.to_le_bytes());
        } else if let Ok(v) = i32::try_from(i) {
            out.push(m::NUMBER_I32);
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.push(m::NUMBER_I64);
            out.extend_from_slice(&i.to_le_bytes());
        }
    } else if let Some(u) = n.as_u64() {
        out.push(m::NUMBER_U64);
        out.extend_from_slice(&u.to_le_bytes());
    } else {
        // serde_json numbers are finite.
        out.push(m::NUMBER_DOUBLE);
        out.extend_from_slice(&n.as_f64().unwrap_or(0.0).to_le_bytes());
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    if let Some(i) = SYSTEM_STRINGS.iter().position(|d| *d == s) {
        out.push(m::SYSTEM_STRING + i as u8);
        return;
    }
    let len = s.len();
    if len < 64 {
        out.push(m::SHORT_STRING | len as u8);
    } else if let Ok(l) = u8::try_from(len) {
        out.extend_from_slice(&[m::STRING_1, l]);
    } else if let Ok(l) = u16::try_from(len) {
        out.push(m::STRING_2);
        out.extend_from_slice(&l.to_le_bytes());
    } else {
        out.push(m::STRING_4);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

/// `empty` is the container's empty marker; the byte-length-and-count forms follow it at +5..+7.
fn write_container(empty: u8, count: usize, body: &[u8], out: &mut Vec<u8>) {
    if count == 0 {
        out.push(empty);
        return;
    }
    let len = body.len();
    if let (Ok(l), Ok(c)) = (u8::try_from(len), u8::try_from(count)) {
        out.extend_from_slice(&[empty + 5, l, c]);
    } else if let (Ok(l), Ok(c)) = (u16::try_from(len), u16::try_from(count)) {
        out.push(empty + 6);
        out.extend_from_slice(&l.to_le_bytes());
        out.extend_from_slice(&c.to_le_bytes());
    } else {
        out.push(empty + 7);
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(&(count as u32).to_le_bytes());
    }
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests;
