// drive.mjs: drives a running Praxa gateway's /mcp with an official
// TypeScript MCP client over streamable HTTP, as a third-party host would,
// through one link-copying agent whichever client runs it.
//
//   PRAXA_URL=http://127.0.0.1:8080/mcp PRAXA_TOKEN=... \
//   PRAXA_CLIENT=client PRAXA_PROTOCOL=2026-07-28 node drive.mjs
//
// PRAXA_CLIENT picks the client (both pinned in package.json):
//   sdk     @modelcontextprotocol/sdk, the 1.x package (negotiates
//           2025-11-25 through initialize);
//   client  @modelcontextprotocol/client, the 2.x split client package:
//           PRAXA_PROTOCOL=2026-07-28 pins the stateless revision
//           (server/discover, per-request _meta, Mcp-Method/Mcp-Name
//           headers); 2025-11-25 keeps its legacy initialize handshake.
// PRAXA_PROTOCOL (default 2025-11-25) is the revision the drive requires
// the client to have negotiated.
//
// The agent lists the tools (14, each with an object input schema and
// annotations), then starts from praxec.query's home and only copies
// links: search (filling the query), describe the workflow found, start
// it, and follow its praxec.command links until the mission completes,
// filling `arguments` only where a link's inputSchema requires what its
// prefill lacks. It then recovers from a 422 (idempotency-key-reused, a
// key sent again with another intent) by following the refusal's
// retry_with_key link. The client validates every structuredContent
// against the tool's outputSchema on its own. Any deviation exits 1; the
// summary goes to stdout.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

const url = process.env.PRAXA_URL;
const token = process.env.PRAXA_TOKEN;
const which = process.env.PRAXA_CLIENT || "sdk";
const wantProtocol = process.env.PRAXA_PROTOCOL || "2025-11-25";
if (!url || !token) {
  console.error("drive.mjs: set PRAXA_URL (the gateway's /mcp URL) and PRAXA_TOKEN");
  process.exit(2);
}

// connect returns a connected client of the chosen package, the package's
// name@version, and a function reading the negotiated protocol version.
async function connect() {
  const headers = { Authorization: `Bearer ${token}` };
  // The installed version, read from the package's own manifest (the
  // packages do not export it).
  const pkgVersion = (name) => JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;
  if (which === "sdk") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    const client = new Client({ name: "praxa-node-drive", version: "1.0.0" });
    await client.connect(transport);
    return { client, pkg: `@modelcontextprotocol/sdk@${pkgVersion("@modelcontextprotocol/sdk")}`, protocol: () => transport.protocolVersion ?? null };
  }
  if (which === "client") {
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    const versionNegotiation = wantProtocol >= "2026-07-28" ? { mode: { pin: wantProtocol } } : { mode: "legacy" };
    const client = new Client({ name: "praxa-node-drive", version: "1.0.0" }, { versionNegotiation });
    await client.connect(transport);
    return { client, pkg: `@modelcontextprotocol/client@${pkgVersion("@modelcontextprotocol/client")}`, protocol: () => client.getNegotiatedProtocolVersion() ?? null };
  }
  console.error(`drive.mjs: PRAXA_CLIENT is ${which}, want sdk or client`);
  process.exit(2);
}

const problems = [];
function check(ok, message) {
  if (!ok) {
    problems.push(message);
    console.error("FAIL " + message);
  }
  return ok;
}

class Deviation extends Error {}
function must(ok, message) {
  if (!check(ok, message)) throw new Deviation(message);
}

const summary = { client: which, protocolVersion: null, tools: 0, calls: 0, steps: [] };
let client;

// callRaw calls a tool and returns the client's result as it is.
async function callRaw(name, args) {
  summary.calls++;
  return client.callTool({ name, arguments: args });
}

// call calls a tool and requires a success whose text content is the JSON
// of its structuredContent (the client has validated it against the
// outputSchema already). It returns the structuredContent.
async function call(name, args) {
  const res = await callRaw(name, args);
  must(!res.isError, `${name} ${JSON.stringify(args)}: isError ${JSON.stringify(res.content)}`);
  must(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structuredContent`);
  must(Array.isArray(res.content) && res.content.length === 1 && res.content[0].type === "text", `${name}: want one text content`);
  const text = JSON.parse(res.content[0].text);
  check(JSON.stringify(sortKeys(text)) === JSON.stringify(sortKeys(res.structuredContent)), `${name}: text content differs from structuredContent`);
  return res.structuredContent;
}

// refusal calls a tool and requires a refusal: isError, no
// structuredContent, the seeds/000 envelope as text. It returns the
// envelope.
async function refusal(name, args) {
  const res = await callRaw(name, args);
  must(res.isError === true, `${name} ${JSON.stringify(args)} succeeded, want a refusal`);
  check(res.structuredContent === undefined, `${name}: an error result carries structuredContent`);
  const env = JSON.parse(res.content?.[0]?.text ?? "{}");
  must(env.error?.code && Array.isArray(env.links), `${name}: error envelope ${JSON.stringify(env)} lacks code or links`);
  return env;
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  }
  return v;
}

// linkArgs copies a link's args; set overrides members of the args (what
// the agent chooses, such as a search's query); fill supplies the fields
// the link's inputSchema requires that the prefilled args lack. A
// praxec.command link's inputSchema is that of its `arguments` (the
// transition's input); any other link's is that of the args themselves.
function linkArgs(link, set, fill) {
  const args = { ...structuredClone(link.args ?? {}), ...(set ?? {}) };
  const command = link.method === "praxec.command";
  const given = command ? args.arguments || {} : args;
  const missing = (link.inputSchema?.required || []).filter((k) => !(k in given));
  if (missing.length > 0) {
    for (const k of missing) {
      must(fill && k in fill, `link ${link.rel} requires ${k} and the drive has no value for it`);
      given[k] = fill[k];
    }
    if (command) args.arguments = given;
  }
  return args;
}

// follow calls the link rel of answer by copying its args.
async function follow(answer, rel, { set, fill } = {}) {
  const link = (answer.links || []).find((l) => l.rel === rel);
  must(link, `no link ${rel} in ${JSON.stringify(answer.links?.map((l) => l.rel))}`);
  const next = await call(link.method, linkArgs(link, set, fill));
  summary.steps.push(`${rel} -> ${next.workflow?.state ?? next.status ?? "ok"}${next.result?.status ? ` (${next.result.status})` : ""}`);
  return next;
}

// fill holds what the agent knows that no link can: the coverage it
// measured and the artifact it built.
const fill = { coverage: 90, artifactId: "art_ci" };

let exitCode = 0;
try {
  let conn;
  ({ client, ...conn } = await connect());
  summary.client = conn.pkg;
  summary.protocolVersion = conn.protocol();
  check(summary.protocolVersion === wantProtocol, `negotiated protocol ${summary.protocolVersion}, want ${wantProtocol}`);

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  summary.tools = tools.length;
  check(tools.length === 14, `tools/list: ${tools.length} tools, want 14`);
  for (const t of tools) {
    check(t.inputSchema?.type === "object", `${t.name}: inputSchema.type is ${t.inputSchema?.type}`);
    check(t.outputSchema?.type === "object", `${t.name}: outputSchema.type is ${t.outputSchema?.type}`);
    const a = t.annotations;
    check(
      a && typeof a.readOnlyHint === "boolean" && typeof a.destructiveHint === "boolean" &&
        typeof a.idempotentHint === "boolean" && typeof a.openWorldHint === "boolean",
      `${t.name}: annotations ${JSON.stringify(a)} lack a hint`,
    );
  }

  // Home, then search: the only thing the agent writes is the query.
  const home = await call("praxec.query", {});
  const found = await follow(home, "search", { set: { query: "deploy" } });
  const hit = (found.items || []).map((i) => i.item).find((i) => i.kind === "workflow" && i.id === "deploy_pipeline");
  must(hit, `search "deploy" did not find the workflow deploy_pipeline: ${JSON.stringify(found.items?.map((i) => i.item?.id))}`);

  // Describe it (praxec.query's subject form), then start it from the
  // description's start link.
  const described = await call("praxec.query", { subject: hit.id });
  summary.steps.push(`describe ${hit.id}`);
  must(described.item?.id === hit.id, `describe ${hit.id} answered ${JSON.stringify(described.item?.id)}`);
  let cur = await follow(described.item, "start");
  must(cur.workflow?.state === "lint", `started in ${cur.workflow?.state}, want lint`);

  // Follow the mission's praxec.command links (never an abort) until it
  // completes.
  for (let step = 0; cur.result?.status !== "completed"; step++) {
    must(step < 12, `the mission did not complete in 12 moves: ${cur.workflow?.state}`);
    const next = (cur.links || []).find((l) => l.method === "praxec.command" && !/abort|cancel|reject/.test(l.rel));
    must(next, `state ${cur.workflow?.state} offers no move: ${JSON.stringify(cur.links?.map((l) => l.rel))}`);
    cur = await follow(cur, next.rel, { fill });
  }
  check(cur.workflow?.state === "deployed", `final state ${cur.workflow?.state}, want deployed`);
  check(Array.isArray(cur.links) && cur.links.length === 0, `a completed workflow offers links ${JSON.stringify(cur.links)}`);

  // The aura twins answer too, each validated against its outputSchema.
  const mission = await call("aura_get_mission", { runId: cur.workflow.id });
  check(mission.workflow?.state === "deployed", `aura_get_mission reads ${mission.workflow?.state}`);

  // A 422: the same idempotency key sent again with another intent is
  // refused idempotency-key-reused; the agent recovers by following the
  // refusal's retry_with_key link over the arguments it had sent.
  const key = randomUUID();
  const first = await call("aura_submit_intent", { idempotencyKey: key, intent: "deploy the payments service" });
  check(first.status === "recorded", `aura_submit_intent status ${first.status}`);
  const again = { idempotencyKey: key, intent: "deploy the billing service" };
  const reused = await refusal("aura_submit_intent", again);
  must(reused.error.code === "idempotency-key-reused", `a reused key answered ${reused.error.code}, want idempotency-key-reused`);
  const retry = reused.links.find((l) => l.rel === "retry_with_key");
  must(retry && retry.method === "aura_submit_intent", `the 422 offers no retry_with_key link: ${JSON.stringify(reused.links)}`);
  const recovered = await call(retry.method, { ...again, ...linkArgs(retry) });
  summary.steps.push(`422 ${reused.error.code} -> retry_with_key -> ${recovered.status}`);
  check(recovered.status === "recorded" && recovered.intentId !== first.intentId,
    `after retry_with_key: ${JSON.stringify(recovered)}, want a second recorded intent`);

  // A refusal without a next move the agent could take: no key at all.
  const missing = await refusal("aura_submit_intent", { intent: "deploy" });
  check(missing.error.code === "idempotency-key-missing", `error envelope ${JSON.stringify(missing)}, want idempotency-key-missing`);
} catch (err) {
  if (!(err instanceof Deviation)) {
    problems.push(String(err?.stack ?? err));
    console.error("FAIL " + (err?.stack ?? err));
  }
} finally {
  await client?.close().catch(() => {});
}

console.log(JSON.stringify({ ...summary, problems }, null, 2));
if (problems.length > 0) {
  console.log(`${problems.length} problem(s)`);
  exitCode = 1;
} else {
  console.log(`ok: ${summary.client} over protocol ${summary.protocolVersion}: ${summary.tools} tools, deploy_pipeline completed and a 422 recovered in ${summary.calls} calls`);
}
process.exit(exitCode);
