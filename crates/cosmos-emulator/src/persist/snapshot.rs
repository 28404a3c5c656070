//! Writing a snapshot: to a temporary name, fsync'd, read back and checked (every record whole,
//! readable, the last the end record), then renamed and the directory fsync'd. Only then may the
//! files it replaces go; on any failure the temporary file is removed and nothing else changes.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use super::dir::{snapshot_path, sync_dir};
use super::frame;
use super::record::Record;
use crate::scripts::Scripts;
use crate::store::Store;

/// Whether `bytes` are a whole snapshot: Err says what is wrong.
pub(super) fn check(bytes: &[u8]) -> Result<(), String> {
    let decoded = frame::decode(bytes);
    if let Some(why) = decoded.torn {
        return Err(format!("at offset {}: {why}", decoded.good_len));
    }
    let mut last = None;
    for payload in &decoded.records {
        last = Some(
            serde_json::from_slice::<Record>(payload)
                .map_err(|e| format!("a record cannot be read back ({e})"))?,
        );
    }
    match last {
        Some(Record::End) => Ok(()),
        _ => Err("it does not end with its end record".into()),
    }
}

/// Writes `snapshot-g` of `dir`: the catalog, then every container's scripts and every
/// database's users, then each container's items and conflicts feed, then the end record.
pub(super) fn write(dir: &Path, g: u64, store: &Store, scripts: &Scripts) -> Result<(), String> {
    let tmp = dir.join(format!("snapshot-{g:016x}.tmp"));
    let result = write_checked(&tmp, store, scripts).and_then(|()| {
        fs::rename(&tmp, snapshot_path(dir, g))
            .map_err(|e| format!("cannot rename the snapshot {}: {e}", tmp.display()))?;
        sync_dir(dir)
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_checked(tmp: &Path, store: &Store, scripts: &Scripts) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write the snapshot {}: {e}", tmp.display());
    let mut file = std::io::BufWriter::new(File::create(tmp).map_err(fail)?);
    let put = |record: &Record, file: &mut std::io::BufWriter<File>| -> Result<(), String> {
        let payload = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        let mut framed = Vec::with_capacity(payload.len() + 8);
        frame::encode(&payload, &mut framed);
        file.write_all(&framed).map_err(fail)
    };
    let catalog = store.catalog_image();
    put(&Record::catalog(&catalog, &store.offers.list()), &mut file)?;
    let containers = store.containers_by_rid();
    for container in containers.values() {
        let kept = scripts.kept(&container.rid_bytes);
        if !kept.is_empty() {
            put(&Record::scripts(&container.rid, &kept), &mut file)?;
        }
    }
    for db in store.users.databases() {
        let kept = store.users.kept(&db);
        if !kept.is_empty() {
            put(&Record::users(&db, &kept), &mut file)?;
        }
    }
    for db in &catalog {
        for image in &db.containers {
            let Some(container) = containers.values().find(|c| c.rid_bytes == image.rid_bytes)
            else {
                continue;
            };
            for chunk in container.latest_items().chunks(1024) {
                put(&Record::items(&container.rid, chunk), &mut file)?;
            }
            let (next, conflicts) = container.conflicts.kept();
            if next > 0 {
                put(
                    &Record::conflicts(&container.rid, next, &conflicts, &[]),
                    &mut file,
                )?;
            }
        }
    }
    put(&Record::End, &mut file)?;
    let file = file.into_inner().map_err(|e| fail(e.into_error()))?;
    file.sync_all().map_err(fail)?;
    drop(file);
    let bytes = fs::read(tmp).map_err(fail)?;
    check(&bytes).map_err(|why| {
        format!(
            "the snapshot {} did not read back whole: {why}",
            tmp.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            frame::encode(&serde_json::to_vec(r).unwrap(), &mut out);
        }
        out
    }

    #[test]
    fn only_a_whole_snapshot_passes_the_check() {
        let end = Record::End;
        let users = Record::Users {
            database: "d".into(),
            users: vec![],
        };
        assert!(check(&framed(&[Record::End])).is_ok());
        let whole = framed(&[users, end]);
        assert!(check(&whole).is_ok());
        let no_end = framed(&[Record::Users {
            database: "d".into(),
            users: vec![],
        }]);
        assert!(check(&no_end).unwrap_err().contains("end record"));
        assert!(check(&whole[..whole.len() - 1])
            .unwrap_err()
            .contains("offset"));
        let mut flipped = whole.clone();
        flipped[10] ^= 1;
        assert!(check(&flipped).is_err());
        let mut unreadable = Vec::new();
        frame::encode(b"{\"kind\":\"nothing\"}", &mut unreadable);
        frame::encode(&serde_json::to_vec(&Record::End).unwrap(), &mut unreadable);
        assert!(check(&unreadable).unwrap_err().contains("read back"));
        assert!(check(&[]).is_err());
    }
}
