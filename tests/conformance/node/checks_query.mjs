// Queries through the Node.js SDK: single- and cross-partition ORDER BY, TOP, OFFSET LIMIT,
// DISTINCT, GROUP BY, aggregates, JOIN, functions, parameters, continuation and readAll.

import { randomBytes } from "node:crypto";

import { expect, expectError } from "./harness.mjs";

const ITEMS = 40;

function doc(i) {
  const d = { id: `q${String(i).padStart(2, "0")}`, pk: `p${i % 4}`, n: (i * 7) % 13, tags: [`t${i % 3}`, "all"] };
  if (i % 5 === 0) delete d.n;
  return d;
}

/** The checks, in order; they use their own container in `state.database`. */
export function queryChecks(state) {
  const docs = Array.from({ length: ITEMS }, (_, i) => doc(i));
  const withN = docs.filter((d) => "n" in d);
  let container;
  const items = async () => {
    if (!container) {
      ({ container } = await state.database.containers.create({
        id: `queries-${randomBytes(3).toString("hex")}`,
        partitionKey: { paths: ["/pk"] },
      }));
      for (const d of docs) await container.items.create(d);
    }
    return container;
  };
  const all = async (query, options = {}) => (await (await items()).items.query(query, options).fetchAll()).resources;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  return [
    ["query in one partition with parameters", async () => {
      const got = await all({
        query: "SELECT VALUE c.id FROM c WHERE c.n >= @min ORDER BY c.id",
        parameters: [{ name: "@min", value: 5 }],
      }, { partitionKey: "p1" });
      const want = docs.filter((d) => d.pk === "p1" && (d.n ?? -1) >= 5).map((d) => d.id).sort();
      expect(same(got, want), `${got} != ${want}`);
    }],
    ["cross-partition ORDER BY with two keys and small pages", async () => {
      const got = await all("SELECT c.id, c.n FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n DESC, c.id ASC", { maxItemCount: 3 });
      const want = [...withN].sort((a, b) => b.n - a.n || a.id.localeCompare(b.id)).map((d) => d.id);
      expect(same(got.map((g) => g.id), want), `order ${got.map((g) => g.id)}`);
    }],
    ["cross-partition TOP and OFFSET LIMIT", async () => {
      const top = await all("SELECT TOP 5 VALUE c.id FROM c ORDER BY c.id");
      expect(same(top, ["q00", "q01", "q02", "q03", "q04"]), `top ${top}`);
      const window = await all("SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 7 LIMIT 4", { maxItemCount: 2 });
      expect(same(window, ["q07", "q08", "q09", "q10"]), `offset/limit ${window}`);
    }],
    ["cross-partition DISTINCT", async () => {
      const got = await all("SELECT DISTINCT VALUE c.pk FROM c");
      expect(same([...got].sort(), ["p0", "p1", "p2", "p3"]), `distinct ${got}`);
    }],
    ["cross-partition aggregates", async () => {
      const ns = withN.map((d) => d.n);
      for (const [query, want] of [
        ["SELECT VALUE COUNT(1) FROM c", ITEMS],
        ["SELECT VALUE SUM(c.n) FROM c", ns.reduce((a, b) => a + b, 0)],
        ["SELECT VALUE MIN(c.n) FROM c", Math.min(...ns)],
        ["SELECT VALUE MAX(c.n) FROM c", Math.max(...ns)],
      ]) {
        const got = await all(query);
        expect(same(got, [want]), `${query}: ${JSON.stringify(got)} != [${want}]`);
      }
      const avg = await all("SELECT VALUE AVG(c.n) FROM c");
      expect(avg.length === 1 && Math.abs(avg[0] - ns.reduce((a, b) => a + b, 0) / ns.length) < 1e-9, `avg ${avg}`);
    }],
    ["cross-partition GROUP BY", async () => {
      const got = await all("SELECT c.pk, COUNT(1) AS count FROM c GROUP BY c.pk");
      const counts = Object.fromEntries(got.map((g) => [g.pk, g.count]));
      expect(same(counts, { p0: 10, p1: 10, p2: 10, p3: 10 }) || (counts.p0 === 10 && counts.p1 === 10 && counts.p2 === 10 && counts.p3 === 10),
        `group by ${JSON.stringify(got)}`);
    }],
    ["JOIN and built-in functions", async () => {
      const got = await all("SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t = 't1' AND STARTSWITH(c.id, 'q1')");
      const want = docs.filter((d) => d.tags.includes("t1") && d.id.startsWith("q1")).map((d) => d.id).sort();
      expect(same(got.map((g) => g.id).sort(), want) && got.every((g) => g.tag === "t1"), `join ${JSON.stringify(got)}`);
      const upper = await all("SELECT VALUE UPPER(c.id) FROM c WHERE c.id IN ('q06', 'q12')");
      expect(same([...upper].sort(), ["Q06", "Q12"]), `functions ${upper}`);
    }],
    ["continuation token resumes exactly", async () => {
      const c = await items();
      const first = await c.items.query("SELECT VALUE c.id FROM c", { partitionKey: "p3", maxItemCount: 2 }).fetchNext();
      expect(first.resources.length === 2 && first.continuationToken, `first page ${JSON.stringify(first.resources)}`);
      const rest = await c.items.query("SELECT VALUE c.id FROM c", {
        partitionKey: "p3", maxItemCount: 2, continuationToken: first.continuationToken,
      }).fetchAll();
      const got = [...first.resources, ...rest.resources].sort();
      const want = docs.filter((d) => d.pk === "p3").map((d) => d.id).sort();
      expect(same(got, want), `${got} != ${want}`);
    }],
    ["readAll", async () => {
      const { resources } = await (await items()).items.readAll().fetchAll();
      expect(resources.length === ITEMS, `readAll returned ${resources.length}`);
    }],
    ["a malformed query answers 400", async () => {
      await expectError(400, async () => (await items()).items.query("SELECT * FROM c WHERE", { partitionKey: "p1" }).fetchAll());
    }],
  ];
}
