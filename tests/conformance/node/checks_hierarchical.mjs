// Hierarchical partition keys (MultiHash) through the Node.js SDK: a container with three key
// paths, point operations by the full key, queries by the full key and by a prefix of it (which
// this SDK sends as a partial partition key header), before and after splits that cut the
// prefix across ranges.

import { PartitionKeyKind } from "@azure/cosmos";

import { admin, client, expect, expectError } from "./harness.mjs";

const TENANTS = [["t0", 30], ["t1", 3], ["t2", 3]];

function docs() {
  const out = [];
  for (const [t, users] of TENANTS) {
    for (let u = 0; u < users; u++) {
      for (let s = 0; s < 2; s++) {
        out.push({ id: `${t}-u${u}-s${s}`, tenant: t, user: `u${u}`, session: `s${s}`, n: u });
      }
    }
  }
  return out;
}

const ids = (items) => items.map((i) => i.id).sort();

/** The checks, in order. */
export function hierarchicalChecks(state) {
  const all = docs();
  const want = (pred) => ids(all.filter(pred));
  let c;

  const query = async (text, partitionKey, maxItemCount = 5) =>
    (await c.items.query(text, { partitionKey, maxItemCount }).fetchAll()).resources;

  return [
    ["MultiHash container with three paths", async () => {
      const paths = ["/tenant", "/user", "/session"];
      ({ container: c } = await client().database(state.dbName).containers.create({
        id: "hpk",
        partitionKey: { paths, kind: PartitionKeyKind.MultiHash, version: 2 },
      }));
      const { resource } = await c.read();
      expect(JSON.stringify(resource.partitionKey.paths) === JSON.stringify(paths), `paths ${JSON.stringify(resource.partitionKey)}`);
      expect(resource.partitionKey.kind === "MultiHash", `kind ${resource.partitionKey.kind}`);
      for (const d of all) {
        await c.items.create(d);
      }
    }],
    ["MultiHash point operations by the full key", async () => {
      const { resource } = await c.item("t0-u4-s1", ["t0", "u4", "s1"]).read();
      expect(resource && resource.n === 4, `read ${JSON.stringify(resource)}`);
      await c.items.upsert({ id: "x", tenant: "t9", user: "u0", session: "s0" });
      await c.item("x", ["t9", "u0", "s0"]).delete();
      const { statusCode } = await c.item("x", ["t9", "u0", "s0"]).read();
      expect(statusCode === 404, `a deleted item answered ${statusCode}`);
      await expectError(400, () => c.item("t0-u4-s1", ["t0", "u4"]).read());
    }],
    ["MultiHash query by the full key and by a prefix", async () => {
      const full = await query("SELECT * FROM c", ["t0", "u3", "s0"]);
      expect(JSON.stringify(ids(full)) === JSON.stringify(["t0-u3-s0"]), `full key: ${ids(full)}`);
      for (const [prefix, pred] of [
        [["t0"], (d) => d.tenant === "t0"],
        [["t0", "u7"], (d) => d.tenant === "t0" && d.user === "u7"],
        [["t2"], (d) => d.tenant === "t2"],
      ]) {
        const got = await query("SELECT * FROM c", prefix);
        expect(JSON.stringify(ids(got)) === JSON.stringify(want(pred)), `prefix ${prefix}: ${ids(got)}`);
      }
    }],
    ["MultiHash prefix query across splits", async () => {
      for (let r = 0; r < 4; r++) {
        await admin("POST", "/_emulator/split", { db: state.dbName, container: "hpk", range: `${r}` });
      }
      const got = await query("SELECT * FROM c", ["t0"], 4);
      expect(got.length === 60, `${got.length} items, 60 expected`);
      expect(JSON.stringify(ids(got)) === JSON.stringify(want((d) => d.tenant === "t0")), `after the splits: ${ids(got)}`);
    }],
  ];
}
