//! Users of a database and their permissions (`/dbs/{db}/users/{u}/permissions/{p}`).
//!
//! A permission grants `Read` or `All` on a resource link (a container, an item, ...) and,
//! optionally, only on the items of one partition key value. Each permission has a resource
//! token (`_token`) a client can use as its credential; the token names the permission, so it
//! stops working once the permission or its user is deleted, and it carries what the
//! permission grants at the time of the request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::RwLock;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::document::{seal, Sealed};
use crate::protocol::ids::encode_rid;
use crate::protocol::ApiError;

/// Most users in one database, and permissions of one user.
pub(crate) const MAX_USERS: usize = 10_000;
pub(crate) const MAX_PERMISSIONS: usize = 1_000;

/// What a permission allows on its resource (`"Read"` or `"All"`, in any letter case, as SDKs
/// send them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PermissionMode {
    Read,
    All,
}

impl<'de> Deserialize<'de> for PermissionMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.eq_ignore_ascii_case("read") {
            Ok(Self::Read)
        } else if text.eq_ignore_ascii_case("all") {
            Ok(Self::All)
        } else {
            Err(serde::de::Error::custom(format!(
                "permissionMode {text:?} is neither \"Read\" nor \"All\""
            )))
        }
    }
}

/// What a permission grants.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Grant {
    pub mode: PermissionMode,
    /// The resource link, without leading or trailing '/'.
    pub resource: String,
    /// The partition key value (as a JSON array) the grant is limited to, if any.
    pub partition_key: Option<Value>,
}

/// The fields of a permission body the emulator reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PermissionFields {
    permission_mode: PermissionMode,
    resource: String,
    #[serde(default)]
    resource_partition_key: Option<Value>,
}

/// A permission body's grant; 400 saying what is wrong.
pub(crate) fn grant_of(map: &Map<String, Value>) -> Result<Grant, ApiError> {
    let fields: PermissionFields =
        serde_json::from_value(Value::Object(map.clone())).map_err(|e| {
            ApiError::bad_request(format!(
                "A permission needs permissionMode (\"Read\" or \"All\") and resource (a link): {e}"
            ))
        })?;
    let resource = fields.resource.trim_matches('/').to_owned();
    if resource.is_empty() {
        return Err(ApiError::bad_request(
            "The permission's resource must name a resource link.",
        ));
    }
    let partition_key = match fields.resource_partition_key {
        None | Some(Value::Null) => None,
        Some(Value::Array(values)) => Some(Value::Array(values)),
        Some(single) => Some(Value::Array(vec![single])),
    };
    Ok(Grant {
        mode: fields.permission_mode,
        resource,
        partition_key,
    })
}

struct Permission {
    id: String,
    rid: String,
    rid_bytes: [u8; 12],
    body: Bytes,
    etag: String,
    grant: Grant,
}

struct User {
    id: String,
    rid: String,
    rid_bytes: [u8; 8],
    body: Bytes,
    etag: String,
    permissions: Vec<Permission>,
    next_permission: u32,
}

/// A resource's body and etag.
pub(crate) struct Stored {
    pub body: Bytes,
    pub etag: String,
}

/// Whether a write made a resource or replaced one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    Created,
    Replaced,
}

/// A user as a data directory keeps it, with its permissions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UserImage {
    pub id: String,
    pub rid_bytes: [u8; 8],
    pub body: Bytes,
    pub etag: String,
    /// The ordinal the user's next permission gets.
    pub next_permission: u32,
    pub permissions: Vec<PermissionImage>,
}

/// A permission as a data directory keeps it (its grant is read again from its body).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PermissionImage {
    pub id: String,
    pub rid_bytes: [u8; 12],
    pub body: Bytes,
    pub etag: String,
}

/// Every database's users, by the database's `_rid` (a database created again under the same
/// name starts with none).
#[derive(Default)]
pub(crate) struct Users {
    by_database: RwLock<HashMap<String, Vec<User>>>,
    next_user: AtomicU32,
}

fn poisoned() -> ApiError {
    ApiError::new(500, "The emulator's user table lock was poisoned.")
}

fn find<T>(items: &[T], name: &str, key: impl Fn(&T) -> (&str, &str)) -> Option<usize> {
    items
        .iter()
        .position(|i| key(i).0 == name)
        .or_else(|| items.iter().position(|i| key(i).1 == name))
}

fn user_key(u: &User) -> (&str, &str) {
    (&u.id, &u.rid)
}

fn permission_key(p: &Permission) -> (&str, &str) {
    (&p.id, &p.rid)
}

/// The resource token of permission `perm_rid` of user `user_rid` in database `db_rid` (what
/// [`crate::auth::AuthPolicy::resource_token`] signs): `db.user.permission`.
pub(crate) fn token_id(db_rid: &str, user_rid: &str, perm_rid: &str) -> String {
    format!("{db_rid}.{user_rid}.{perm_rid}")
}

impl Users {
    /// The users of database `db_rid`, as their bodies.
    pub(crate) fn list(&self, db_rid: &str) -> Result<Vec<Bytes>, ApiError> {
        let map = self.by_database.read().map_err(|_| poisoned())?;
        Ok(map
            .get(db_rid)
            .map(|users| users.iter().map(|u| u.body.clone()).collect())
            .unwrap_or_default())
    }

    /// Drops the users of a deleted database (their tokens stop working).
    pub(crate) fn remove_database(&self, db_rid: &str) {
        if let Ok(mut all) = self.by_database.write() {
            all.remove(db_rid);
        }
    }

    /// User `name` (id or `_rid`).
    pub(crate) fn read(&self, db_rid: &str, name: &str) -> Result<Stored, ApiError> {
        let map = self.by_database.read().map_err(|_| poisoned())?;
        let users = map.get(db_rid).ok_or_else(ApiError::missing_entity)?;
        let i = find(users, name, user_key).ok_or_else(ApiError::missing_entity)?;
        Ok(Stored {
            body: users[i].body.clone(),
            etag: users[i].etag.clone(),
        })
    }

    /// Creates user `id` from `map`; with `upsert`, replaces it when it exists. 409 when it
    /// exists and this is no upsert.
    pub(crate) fn write(
        &self,
        db_rid: &str,
        db_rid_bytes: [u8; 4],
        id: String,
        map: Map<String, Value>,
        upsert: bool,
    ) -> Result<(Written, Stored), ApiError> {
        let mut all = self.by_database.write().map_err(|_| poisoned())?;
        let users = all.entry(db_rid.to_owned()).or_default();
        if let Some(i) = users.iter().position(|u| u.id == id) {
            if !upsert {
                return Err(ApiError::already_exists());
            }
            let user = &mut users[i];
            reseal_user(user, db_rid, map);
            return Ok((Written::Replaced, stored_user(user)));
        }
        if users.len() >= MAX_USERS {
            return Err(ApiError::bad_request(format!(
                "A database holds at most {MAX_USERS} users."
            )));
        }
        let ordinal = self.next_user.fetch_add(1, Ordering::Relaxed) + 1;
        let mut rid_bytes = [0u8; 8];
        rid_bytes[..4].copy_from_slice(&db_rid_bytes);
        // Containers set the high bit of these bytes; users set the next one instead.
        rid_bytes[4..].copy_from_slice(&((ordinal & 0x3FFF_FFFF) | 0x4000_0000).to_be_bytes());
        let mut user = User {
            id,
            rid: encode_rid(&rid_bytes),
            rid_bytes,
            body: Bytes::new(),
            etag: String::new(),
            permissions: Vec::new(),
            next_permission: 1,
        };
        reseal_user(&mut user, db_rid, map);
        let stored = stored_user(&user);
        users.push(user);
        Ok((Written::Created, stored))
    }

    /// Replaces user `name` with `map` (whose `id` may rename it); 404 when it does not exist,
    /// 409 when the new id is another user's.
    pub(crate) fn replace(
        &self,
        db_rid: &str,
        name: &str,
        id: String,
        map: Map<String, Value>,
    ) -> Result<Stored, ApiError> {
        let mut all = self.by_database.write().map_err(|_| poisoned())?;
        let users = all.get_mut(db_rid).ok_or_else(ApiError::missing_entity)?;
        let i = find(users, name, user_key).ok_or_else(ApiError::missing_entity)?;
        if users.iter().enumerate().any(|(j, u)| j != i && u.id == id) {
            return Err(ApiError::already_exists());
        }
        let user = &mut users[i];
        user.id = id;
        reseal_user(user, db_rid, map);
        Ok(stored_user(user))
    }

    /// Deletes user `name` and its permissions (their tokens stop working).
    pub(crate) fn delete(&self, db_rid: &str, name: &str) -> Result<(), ApiError> {
        let mut all = self.by_database.write().map_err(|_| poisoned())?;
        let users = all.get_mut(db_rid).ok_or_else(ApiError::missing_entity)?;
        let i = find(users, name, user_key).ok_or_else(ApiError::missing_entity)?;
        users.remove(i);
        Ok(())
    }

    /// The permissions of user `user`, as their bodies.
    pub(crate) fn permissions(&self, db_rid: &str, user: &str) -> Result<Vec<Bytes>, ApiError> {
        self.with_user(db_rid, user, |u| {
            Ok(u.permissions.iter().map(|p| p.body.clone()).collect())
        })
    }

    /// The user's `_rid`; 404 naming the user when it does not exist.
    pub(crate) fn user_rid(&self, db_rid: &str, user: &str) -> Result<String, ApiError> {
        self.with_user(db_rid, user, |u| Ok(u.rid.clone()))
    }

    /// Permission `name` of user `user`.
    pub(crate) fn permission(
        &self,
        db_rid: &str,
        user: &str,
        name: &str,
    ) -> Result<Stored, ApiError> {
        self.with_user(db_rid, user, |u| {
            let i =
                find(&u.permissions, name, permission_key).ok_or_else(ApiError::missing_entity)?;
            let p = &u.permissions[i];
            Ok(Stored {
                body: p.body.clone(),
                etag: p.etag.clone(),
            })
        })
    }

    /// Creates permission `id` of user `user` (with `upsert`, replaces it when it exists). `token`
    /// makes the permission's resource token from its identity. 409 when the id exists (and this
    /// is no upsert) or another permission of the user is on the same resource.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_permission(
        &self,
        db_rid: &str,
        user: &str,
        id: String,
        map: Map<String, Value>,
        grant: Grant,
        upsert: bool,
        token: &dyn Fn(&str) -> String,
    ) -> Result<(Written, Stored), ApiError> {
        self.with_user_mut(db_rid, user, |u| {
            let existing = u.permissions.iter().position(|p| p.id == id);
            if existing.is_some() && !upsert {
                return Err(ApiError::already_exists());
            }
            let same_resource = u
                .permissions
                .iter()
                .enumerate()
                .any(|(j, p)| Some(j) != existing && p.grant.resource == grant.resource);
            if same_resource {
                return Err(ApiError::conflict(
                    "The user already has a permission on this resource.",
                ));
            }
            let user_rid = u.rid.clone();
            if let Some(i) = existing {
                let p = &mut u.permissions[i];
                p.grant = grant;
                reseal_permission(p, db_rid, &user_rid, map, token);
                return Ok((Written::Replaced, stored_permission(p)));
            }
            if u.permissions.len() >= MAX_PERMISSIONS {
                return Err(ApiError::bad_request(format!(
                    "A user holds at most {MAX_PERMISSIONS} permissions."
                )));
            }
            let mut rid_bytes = [0u8; 12];
            rid_bytes[..8].copy_from_slice(&u.rid_bytes);
            rid_bytes[8..].copy_from_slice(&u.next_permission.to_be_bytes());
            u.next_permission += 1;
            let mut p = Permission {
                id,
                rid: encode_rid(&rid_bytes),
                rid_bytes,
                body: Bytes::new(),
                etag: String::new(),
                grant,
            };
            reseal_permission(&mut p, db_rid, &user_rid, map, token);
            let stored = stored_permission(&p);
            u.permissions.push(p);
            Ok((Written::Created, stored))
        })
    }

    /// Replaces permission `name` (its `id` may rename it); 404 when it does not exist, 409 when
    /// the new id or the resource is another permission's.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn replace_permission(
        &self,
        db_rid: &str,
        user: &str,
        name: &str,
        id: String,
        map: Map<String, Value>,
        grant: Grant,
        token: &dyn Fn(&str) -> String,
    ) -> Result<Stored, ApiError> {
        self.with_user_mut(db_rid, user, |u| {
            let i =
                find(&u.permissions, name, permission_key).ok_or_else(ApiError::missing_entity)?;
            let clash = u
                .permissions
                .iter()
                .enumerate()
                .any(|(j, p)| j != i && (p.id == id || p.grant.resource == grant.resource));
            if clash {
                return Err(ApiError::already_exists());
            }
            let user_rid = u.rid.clone();
            let p = &mut u.permissions[i];
            p.id = id;
            p.grant = grant;
            reseal_permission(p, db_rid, &user_rid, map, token);
            Ok(stored_permission(p))
        })
    }

    /// Deletes permission `name` of user `user` (its token stops working).
    pub(crate) fn delete_permission(
        &self,
        db_rid: &str,
        user: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        self.with_user_mut(db_rid, user, |u| {
            let i =
                find(&u.permissions, name, permission_key).ok_or_else(ApiError::missing_entity)?;
            u.permissions.remove(i);
            Ok(())
        })
    }

    /// What the permission a resource token names grants now (`None`: it no longer exists).
    pub(crate) fn grant(&self, token_id: &str) -> Option<Grant> {
        let mut parts = token_id.split('.');
        let (db, user, perm) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let all = self.by_database.read().ok()?;
        let u = all.get(db)?.iter().find(|u| u.rid == user)?;
        u.permissions
            .iter()
            .find(|p| p.rid == perm)
            .map(|p| p.grant.clone())
    }

    /// The `_rid`s of the databases that have users.
    pub(crate) fn databases(&self) -> Vec<String> {
        self.by_database
            .read()
            .map(|all| all.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The users of database `db_rid` with their permissions, as kept.
    pub(crate) fn kept(&self, db_rid: &str) -> Vec<UserImage> {
        let Ok(all) = self.by_database.read() else {
            return Vec::new();
        };
        all.get(db_rid)
            .map(|users| {
                users
                    .iter()
                    .map(|u| UserImage {
                        id: u.id.clone(),
                        rid_bytes: u.rid_bytes,
                        body: u.body.clone(),
                        etag: u.etag.clone(),
                        next_permission: u.next_permission,
                        permissions: u
                            .permissions
                            .iter()
                            .map(|p| PermissionImage {
                                id: p.id.clone(),
                                rid_bytes: p.rid_bytes,
                                body: p.body.clone(),
                                etag: p.etag.clone(),
                            })
                            .collect(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Makes the users of database `db_rid` those kept (they replace whatever it had). Each
    /// permission's grant is read again from its body and its `_token` made anew by `token` from
    /// its kept identity, so a token signed with the same key is the one issued before; later
    /// users get later resource ids.
    pub(crate) fn restore(
        &self,
        db_rid: &str,
        kept: Vec<UserImage>,
        token: &dyn Fn(&str) -> String,
    ) -> Result<(), String> {
        let mut users = Vec::with_capacity(kept.len());
        for image in kept {
            let mut ordinal = [0u8; 4];
            ordinal.copy_from_slice(&image.rid_bytes[4..]);
            self.next_user
                .fetch_max(u32::from_be_bytes(ordinal) & 0x3FFF_FFFF, Ordering::Relaxed);
            let rid = encode_rid(&image.rid_bytes);
            let mut permissions = Vec::with_capacity(image.permissions.len());
            for p in image.permissions {
                let mut map: Map<String, Value> = serde_json::from_slice(&p.body).map_err(|e| {
                    format!("a kept permission of user {:?} is not JSON: {e}", image.id)
                })?;
                let grant = grant_of(&map).map_err(|e| {
                    format!("the kept permission {:?} is refused: {}", p.id, e.message)
                })?;
                let perm_rid = encode_rid(&p.rid_bytes);
                map.insert(
                    "_token".into(),
                    Value::String(token(&token_id(db_rid, &rid, &perm_rid))),
                );
                let body = serde_json::to_vec(&map).map_err(|e| e.to_string())?;
                permissions.push(Permission {
                    id: p.id,
                    rid: perm_rid,
                    rid_bytes: p.rid_bytes,
                    body: body.into(),
                    etag: p.etag,
                    grant,
                });
            }
            users.push(User {
                id: image.id,
                rid,
                rid_bytes: image.rid_bytes,
                body: image.body,
                etag: image.etag,
                permissions,
                next_permission: image.next_permission,
            });
        }
        let mut all = self
            .by_database
            .write()
            .map_err(|_| "the user table lock was poisoned".to_owned())?;
        if users.is_empty() {
            all.remove(db_rid);
        } else {
            all.insert(db_rid.to_owned(), users);
        }
        Ok(())
    }

    /// Forgets the users of every database `keep` says no to (databases that no longer exist).
    pub(crate) fn retain_databases(&self, keep: impl Fn(&str) -> bool) {
        if let Ok(mut all) = self.by_database.write() {
            all.retain(|db, _| keep(db));
        }
    }

    fn with_user<T>(
        &self,
        db_rid: &str,
        user: &str,
        f: impl FnOnce(&User) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let all = self.by_database.read().map_err(|_| poisoned())?;
        let users = all
            .get(db_rid)
            .ok_or_else(|| ApiError::missing_owner(&format!("user {user}")))?;
        let i = find(users, user, user_key)
            .ok_or_else(|| ApiError::missing_owner(&format!("user {user}")))?;
        f(&users[i])
    }

    fn with_user_mut<T>(
        &self,
        db_rid: &str,
        user: &str,
        f: impl FnOnce(&mut User) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut all = self.by_database.write().map_err(|_| poisoned())?;
        let users = all
            .get_mut(db_rid)
            .ok_or_else(|| ApiError::missing_owner(&format!("user {user}")))?;
        let i = find(users, user, user_key)
            .ok_or_else(|| ApiError::missing_owner(&format!("user {user}")))?;
        f(&mut users[i])
    }
}

fn reseal_user(user: &mut User, db_rid: &str, mut map: Map<String, Value>) {
    map.insert("id".into(), Value::String(user.id.clone()));
    map.insert("_permissions".into(), Value::from("permissions/"));
    let Sealed { body, etag } = seal(
        map,
        &user.rid_bytes,
        format!("dbs/{db_rid}/users/{}/", user.rid),
    );
    user.body = without_attachments(body);
    user.etag = etag;
}

fn reseal_permission(
    p: &mut Permission,
    db_rid: &str,
    user_rid: &str,
    mut map: Map<String, Value>,
    token: &dyn Fn(&str) -> String,
) {
    map.insert("id".into(), Value::String(p.id.clone()));
    map.insert(
        "_token".into(),
        Value::String(token(&token_id(db_rid, user_rid, &p.rid))),
    );
    let Sealed { body, etag } = seal(
        map,
        &p.rid_bytes,
        format!("dbs/{db_rid}/users/{user_rid}/permissions/{}/", p.rid),
    );
    p.body = without_attachments(body);
    p.etag = etag;
}

/// Users and permissions have no attachments.
fn without_attachments(body: Bytes) -> Bytes {
    match serde_json::from_slice::<Map<String, Value>>(&body) {
        Ok(mut map) => {
            map.shift_remove("_attachments");
            serde_json::to_vec(&map).map(Bytes::from).unwrap_or(body)
        }
        Err(_) => body,
    }
}

fn stored_user(u: &User) -> Stored {
    Stored {
        body: u.body.clone(),
        etag: u.etag.clone(),
    }
}

fn stored_permission(p: &Permission) -> Stored {
    Stored {
        body: p.body.clone(),
        etag: p.etag.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn grants_read_from_permission_bodies() {
        let g = grant_of(&obj(
            json!({"id": "p", "permissionMode": "read", "resource": "/dbs/d/colls/c/"}),
        ))
        .unwrap();
        assert_eq!(g.mode, PermissionMode::Read);
        assert_eq!(g.resource, "dbs/d/colls/c");
        assert_eq!(g.partition_key, None);
        let g = grant_of(&obj(json!({"id": "p", "permissionMode": "All", "resource": "dbs/d/colls/c", "resourcePartitionKey": [1]}))).unwrap();
        assert_eq!(g.partition_key, Some(json!([1])));
        let g = grant_of(&obj(json!({"id": "p", "permissionMode": "All", "resource": "dbs/d/colls/c", "resourcePartitionKey": "a"}))).unwrap();
        assert_eq!(g.partition_key, Some(json!(["a"])));
        for bad in [
            json!({"id": "p", "resource": "dbs/d"}),
            json!({"id": "p", "permissionMode": "Write", "resource": "dbs/d"}),
            json!({"id": "p", "permissionMode": "Read"}),
            json!({"id": "p", "permissionMode": "Read", "resource": "/"}),
        ] {
            assert_eq!(
                grant_of(&obj(bad.clone())).unwrap_err().status,
                400,
                "{bad}"
            );
        }
    }

    #[test]
    fn users_and_permissions_lifecycle() {
        let users = Users::default();
        let token = |id: &str| format!("tok:{id}");
        let (w, _) = users
            .write(
                "db1",
                [0, 0, 0, 1],
                "u".into(),
                obj(json!({"id": "u"})),
                false,
            )
            .unwrap();
        assert_eq!(w, Written::Created);
        assert_eq!(
            users
                .write(
                    "db1",
                    [0, 0, 0, 1],
                    "u".into(),
                    obj(json!({"id": "u"})),
                    false
                )
                .err()
                .unwrap()
                .status,
            409
        );
        let grant = grant_of(&obj(
            json!({"permissionMode": "Read", "resource": "dbs/d/colls/c"}),
        ))
        .unwrap();
        let (_, p) = users
            .write_permission(
                "db1",
                "u",
                "p".into(),
                obj(json!({"id": "p", "permissionMode": "Read", "resource": "dbs/d/colls/c"})),
                grant.clone(),
                false,
                &token,
            )
            .unwrap();
        let body: Value = serde_json::from_slice(&p.body).unwrap();
        let tok = body["_token"]
            .as_str()
            .unwrap()
            .strip_prefix("tok:")
            .unwrap()
            .to_owned();
        assert_eq!(users.grant(&tok), Some(grant.clone()));
        // Another permission on the same resource is refused.
        let err = users
            .write_permission(
                "db1",
                "u",
                "q".into(),
                obj(json!({"id": "q"})),
                grant.clone(),
                false,
                &token,
            )
            .err()
            .unwrap();
        assert_eq!(err.status, 409);
        // Renaming the user keeps its permissions and their tokens.
        users
            .replace("db1", "u", "v".into(), obj(json!({"id": "v"})))
            .unwrap();
        assert!(users.read("db1", "u").is_err());
        assert_eq!(users.permissions("db1", "v").unwrap().len(), 1);
        assert!(users.grant(&tok).is_some());
        users.delete("db1", "v").unwrap();
        assert_eq!(users.grant(&tok), None);
        assert_eq!(users.grant("a.b"), None);
        assert_eq!(users.grant("a.b.c.d"), None);
    }

    #[test]
    fn kept_users_come_back_with_their_permissions_and_tokens() {
        let users = Users::default();
        let token = |id: &str| format!("tok:{id}");
        users
            .write(
                "db1",
                [0, 0, 0, 1],
                "u".into(),
                obj(json!({"id": "u"})),
                false,
            )
            .unwrap();
        let body = json!({"id": "p", "permissionMode": "All", "resource": "dbs/d/colls/c",
            "resourcePartitionKey": ["k"]});
        let grant = grant_of(&obj(body.clone())).unwrap();
        let (_, p) = users
            .write_permission(
                "db1",
                "u",
                "p".into(),
                obj(body),
                grant.clone(),
                false,
                &token,
            )
            .unwrap();
        let issued: Value = serde_json::from_slice(&p.body).unwrap();
        let kept = users.kept("db1");
        assert_eq!(users.databases(), vec!["db1".to_owned()]);

        let back = Users::default();
        back.restore("db1", kept.clone(), &token).unwrap();
        assert_eq!(back.kept("db1"), kept, "the same key makes the same tokens");
        let tok = issued["_token"]
            .as_str()
            .unwrap()
            .strip_prefix("tok:")
            .unwrap();
        assert_eq!(back.grant(tok), Some(grant));
        // Another key: the kept permission's token is made with it instead.
        let other = Users::default();
        other
            .restore("db1", kept.clone(), &|id| format!("new:{id}"))
            .unwrap();
        let p: Value =
            serde_json::from_slice(&other.permission("db1", "u", "p").unwrap().body).unwrap();
        assert_eq!(p["_token"], format!("new:{tok}"));
        assert_eq!(p["_etag"], issued["_etag"]);
        // A new user after the restore gets a resource id the kept one does not have.
        let (_, fresh) = back
            .write(
                "db1",
                [0, 0, 0, 1],
                "w".into(),
                obj(json!({"id": "w"})),
                false,
            )
            .unwrap();
        let fresh: Value = serde_json::from_slice(&fresh.body).unwrap();
        let old: Value = serde_json::from_slice(&kept[0].body).unwrap();
        assert_ne!(fresh["_rid"], old["_rid"]);
        // A kept permission whose body no longer grants anything is refused, not guessed.
        let mut bad = kept;
        bad[0].permissions[0].body = Bytes::from_static(br#"{"id":"p"}"#);
        assert!(Users::default().restore("db1", bad, &token).is_err());
        back.retain_databases(|db| db != "db1");
        assert!(back.kept("db1").is_empty());
    }
}
