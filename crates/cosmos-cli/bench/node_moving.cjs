// The Node.js SDK's side of bench/moving.sh: `import FILE CONTAINER` writes the JSON Lines of FILE
// with the SDK's bulk API (executeBulkOperations, 50,000 operations per call, the partition key
// from each document's /pk); `export CONTAINER FILE` writes every item as JSON Lines, page by page.
// Environment: COSMOS_ENDPOINT, COSMOS_KEY, DB. Prints one JSON line: {"items":N,"failed":N}.
// CommonJS, so that NODE_PATH finds @azure/cosmos (ES modules ignore NODE_PATH).
const { createReadStream, createWriteStream } = require("node:fs");
const { createInterface } = require("node:readline");
const { CosmosClient } = require("@azure/cosmos");

const [mode, a, b] = process.argv.slice(2);
const client = new CosmosClient({ endpoint: process.env.COSMOS_ENDPOINT, key: process.env.COSMOS_KEY });
const db = client.database(process.env.DB);
const CHUNK = 50000;

async function main() {
if (mode === "import") {
  const container = db.container(b);
  let ops = [];
  let items = 0;
  let failed = 0;
  const flush = async () => {
    const results = await container.items.executeBulkOperations(ops);
    for (const r of results) {
      if (r.error || (r.response && r.response.statusCode >= 400)) failed++;
      else items++;
    }
    ops = [];
  };
  for await (const line of createInterface({ input: createReadStream(a), crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    const doc = JSON.parse(line);
    ops.push({ operationType: "Create", partitionKey: doc.pk, resourceBody: doc });
    if (ops.length >= CHUNK) await flush();
  }
  if (ops.length) await flush();
  console.log(JSON.stringify({ items, failed }));
} else if (mode === "export") {
  const container = db.container(a);
  const out = createWriteStream(b);
  let items = 0;
  const iterator = container.items.query("SELECT * FROM c", { maxItemCount: 1000 }).getAsyncIterator();
  for await (const page of iterator) {
    let text = "";
    for (const doc of page.resources) text += JSON.stringify(doc) + "\n";
    items += page.resources.length;
    if (!out.write(text)) await new Promise((r) => out.once("drain", r));
  }
  await new Promise((r) => out.end(r));
  console.log(JSON.stringify({ items, failed: 0 }));
} else {
  console.error("usage: node_moving.cjs import FILE CONTAINER | export CONTAINER FILE");
  process.exit(2);
}
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
