// Change feed, transactional batch, bulk and throughput through the Node.js SDK, on a container
// of their own ("feed") in the conformance database.

import { ChangeFeedMode, ChangeFeedStartFrom } from "@azure/cosmos";

import { admin, client, expect } from "./harness.mjs";

/** Reads a change-feed iterator until it answers 304; returns the items and the last continuation. */
async function drain(iterator) {
  const items = [];
  let continuation;
  for (let pages = 0; iterator.hasMoreResults; pages++) {
    expect(pages < 50, "the change feed does not end");
    const response = await iterator.readNext();
    continuation = response.continuationToken;
    if (response.statusCode === 304) {
      break;
    }
    items.push(...response.result);
  }
  return { items, continuation };
}

const sorted = (items) => items.map((i) => i.id).sort();

/** The checks, in order. */
export function feedChecks(state) {
  const database = () => client().database(state.dbName);
  let feed;

  return [
    ["change feed from the beginning: each item once, at its latest version", async () => {
      ({ container: feed } = await database().containers.create({
        id: "feed",
        partitionKey: { paths: ["/pk"] },
      }));
      for (let i = 0; i < 6; i++) {
        await feed.items.upsert({ id: `f${i}`, pk: `p${i % 3}`, v: 1 });
      }
      await feed.items.upsert({ id: "f0", pk: "p0", v: 2 });
      const { items } = await drain(
        feed.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }),
      );
      expect(JSON.stringify(sorted(items)) === JSON.stringify(["f0", "f1", "f2", "f3", "f4", "f5"]),
        `change feed ids ${sorted(items)}`);
      const f0 = items.filter((i) => i.id === "f0");
      expect(f0.length === 1 && f0[0].v === 2, `f0 in the feed: ${JSON.stringify(f0)}`);
    }],
    ["change feed from a continuation sees only later changes", async () => {
      const { continuation } = await drain(
        feed.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }),
      );
      expect(continuation, "no continuation token");
      await feed.items.upsert({ id: "late", pk: "p1", v: 1 });
      await feed.items.upsert({ id: "f1", pk: "p1", v: 2 });
      const { items } = await drain(
        feed.items.getChangeFeedIterator({
          changeFeedStartFrom: ChangeFeedStartFrom.Continuation(continuation),
        }),
      );
      expect(JSON.stringify(sorted(items)) === '["f1","late"]', `changes after the continuation: ${sorted(items)}`);
    }],
    ["change feed of one partition key", async () => {
      const { items } = await drain(
        feed.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("p2") }),
      );
      expect(JSON.stringify(sorted(items)) === '["f2","f5"]', `p2's changes: ${sorted(items)}`);
    }],
    ["change feed continues across a partition split", async () => {
      const { continuation } = await drain(
        feed.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }),
      );
      await admin("POST", "/_emulator/split", { db: state.dbName, container: "feed", range: "1" });
      const fresh = [];
      for (let i = 0; i < 8; i++) {
        fresh.push(`after-split-${i}`);
        await feed.items.upsert({ id: `after-split-${i}`, pk: `s${i}` });
      }
      const { items } = await drain(
        feed.items.getChangeFeedIterator({
          changeFeedStartFrom: ChangeFeedStartFrom.Continuation(continuation),
        }),
      );
      expect(JSON.stringify(sorted(items)) === JSON.stringify(fresh.sort()),
        `changes after the split: ${sorted(items)}`);
      const { resource } = await feed.item("f0", "p0").read();
      expect(resource && resource.v === 2, `f0 after the split: ${JSON.stringify(resource)}`);
    }],
    ["all-versions-and-deletes change feed from now", async () => {
      const iterator = feed.items.getChangeFeedIterator({
        changeFeedStartFrom: ChangeFeedStartFrom.Now("p9"),
        changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      });
      const first = await drain(iterator);
      expect(first.items.length === 0, `from now saw ${JSON.stringify(first.items)}`);
      await feed.items.create({ id: "av", pk: "p9", v: 1 });
      await feed.item("av", "p9").replace({ id: "av", pk: "p9", v: 2 });
      await feed.item("av", "p9").delete();
      const { items } = await drain(iterator);
      const ops = items.map((i) => i.metadata && i.metadata.operationType);
      expect(JSON.stringify(ops) === '["create","replace","delete"]', `operations ${JSON.stringify(items)}`);
      expect(items[1].current.v === 2, `replace carries ${JSON.stringify(items[1])}`);
    }],
    ["batch commits every operation", async () => {
      await feed.items.upsert({ id: "r", pk: "b", v: 1 });
      await feed.items.upsert({ id: "gone", pk: "b" });
      const response = await feed.items.batch([
        { operationType: "Create", resourceBody: { id: "n1", pk: "b", v: 1 } },
        { operationType: "Upsert", resourceBody: { id: "n2", pk: "b" } },
        { operationType: "Replace", id: "r", resourceBody: { id: "r", pk: "b", v: 2 } },
        { operationType: "Read", id: "r" },
        { operationType: "Delete", id: "gone" },
        { operationType: "Patch", id: "n1", resourceBody: { operations: [{ op: "incr", path: "/v", value: 5 }] } },
      ], "b");
      const codes = response.result.map((r) => r.statusCode);
      expect(JSON.stringify(codes) === "[201,201,200,200,204,200]", `status codes ${codes}`);
      const { resource } = await feed.item("n1", "b").read();
      expect(resource.v === 6, `n1 after the batch: ${JSON.stringify(resource)}`);
    }],
    ["batch rolls back when an operation fails", async () => {
      const response = await feed.items.batch([
        { operationType: "Create", resourceBody: { id: "rb1", pk: "b" } },
        { operationType: "Create", resourceBody: { id: "n1", pk: "b" } },
      ], "b");
      const codes = response.result.map((r) => r.statusCode);
      expect(response.code === 207 && JSON.stringify(codes) === "[424,409]",
        `answer ${response.code} with ${codes}`);
      const { statusCode } = await feed.item("rb1", "b").read();
      expect(statusCode === 404, `rb1 after the rollback answered ${statusCode}`);
    }],
    ["bulk applies each operation on its own", async () => {
      const results = await feed.items.executeBulkOperations([
        { operationType: "Create", partitionKey: "q1", resourceBody: { id: "k1", pk: "q1" } },
        { operationType: "Create", partitionKey: "b", resourceBody: { id: "n1", pk: "b" } },
        { operationType: "Upsert", partitionKey: "q2", resourceBody: { id: "k2", pk: "q2" } },
      ]);
      const codes = results.map((r) => (r.response ? r.response.statusCode : r.error && r.error.code));
      expect(JSON.stringify(codes) === "[201,409,201]",
        `bulk status codes ${JSON.stringify(codes)}: ${JSON.stringify(results.map((r) => r.error && r.error.message))}`);
    }],
    ["container throughput: create with 500, read the offer, replace it", async () => {
      const { container } = await database().containers.create(
        { id: "throughput", partitionKey: { paths: ["/pk"] } },
        { offerThroughput: 500 },
      );
      const { resource: offer } = await container.readOffer();
      expect(offer && offer.content.offerThroughput === 500, `offer ${JSON.stringify(offer)}`);
      const { resource: replaced } = await client()
        .offer(offer.id)
        .replace({ ...offer, content: { ...offer.content, offerThroughput: 1100 } });
      expect(replaced.content.offerThroughput === 1100, `replaced ${JSON.stringify(replaced)}`);
      const { resource: again } = await container.readOffer();
      expect(again.content.offerThroughput === 1100, `read back ${JSON.stringify(again)}`);
      await container.delete();
    }],
  ];
}
