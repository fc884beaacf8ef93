// The boundaries of ARCHITECTURE.md ("What may import what"), checked by dependency-cruiser over every
// file of src/, client/, web/, bench/ and scripts/ (and test/ for cycles), type-only imports included.
// `npm run lint:deps` runs it. Each module below lists what it may import besides itself; every
// project import that no line allows is an error, so a new directory is refused until it has a line.

/** Path patterns of the modules, as in the table. */
const MODULES = {
  domain: "^src/domain/",
  wire: "^src/wire/",
  upstream: "^src/upstream/",
  config: "^src/config(\\.ts$|/)",
  log: "^src/log\\.ts$",
  v8: "^src/v8\\.ts$",
  store: "^src/store/",
  events: "^src/events/",
  access: "^src/access/",
  engine: "^src/backtest/(engine|features|feature-registry|fills|impact|metrics|definition|lookback)\\.ts$",
  backtest: "^src/backtest/",
  mcp: "^src/mcp/",
  http: "^src/http/",
  record: "^src/record/",
  archive: "^src/archive/",
  demo: "^src/demo/",
  server: "^src/server\\.ts$",
  cli: "^src/cli/",
  client: "^client/src/",
  web: "^web/",
  bench: "^bench/",
  scripts: "^scripts/",
  test: "^test/",
  // The committed API document, the one rendering of the wire schemas outside src/.
  contract: "^openapi\\.json$",
};

/** What each module may import (besides itself), by name in MODULES. */
/** What sits below the command line: the runner, the bench and the scripts may import all of it, never cli/. */
const BELOW_CLI = [
  "v8",
  "domain",
  "wire",
  "upstream",
  "config",
  "log",
  "store",
  "events",
  "access",
  "backtest",
  "http",
  "record",
  "archive",
  "demo",
];

const MAY_IMPORT = {
  domain: [],
  wire: ["domain"],
  upstream: ["domain"],
  config: ["domain"],
  log: [],
  v8: [],
  store: ["domain", "wire", "config"],
  events: ["domain", "wire", "upstream"],
  access: ["domain", "wire", "store", "config", "log"],
  // The backtest engine is pure: the domain, the book codec it reads books with, and its own definition.
  engine: ["domain", "wire", "engine"],
  backtest: ["domain", "wire", "store", "events", "access", "config", "log"],
  // The MCP tools answer through the client only: nothing of the service's insides.
  mcp: ["config", "client", "contract"],
  http: [
    "domain",
    "wire",
    "store",
    "events",
    "access",
    "backtest",
    "archive",
    "mcp",
    "config",
    "log",
    "client",
  ],
  record: ["domain", "wire", "upstream", "store", "events", "config", "log"],
  archive: ["domain", "wire", "upstream", "store", "events", "log"],
  demo: ["domain", "wire", "store", "events"],
  // The runner of serve: everything below the CLI, never the CLI.
  server: BELOW_CLI,
  cli: [...BELOW_CLI, "mcp", "server", "client"],
  // The client runs in browsers and depends on the OpenAPI document only.
  client: [],
  contract: [],
  // The page runs in the browser and reaches the server through the client only.
  web: ["client"],
  // The bench drives the service as a whole, with the test suite's helpers for its upstreams.
  bench: [...BELOW_CLI, "server", "test"],
  scripts: [...BELOW_CLI, "server"],
  test: Object.keys(MODULES),
};

const PROJECT = "^(src|client|web|bench|scripts|test)/";

/** The engine's files are in backtest/ too: a backtest rule must not widen the engine's. */
const fromPath = (name) =>
  name === "backtest" ? { path: MODULES.backtest, pathNot: MODULES.engine } : { path: MODULES[name] };

const allowed = Object.entries(MAY_IMPORT).map(([name, allowedNames]) => ({
  comment: `${name} may import ${[name, ...allowedNames].join(", ")}`,
  from: fromPath(name),
  to: { path: [MODULES[name], ...allowedNames.map((n) => MODULES[n])] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "no module reaches itself again through imports, type-only ones included",
      from: { pathNot: "^test/fixtures/" },
      to: { circular: true },
    },
    {
      name: "browser-no-node",
      severity: "error",
      comment: "the client and the page run in browsers: no Node modules",
      from: { path: [MODULES.client, MODULES.web] },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "an import that resolves to no file",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "module-has-a-row",
      severity: "error",
      comment: "every file under src/ belongs to a module of the table",
      from: { path: "^src/", pathNot: Object.values(MODULES) },
      to: {},
    },
  ],
  allowed: [
    ...allowed,
    // Packages and Node's modules: whatever package.json declares (browser-no-node narrows it).
    {
      from: { path: PROJECT },
      to: { dependencyTypesNot: ["local", "localmodule", "aliased-workspace", "unknown", "undetermined"] },
    },
    { from: { path: "^node_modules/" }, to: {} },
  ],
  allowedSeverity: "error",
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(client/dist|bench/results|data)/" },
    // Type-only imports count: a circle through a type is a circle in the design.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
