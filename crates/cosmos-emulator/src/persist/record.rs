//! What a data directory's records say: the whole catalog (databases, container definitions,
//! offers) after a change to it, one container's scripts or one database's users and permissions
//! after a change to them, the item writes of one commit, or a change of one container's
//! conflicts feed.

use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::epk::Epk;
use crate::protocol::ScriptKind;
use crate::scripts::Script;
use crate::store::users::{PermissionImage, UserImage};
use crate::store::{ContainerImage, DatabaseImage, DocKey, KeptDoc, Offer, StoredDoc, Throughput};

/// One record.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Record {
    /// The catalog as it is after a change (it replaces the one before).
    Catalog {
        databases: Vec<DatabaseRecord>,
        offers: Vec<OfferRecord>,
    },
    /// The scripts of the container with `_rid` `container` after a change to them (they replace
    /// the ones before).
    Scripts {
        container: String,
        scripts: Vec<ScriptRecord>,
    },
    /// The users and permissions of the database with `_rid` `database` after a change to them
    /// (they replace the ones before).
    Users {
        database: String,
        users: Vec<UserRecord>,
    },
    /// The writes of one commit in the container with `_rid` `container`.
    Items {
        container: String,
        writes: Vec<ItemRecord>,
    },
    /// Conflicts added to (or deleted from) the conflicts feed of the container with `_rid`
    /// `container`, after which its counter of conflicts ever recorded is `next` (0 in a record of
    /// a deletion). The log has one record per conflict added or deleted; a snapshot one record
    /// with the whole feed.
    Conflicts {
        container: String,
        next: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        added: Vec<ConflictRecord>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed: Vec<String>,
    },
    /// The last record of a complete snapshot.
    End,
}

/// A conflict: its id and resource JSON as the feed serves it.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct ConflictRecord {
    pub id: String,
    pub body: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct DatabaseRecord {
    pub id: String,
    pub rid: String,
    pub body: String,
    pub etag: String,
    pub containers: Vec<ContainerRecord>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct ContainerRecord {
    pub id: String,
    pub rid: String,
    pub body: String,
    pub etag: String,
    /// Its partition key ranges (restored evenly split; splits are not kept).
    pub partitions: usize,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct OfferRecord {
    pub id: String,
    pub resource: String,
    pub offer_resource_id: String,
    pub rid: String,
    pub content: serde_json::Value,
    pub etag: String,
    pub ts: u64,
    /// When its throughput buckets last changed, in Unix seconds (absent: not since the data
    /// directory began keeping it), so the once-per-interval rule holds across a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets_changed: Option<u64>,
}

/// A script: its kind (`sprocs`, `triggers`, `udfs`), `_rid` bytes and resource JSON.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct ScriptRecord {
    pub kind: String,
    pub rid: String,
    pub json: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct UserRecord {
    pub id: String,
    pub rid: String,
    pub body: String,
    pub etag: String,
    pub next_permission: u32,
    pub permissions: Vec<PermissionRecord>,
}

/// A permission (its `_token` is made anew at load).
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct PermissionRecord {
    pub id: String,
    pub rid: String,
    pub body: String,
    pub etag: String,
}

/// An item's new version (`doc` None: deleted).
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct ItemRecord {
    /// The effective partition key's parts, in hex.
    pub epk: Vec<String>,
    pub id: String,
    pub doc: Option<DocRecord>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub(crate) struct DocRecord {
    pub body: String,
    pub etag: String,
    pub rid: String,
    /// Written with `x-ms-indexing-directive: Exclude` (left out when false, as records written
    /// before it was kept are read).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unindexed: bool,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(text: &str) -> Result<[u8; N], String> {
    let bad = || format!("{text:?} is not {N} bytes of hex");
    if text.len() != 2 * N || !text.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn text(body: &Bytes) -> String {
    String::from_utf8_lossy(body).into_owned()
}

impl Record {
    /// The catalog record of these images and offers.
    pub(crate) fn catalog(databases: &[DatabaseImage], offers: &[Offer]) -> Record {
        Record::Catalog {
            databases: databases
                .iter()
                .map(|d| DatabaseRecord {
                    id: d.id.clone(),
                    rid: hex(&d.rid_bytes),
                    body: text(&d.body),
                    etag: d.etag.clone(),
                    containers: d
                        .containers
                        .iter()
                        .map(|c| ContainerRecord {
                            id: c.id.clone(),
                            rid: hex(&c.rid_bytes),
                            body: text(&c.body),
                            etag: c.etag.clone(),
                            partitions: c.partitions,
                        })
                        .collect(),
                })
                .collect(),
            offers: offers
                .iter()
                .map(|o| OfferRecord {
                    id: o.id.clone(),
                    resource: o.resource.clone(),
                    offer_resource_id: o.offer_resource_id.clone(),
                    rid: hex(&o.rid_bytes),
                    content: o.content(),
                    etag: o.etag.clone(),
                    ts: o.ts,
                    buckets_changed: o.buckets_changed_at.map(|at| {
                        crate::protocol::ids::unix_seconds().saturating_sub(at.elapsed().as_secs())
                    }),
                })
                .collect(),
        }
    }

    /// The scripts record of one container.
    pub(crate) fn scripts(container: &str, scripts: &[Arc<Script>]) -> Record {
        Record::Scripts {
            container: container.to_owned(),
            scripts: scripts
                .iter()
                .map(|s| ScriptRecord {
                    kind: s.kind.segment().to_owned(),
                    rid: hex(&s.rid),
                    json: text(&s.json),
                })
                .collect(),
        }
    }

    /// The users record of one database.
    pub(crate) fn users(database: &str, users: &[UserImage]) -> Record {
        Record::Users {
            database: database.to_owned(),
            users: users
                .iter()
                .map(|u| UserRecord {
                    id: u.id.clone(),
                    rid: hex(&u.rid_bytes),
                    body: text(&u.body),
                    etag: u.etag.clone(),
                    next_permission: u.next_permission,
                    permissions: u
                        .permissions
                        .iter()
                        .map(|p| PermissionRecord {
                            id: p.id.clone(),
                            rid: hex(&p.rid_bytes),
                            body: text(&p.body),
                            etag: p.etag.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// The items record of one commit.
    pub(crate) fn items(container: &str, writes: &[(DocKey, Option<Arc<StoredDoc>>)]) -> Record {
        Record::Items {
            container: container.to_owned(),
            writes: writes
                .iter()
                .map(|(key, doc)| ItemRecord {
                    epk: key
                        .epk
                        .parts()
                        .iter()
                        .map(|p| format!("{p:032x}"))
                        .collect(),
                    id: key.id.clone(),
                    doc: doc.as_ref().map(|d| DocRecord {
                        body: text(&d.body),
                        etag: d.etag.clone(),
                        rid: hex(&d.rid),
                        unindexed: !d.indexed,
                    }),
                })
                .collect(),
        }
    }
}

impl Record {
    /// The conflicts record of container `container` whose counter is `next`: conflicts `added`
    /// (id and resource JSON), ids `removed`.
    pub(crate) fn conflicts(
        container: &str,
        next: u64,
        added: &[(String, Bytes)],
        removed: &[&str],
    ) -> Record {
        Record::Conflicts {
            container: container.to_owned(),
            next,
            added: added
                .iter()
                .map(|(id, body)| ConflictRecord {
                    id: id.clone(),
                    body: text(body),
                })
                .collect(),
            removed: removed.iter().map(|id| (*id).to_owned()).collect(),
        }
    }
}

/// A conflicts record's conflicts, each checked to be a JSON object with its id.
pub(super) fn conflicts(records: &[ConflictRecord]) -> Result<Vec<(String, Bytes)>, String> {
    records
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body)
                .map_err(|e| format!("kept conflict {:?} is not JSON: {e}", r.id))?;
            if body.get("id").and_then(serde_json::Value::as_str) != Some(r.id.as_str()) {
                return Err(format!("kept conflict {:?} does not carry its id", r.id));
            }
            Ok((r.id.clone(), Bytes::from(r.body.clone())))
        })
        .collect()
}

/// A catalog record's databases as images.
pub(super) fn database_images(databases: &[DatabaseRecord]) -> Result<Vec<DatabaseImage>, String> {
    databases
        .iter()
        .map(|d| {
            Ok(DatabaseImage {
                id: d.id.clone(),
                rid_bytes: unhex(&d.rid)?,
                body: Bytes::from(d.body.clone()),
                etag: d.etag.clone(),
                containers: d
                    .containers
                    .iter()
                    .map(|c| {
                        Ok(ContainerImage {
                            id: c.id.clone(),
                            rid_bytes: unhex(&c.rid)?,
                            body: Bytes::from(c.body.clone()),
                            etag: c.etag.clone(),
                            partitions: c.partitions,
                        })
                    })
                    .collect::<Result<_, String>>()?,
            })
        })
        .collect()
}

/// A catalog record's offers.
pub(super) fn offers(records: &[OfferRecord]) -> Result<Vec<Offer>, String> {
    records
        .iter()
        .map(|o| {
            Ok(Offer {
                id: o.id.clone(),
                resource: o.resource.clone(),
                offer_resource_id: o.offer_resource_id.clone(),
                rid_bytes: (0..o.rid.len() / 2)
                    .map(|i| u8::from_str_radix(o.rid.get(2 * i..2 * i + 2).unwrap_or("zz"), 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| format!("offer {:?} has a bad resource id", o.id))?,
                throughput: Throughput::from_content(&o.content)?,
                buckets: crate::store::throughput_buckets::from_content(&o.content)?,
                buckets_changed_at: o.buckets_changed.and_then(|at| {
                    let ago = crate::protocol::ids::unix_seconds().saturating_sub(at);
                    tokio::time::Instant::now().checked_sub(std::time::Duration::from_secs(ago))
                }),
                etag: o.etag.clone(),
                ts: o.ts,
                replace_pending: false,
            })
        })
        .collect()
}

/// A scripts record's scripts, checked again as definitions.
pub(super) fn scripts(records: &[ScriptRecord]) -> Result<Vec<Script>, String> {
    records
        .iter()
        .map(|r| {
            let kind = ScriptKind::from_segment(&r.kind)
                .ok_or_else(|| format!("{:?} is not a kind of script", r.kind))?;
            crate::scripts::definition::restore(kind, Bytes::from(r.json.clone()), unhex(&r.rid)?)
        })
        .collect()
}

/// A users record's users.
pub(super) fn users(records: &[UserRecord]) -> Result<Vec<UserImage>, String> {
    records
        .iter()
        .map(|u| {
            Ok(UserImage {
                id: u.id.clone(),
                rid_bytes: unhex(&u.rid)?,
                body: Bytes::from(u.body.clone()),
                etag: u.etag.clone(),
                next_permission: u.next_permission,
                permissions: u
                    .permissions
                    .iter()
                    .map(|p| {
                        Ok(PermissionImage {
                            id: p.id.clone(),
                            rid_bytes: unhex(&p.rid)?,
                            body: Bytes::from(p.body.clone()),
                            etag: p.etag.clone(),
                        })
                    })
                    .collect::<Result<_, String>>()?,
            })
        })
        .collect()
}

/// An item record's key and version.
pub(super) fn item(record: &ItemRecord) -> Result<(DocKey, Option<KeptDoc>), String> {
    let parts = record
        .epk
        .iter()
        .map(|p| u128::from_str_radix(p, 16).map_err(|_| format!("bad EPK part {p:?}")))
        .collect::<Result<Vec<_>, _>>()?;
    let epk = Epk::from_parts(&parts).ok_or("an EPK with too many parts")?;
    let doc = match &record.doc {
        None => None,
        Some(d) => Some((
            Bytes::from(d.body.clone()),
            d.etag.clone(),
            unhex(&d.rid)?,
            !d.unindexed,
        )),
    };
    Ok((
        DocKey {
            epk,
            id: record.id.clone(),
        },
        doc,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_writes_read_back_as_written() {
        let key = DocKey {
            epk: Epk::from_parts(&[u128::MAX, 7]).unwrap(),
            id: "a/b\u{e9}".into(),
        };
        let doc = Arc::new(StoredDoc {
            body: Bytes::from_static(br#"{"id":"a/b\u00e9","n":1}"#),
            etag: "\"e1\"".into(),
            rid: [9; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: true,
        });
        let gone = DocKey {
            epk: Epk::single(3),
            id: "gone".into(),
        };
        let record = Record::items(
            "coll",
            &[(key.clone(), Some(doc.clone())), (gone.clone(), None)],
        );
        let text = serde_json::to_vec(&record).unwrap();
        let Record::Items { container, writes } = serde_json::from_slice(&text).unwrap() else {
            panic!("not an items record")
        };
        assert_eq!(container, "coll");
        let (k, d) = item(&writes[0]).unwrap();
        assert_eq!(k, key);
        assert_eq!(d, Some((doc.body.clone(), doc.etag.clone(), doc.rid, true)));
        assert_eq!(item(&writes[1]).unwrap(), (gone, None));
    }

    #[test]
    fn an_item_kept_out_of_the_index_stays_out() {
        let key = DocKey {
            epk: Epk::single(5),
            id: "x".into(),
        };
        let doc = Arc::new(StoredDoc {
            body: Bytes::from_static(br#"{"id":"x"}"#),
            etag: "\"e\"".into(),
            rid: [1; 16],
            unique: Box::default(),
            vectors: Default::default(),
            indexed: false,
        });
        let text = serde_json::to_string(&Record::items("coll", &[(key, Some(doc))])).unwrap();
        assert!(text.contains("\"unindexed\":true"), "{text}");
        let Record::Items { writes, .. } = serde_json::from_str(&text).unwrap() else {
            panic!("not an items record")
        };
        assert_eq!(item(&writes[0]).unwrap().1.map(|d| d.3), Some(false));
        // Records without the field (every indexed item) read back indexed.
        let plain = text.replace(",\"unindexed\":true", "");
        let Record::Items { writes, .. } = serde_json::from_str(&plain).unwrap() else {
            panic!("not an items record")
        };
        assert_eq!(item(&writes[0]).unwrap().1.map(|d| d.3), Some(true));
    }

    #[test]
    fn damaged_fields_are_refused_not_guessed() {
        assert!(unhex::<4>("0001").is_err());
        assert!(unhex::<2>("zz00").is_err());
        assert!(unhex::<2>("é0").is_err());
        let bad_epk = ItemRecord {
            epk: vec!["not hex".into()],
            id: "x".into(),
            doc: None,
        };
        assert!(item(&bad_epk).is_err());
    }

    #[test]
    fn scripts_and_users_read_back_as_written() {
        let mut map = serde_json::Map::new();
        map.insert("id".into(), "t".into());
        map.insert("body".into(), "function () {}".into());
        map.insert("triggerType".into(), "Pre".into());
        map.insert("triggerOperation".into(), "All".into());
        let checked = crate::scripts::definition::check(ScriptKind::Trigger, &map).unwrap();
        let script = Arc::new(crate::scripts::definition::seal(
            ScriptKind::Trigger,
            map,
            checked,
            [7; 16],
            "self/".into(),
        ));
        let text =
            serde_json::to_vec(&Record::scripts("coll", std::slice::from_ref(&script))).unwrap();
        let Record::Scripts {
            container,
            scripts: kept,
        } = serde_json::from_slice(&text).unwrap()
        else {
            panic!("not a scripts record")
        };
        assert_eq!(container, "coll");
        let back = scripts(&kept).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(
            (back[0].kind, back[0].rid),
            (ScriptKind::Trigger, script.rid)
        );
        assert_eq!((&back[0].json, &back[0].etag), (&script.json, &script.etag));
        assert_eq!(back[0].trigger, script.trigger);
        let bad_kind = ScriptRecord {
            kind: "docs".into(),
            ..kept.into_iter().next().unwrap()
        };
        assert!(scripts(&[bad_kind])
            .unwrap_err()
            .contains("not a kind of script"));

        let user = UserImage {
            id: "u".into(),
            rid_bytes: [1, 2, 3, 4, 0x40, 0, 0, 1],
            body: Bytes::from_static(br#"{"id":"u"}"#),
            etag: "\"e\"".into(),
            next_permission: 3,
            permissions: vec![PermissionImage {
                id: "p".into(),
                rid_bytes: [9; 12],
                body: Bytes::from_static(br#"{"id":"p"}"#),
                etag: "\"f\"".into(),
            }],
        };
        let text = serde_json::to_vec(&Record::users("db", std::slice::from_ref(&user))).unwrap();
        let Record::Users {
            database,
            users: kept,
        } = serde_json::from_slice(&text).unwrap()
        else {
            panic!("not a users record")
        };
        assert_eq!(database, "db");
        assert_eq!(users(&kept).unwrap(), vec![user]);
    }

    #[test]
    fn conflicts_read_back_as_written_and_damaged_ones_are_refused() {
        let body = Bytes::from_static(br#"{"id":"AAAAAAAAAAAAAAAAAAAAAQ==","_ts":5}"#);
        let id = "AAAAAAAAAAAAAAAAAAAAAQ==".to_owned();
        let text = serde_json::to_vec(&Record::conflicts(
            "coll",
            7,
            &[(id.clone(), body.clone())],
            &[],
        ))
        .unwrap();
        let Record::Conflicts {
            container,
            next,
            added,
            removed,
        } = serde_json::from_slice(&text).unwrap()
        else {
            panic!("not a conflicts record")
        };
        assert_eq!((container.as_str(), next), ("coll", 7));
        assert!(removed.is_empty());
        assert_eq!(conflicts(&added).unwrap(), vec![(id.clone(), body)]);
        let text = serde_json::to_string(&Record::conflicts("coll", 0, &[], &[&id])).unwrap();
        assert!(!text.contains("added"), "{text}");
        let Record::Conflicts { removed, added, .. } = serde_json::from_str(&text).unwrap() else {
            panic!("not a conflicts record")
        };
        assert_eq!((removed, added.len()), (vec![id.clone()], 0));
        let not_json = ConflictRecord {
            id: id.clone(),
            body: "{".into(),
        };
        assert!(conflicts(&[not_json]).unwrap_err().contains("not JSON"));
        let other_id = ConflictRecord {
            id,
            body: r#"{"id":"x"}"#.into(),
        };
        assert!(conflicts(&[other_id]).unwrap_err().contains("its id"));
    }
}
