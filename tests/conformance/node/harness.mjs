// What every check file shares: the environment, clients, the admin API and assertions.
//
// Environment:
//   COSMOS_ENDPOINT   global endpoint, e.g. http://127.0.0.1:8081/
//   COSMOS_KEY        the emulator's master key (base64)
//   COSMOS_REGIONS    the emulator's regions, comma separated, in account order (at least two)

import { CosmosClient } from "@azure/cosmos";

export const ENDPOINT = process.env.COSMOS_ENDPOINT;
export const KEY = process.env.COSMOS_KEY;
export const REGIONS = (process.env.COSMOS_REGIONS || "")
  .split(",")
  .map((r) => r.trim())
  .filter((r) => r);

// Small retry budgets keep a broken emulator from stretching the run into minutes.
const RETRY_OPTIONS = {
  maxRetryAttemptCount: 2,
  fixedRetryIntervalInMilliseconds: 100,
  maxWaitTimeInSeconds: 5,
};

/** A client of the emulator; `preferredLocations` routes reads to those regions first. */
export function client({ key = KEY, preferredLocations } = {}) {
  return new CosmosClient({
    endpoint: ENDPOINT,
    key,
    connectionPolicy: {
      enableEndpointDiscovery: true,
      preferredLocations: preferredLocations || [],
      retryOptions: RETRY_OPTIONS,
      requestTimeout: 10000,
    },
  });
}

/** Calls the emulator's admin API (the account key as its credential) and returns the decoded JSON body. */
export async function admin(method, path, body) {
  const headers = { authorization: `Bearer ${KEY}` };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
  }
  const response = await fetch(ENDPOINT.replace(/\/$/, "") + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers,
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`admin ${method} ${path} answered ${response.status}: ${text}`);
  }
  return text ? JSON.parse(text) : null;
}

export function expect(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

/** Runs `action` and requires that it throws an error with HTTP status `status`. */
export async function expectError(status, action) {
  let error;
  try {
    await action();
  } catch (e) {
    error = e;
  }
  expect(error !== undefined, `expected an error with status ${status}, nothing was thrown`);
  expect(
    error.code === status || error.statusCode === status,
    `expected status ${status}, got ${error.code ?? error.statusCode}: ${error.message}`,
  );
  return error;
}

/** Runs checks in order, counting passes and failures; a failed check does not stop the others. */
export class Checks {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }

  async run(name, check) {
    try {
      await check();
      this.passed += 1;
      console.log(`PASS ${name}`);
    } catch (error) {
      this.failed += 1;
      const where = (error.stack || "").split("\n").slice(1, 4).join("\n");
      console.log(`FAIL ${name}: ${error.message}\n${where}`);
    }
  }
}
