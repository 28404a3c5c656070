// Point operations through the Node.js SDK: databases, containers, item create, read, replace,
// upsert, patch (the SDK sends a bare JSON array), delete, auth and regional reads.

import { admin, client, expect, expectError, REGIONS } from "./harness.mjs";
import { randomBytes } from "node:crypto";

/** The checks, in order; `state.container` is the container later check files use. */
export function pointChecks(state) {
  const cosmos = client();
  const items = () => state.container;

  return [
    ["create database and container /pk", async () => {
      const { database } = await cosmos.databases.create({ id: state.dbName });
      const { container } = await database.containers.create({
        id: "items",
        partitionKey: { paths: ["/pk"] },
      });
      const { resource } = await container.read();
      expect(
        JSON.stringify(resource.partitionKey.paths) === '["/pk"]',
        `partition key ${JSON.stringify(resource.partitionKey)}`,
      );
      state.database = database;
      state.container = container;
    }],
    ["create and read an item", async () => {
      const { resource: created, statusCode } = await items().items.create({
        id: "a", pk: "p1", n: 1, s: "one",
      });
      expect(statusCode === 201, `create answered ${statusCode}`);
      expect(created.id === "a" && created.n === 1 && created._etag, `created ${JSON.stringify(created)}`);
      const { resource: read } = await items().item("a", "p1").read();
      expect(read.n === 1 && read._etag === created._etag, `read ${JSON.stringify(read)}`);
      await expectError(409, () => items().items.create({ id: "a", pk: "p1" }));
    }],
    ["replace an item with its etag; a stale etag answers 412", async () => {
      const { resource: read } = await items().item("a", "p1").read();
      const { resource: replaced } = await items().item("a", "p1").replace(
        { id: "a", pk: "p1", n: 2, s: "two" },
        { accessCondition: { type: "IfMatch", condition: read._etag } },
      );
      expect(replaced.n === 2 && replaced._etag !== read._etag, `replaced ${JSON.stringify(replaced)}`);
      await expectError(412, () => items().item("a", "p1").replace(
        { id: "a", pk: "p1", n: 99 },
        { accessCondition: { type: "IfMatch", condition: read._etag } },
      ));
      const { resource: after } = await items().item("a", "p1").read();
      expect(after.n === 2, `the stale replace changed the item: ${JSON.stringify(after)}`);
    }],
    ["upsert an item", async () => {
      const { resource: inserted, statusCode: first } = await items().items.upsert({ id: "b", pk: "p2", n: 10 });
      expect(first === 201 && inserted.n === 10, `upsert (insert) ${first} ${JSON.stringify(inserted)}`);
      const { resource: updated, statusCode: second } = await items().items.upsert({ id: "b", pk: "p2", n: 11 });
      expect(second === 200 && updated.n === 11, `upsert (update) ${second} ${JSON.stringify(updated)}`);
    }],
    ["patch with incr and set (a bare JSON array body)", async () => {
      const { resource: patched } = await items().item("a", "p1").patch([
        { op: "incr", path: "/n", value: 5 },
        { op: "set", path: "/s", value: "patched" },
        { op: "add", path: "/nested", value: { x: 1 } },
      ]);
      expect(
        patched.n === 7 && patched.s === "patched" && patched.nested.x === 1,
        `patched ${JSON.stringify(patched)}`,
      );
      const { resource: read } = await items().item("a", "p1").read();
      expect(read.n === 7, `patch not read back: ${JSON.stringify(read)}`);
    }],
    ["patch with a condition that fails answers 412", async () => {
      await expectError(412, () => items().item("a", "p1").patch({
        condition: "from c where c.n = 1000",
        operations: [{ op: "set", path: "/s", value: "never" }],
      }));
      const { resource: read } = await items().item("a", "p1").read();
      expect(read.s === "patched", `the refused patch changed the item: ${JSON.stringify(read)}`);
    }],
    ["delete an item; reading a missing item answers 404", async () => {
      const { statusCode } = await items().item("b", "p2").delete();
      expect(statusCode === 204, `delete answered ${statusCode}`);
      const { statusCode: missing, resource } = await items().item("b", "p2").read();
      expect(missing === 404 && resource === undefined, `read after delete answered ${missing}`);
      await expectError(404, () => items().item("b", "p2").delete());
    }],
    ["a wrong key answers 401", async () => {
      const wrongKey = randomBytes(64).toString("base64");
      await expectError(401, () => client({ key: wrongKey }).database(state.dbName).read());
    }],
    ["preferredLocations reads from that region", async () => {
      const preferred = REGIONS[1];
      const regional = client({ preferredLocations: [preferred] })
        .database(state.dbName)
        .container("items");
      await regional.read(); // metadata first, so only the item read below is counted as a read
      const { resource: written } = await items().item("a", "p1").read();
      await admin("DELETE", "/_emulator/counters");
      const { resource } = await regional.item("a", "p1").read();
      expect(resource && resource._etag === written._etag, `read ${JSON.stringify(resource)}`);
      const counters = await admin("GET", "/_emulator/counters");
      const reads = Object.fromEntries(
        Object.entries(counters).map(([region, counts]) => [region, counts.read || 0]),
      );
      expect(reads[preferred] === 1, `expected one read in ${preferred}, counters say ${JSON.stringify(reads)}`);
      const others = Object.entries(reads).filter(([region, n]) => region !== preferred && n);
      expect(others.length === 0, `reads also reached ${JSON.stringify(others)}`);
    }],
  ];
}
