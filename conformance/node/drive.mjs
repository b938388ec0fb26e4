// drive.mjs: drives a running Praxa gateway's /mcp with the official
// TypeScript MCP client over streamable HTTP, as a third-party host would.
//
//   PRAXA_URL=http://127.0.0.1:8080/mcp PRAXA_TOKEN=... node drive.mjs
//
// It lists the tools (14, each with an object input schema and
// annotations), then drives deploy_pipeline to its terminal state through
// praxec.command by copying link args only, filling `arguments` only where a
// link's inputSchema requires what its prefill lacks. The client validates
// every structuredContent against the tool's outputSchema on its own. Any
// deviation exits 1; the summary goes to stdout.

import { randomUUID } from "node:crypto";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.PRAXA_URL;
const token = process.env.PRAXA_TOKEN;
if (!url || !token) {
  console.error("drive.mjs: set PRAXA_URL (the gateway's /mcp URL) and PRAXA_TOKEN");
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

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "praxa-node-drive", version: "1.0.0" });
const summary = { protocolVersion: null, tools: 0, calls: 0, steps: [] };

// call calls a tool and requires a success whose text content is the JSON
// of its structuredContent (the client has validated it against the
// outputSchema already). It returns the structuredContent.
async function call(name, args) {
  summary.calls++;
  const res = await client.callTool({ name, arguments: args });
  must(!res.isError, `${name} ${JSON.stringify(args)}: isError ${JSON.stringify(res.content)}`);
  must(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structuredContent`);
  must(Array.isArray(res.content) && res.content.length === 1 && res.content[0].type === "text", `${name}: want one text content`);
  const text = JSON.parse(res.content[0].text);
  check(JSON.stringify(sortKeys(text)) === JSON.stringify(sortKeys(res.structuredContent)), `${name}: text content differs from structuredContent`);
  return res.structuredContent;
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  }
  return v;
}

// follow calls the link rel of answer by copying its args; fill supplies
// the fields its inputSchema requires that the args do not carry yet.
async function follow(answer, rel, fill) {
  const link = (answer.links || []).find((l) => l.rel === rel);
  must(link, `no link ${rel} in ${JSON.stringify(answer.links?.map((l) => l.rel))}`);
  must(link.method === "praxec.command", `link ${rel} names ${link.method}, want praxec.command`);
  const args = structuredClone(link.args);
  const required = link.inputSchema?.required || [];
  const given = args.arguments || {};
  const missing = required.filter((k) => !(k in given));
  if (missing.length > 0) {
    for (const k of missing) {
      must(fill && k in fill, `link ${rel} requires ${k} and the drive has no value for it`);
      given[k] = fill[k];
    }
    args.arguments = given;
  }
  const next = await call(link.method, args);
  summary.steps.push(`${rel} -> ${next.workflow?.state} (${next.result?.status})`);
  return next;
}

let exitCode = 0;
try {
  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;

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

  const home = await call("praxec.query", {});
  check(home.links?.some((l) => l.rel === "search"), "home has no search link");

  let cur = await call("praxec.command", { definitionId: "deploy_pipeline" });
  summary.steps.push(`start -> ${cur.workflow?.state} (${cur.result?.status})`);
  must(cur.workflow?.state === "lint", `started in ${cur.workflow?.state}, want lint`);
  cur = await follow(cur, "run_lint");
  cur = await follow(cur, "run_tests", { coverage: 90 });
  cur = await follow(cur, "build", { artifactId: "art_ci" });
  cur = await follow(cur, "deploy");
  check(cur.workflow?.state === "deployed", `final state ${cur.workflow?.state}, want deployed`);
  check(cur.result?.status === "completed", `final status ${cur.result?.status}, want completed`);
  check(Array.isArray(cur.links) && cur.links.length === 0, `a completed workflow offers links ${JSON.stringify(cur.links)}`);

  // The aura twins answer too, each validated against its outputSchema.
  const mission = await call("aura_get_mission", { runId: cur.workflow.id });
  check(mission.workflow?.state === "deployed", `aura_get_mission reads ${mission.workflow?.state}`);
  const intent = await call("aura_submit_intent", { idempotencyKey: randomUUID(), intent: "deploy the payments service" });
  check(intent.status === "recorded", `aura_submit_intent status ${intent.status}`);

  // Searches: validated like every answer, or not-implemented on a gateway
  // that has no discovery index yet (recorded, not a deviation).
  for (const [name, args] of [
    ["praxec.query", { query: "deploy" }],
    ["aura_search_capabilities", { query: "deploy", kind: "workflow" }],
  ]) {
    summary.calls++;
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) {
      const code = JSON.parse(res.content?.[0]?.text ?? "{}").error?.code;
      check(code === "not-implemented", `${name} ${JSON.stringify(args)}: error ${res.content?.[0]?.text}`);
      summary.steps.push(`${name} search: not implemented`);
      continue;
    }
    check(res.structuredContent && res.content?.[0]?.type === "text", `${name}: no structuredContent`);
    summary.steps.push(`${name} search: ok`);
  }

  // A refusal is an isError result carrying the seeds/000 envelope as text
  // and no structuredContent (the client would validate it otherwise).
  summary.calls++;
  const refused = await client.callTool({ name: "aura_submit_intent", arguments: { intent: "deploy" } });
  check(refused.isError === true, "aura_submit_intent without a key succeeded");
  check(refused.structuredContent === undefined, "an error result carries structuredContent");
  const env = JSON.parse(refused.content?.[0]?.text ?? "{}");
  check(env.error?.code === "idempotency-key-missing" && Array.isArray(env.links),
    `error envelope ${JSON.stringify(env)}, want idempotency-key-missing with links`);
} catch (err) {
  if (!(err instanceof Deviation)) {
    problems.push(String(err?.stack ?? err));
    console.error("FAIL " + (err?.stack ?? err));
  }
} finally {
  await client.close().catch(() => {});
}

console.log(JSON.stringify({ ...summary, problems }, null, 2));
if (problems.length > 0) {
  console.log(`${problems.length} problem(s)`);
  exitCode = 1;
} else {
  console.log(`ok: ${summary.tools} tools, deploy_pipeline completed in ${summary.calls} calls over protocol ${summary.protocolVersion}`);
}
process.exit(exitCode);
