// Drives the official Azure Cosmos DB SDK for JavaScript (@azure/cosmos, unmodified) against a
// running cosmos-emulator. Each check prints PASS or FAIL with the reason; the last line is
// "N passed, N failed" and the exit status is non-zero when anything failed.
//
// Check families live in their own files (checks_*.mjs) and are listed below.

import { randomBytes } from "node:crypto";

import { Checks, client, expect, expectError, REGIONS } from "./harness.mjs";
import { feedChecks } from "./checks_feeds.mjs";
import { hierarchicalChecks } from "./checks_hierarchical.mjs";
import { pointChecks } from "./checks_points.mjs";
import { queryChecks } from "./checks_query.mjs";
import { settingsChecks } from "./checks_settings.mjs";

async function main() {
  expect(REGIONS.length >= 2, "COSMOS_REGIONS must name at least two regions");
  const checks = new Checks();
  const state = { dbName: `conformance-${randomBytes(4).toString("hex")}` };

  const [first, ...rest] = pointChecks(state);
  await checks.run(...first);
  if (state.container) {
    const families = [
      rest,
      feedChecks(state),
      queryChecks(state),
      hierarchicalChecks(state),
      settingsChecks(state),
    ];
    for (const family of families) {
      for (const [name, check] of family) {
        await checks.run(name, check);
      }
    }
    await checks.run("delete the database", async () => {
      await client().database(state.dbName).delete();
      await expectError(404, () => client().database(state.dbName).read());
    });
  }
  console.log(`${checks.passed} passed, ${checks.failed} failed`);
  return checks.failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.log(`FAIL setup: ${error.message}`);
    console.log("0 passed, 1 failed");
    process.exit(1);
  },
);
