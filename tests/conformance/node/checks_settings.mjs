// Container settings the service enforces, through the Node.js SDK: a unique key policy (409 for
// a second item with the same values in one logical partition, none across partitions) and time
// to live (an item with a 1 s time to live goes; one with ttl -1 stays).

import { expect, expectError } from "./harness.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The checks, in order; they create their own containers in `state.database`. */
export function settingsChecks(state) {
  return [
    ["a unique key policy is enforced", async () => {
      const { container } = await state.database.containers.create({
        id: "unique",
        partitionKey: { paths: ["/pk"] },
        uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] },
      });
      const { resource } = await container.read();
      expect(
        JSON.stringify(resource.uniqueKeyPolicy.uniqueKeys[0].paths) === '["/email"]',
        `policy read back as ${JSON.stringify(resource.uniqueKeyPolicy)}`,
      );
      await container.items.create({ id: "a", pk: "p", email: "x@y" });
      await expectError(409, () => container.items.create({ id: "b", pk: "p", email: "x@y" }));
      await container.items.create({ id: "b", pk: "q", email: "x@y" });
      await container.items.create({ id: "c", pk: "p", email: "c@y" });
      await expectError(409, () => container.item("c", "p").replace({ id: "c", pk: "p", email: "x@y" }));
      const { resource: c } = await container.item("c", "p").read();
      expect(c.email === "c@y", `a refused replace changed the item: ${JSON.stringify(c)}`);
    }],
    ["items expire after their time to live", async () => {
      const { container } = await state.database.containers.create({
        id: "ttl",
        partitionKey: { paths: ["/pk"] },
        defaultTtl: 1,
      });
      await container.items.create({ id: "short", pk: "p" });
      await container.items.create({ id: "kept", pk: "p", ttl: -1 });
      const deadline = Date.now() + 15000;
      let gone = false;
      while (!gone && Date.now() < deadline) {
        const { statusCode } = await container.item("short", "p").read();
        gone = statusCode === 404;
        if (!gone) await sleep(200);
      }
      expect(gone, "an item with a 1 s time to live was still there after 15 s");
      const { resource: kept } = await container.item("kept", "p").read();
      expect(kept && kept.id === "kept", "the item with ttl -1 expired");
    }],
  ];
}
