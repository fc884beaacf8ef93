// One linter (ESLint with typescript-eslint) beside one formatter (Prettier); `npm run lint` runs both.
// The layering of ARCHITECTURE.md ("what may import what") is enforced here, by directory.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const LAYERS = [
  "domain",
  "wire",
  "upstream",
  "store",
  "access",
  "backtest",
  "mcp",
  "http",
  "record",
  "archive",
  "demo",
  "cli",
];
const TOP_LEVEL = ["config", "server", "log"];

/** An import of one of these project modules, from anywhere under src/. */
const anyOf = (names) => `(^|/)(${names.join("|")})(/|\\.ts$)`;

/**
 * The client package (client/) is for the MCP server (src/mcp, and `updown mcp` in src/cli) and the
 * web page (src/http) only; the other layers never import it.
 */
const NO_CLIENT = {
  regex: "^(\\.\\./)+client/",
  message: "only the MCP server and the web page use the client",
};

/** `files` may import none of `forbidden` (layers or top-level modules of src/), nor the client. */
function layer(files, forbidden, why, client = false) {
  return {
    files,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: `^\\.\\.?/.*${anyOf(forbidden)}`, message: why },
            ...(client ? [] : [NO_CLIENT]),
          ],
        },
      ],
    },
  };
}

const except = (...allowed) => [...LAYERS, ...TOP_LEVEL].filter((n) => !allowed.includes(n));

export default tseslint.config(
  { ignores: ["node_modules/", "data/", "test/fixtures/", "bench/results/", "client/dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
    },
  },
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's describe and test return promises the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            {
              from: "package",
              package: "node:test",
              name: ["describe", "test", "it", "suite", "before", "after"],
            },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    files: ["src/**/*.ts", "bin/**", "web/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, IIFEs: true }] },
  },
  // The page (web/) runs in a browser and speaks to the server only through the client package.
  {
    files: ["web/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+src/",
              message: "web/ runs in the browser: it reaches the server through client/, never src/",
            },
          ],
        },
      ],
    },
  },
  // The domain is pure: it imports nothing of the project outside itself.
  {
    files: ["src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^\\.\\./", message: "src/domain imports nothing of the project" }] },
      ],
    },
  },
  layer(["src/log.ts"], except(), "the logger interface depends on nothing"),
  layer(
    ["src/config.ts", "src/config/**/*.ts"],
    except("domain", "config"),
    "configuration depends on the domain only",
  ),
  layer(
    ["src/wire/**/*.ts"],
    except("domain", "wire"),
    "the wire format is the domain's shapes as bytes: domain only",
  ),
  layer(
    ["src/upstream/**/*.ts"],
    except("domain", "upstream"),
    "the upstream's formats are pure: domain only",
  ),
  layer(
    ["src/store/**/*.ts"],
    except("domain", "wire", "store", "config"),
    "stores know SQL, the wire format and the domain, nothing above",
  ),
  layer(
    ["src/access/**/*.ts"],
    except("domain", "wire", "store", "config", "access", "log"),
    "access sits below http",
  ),
  layer(
    ["src/backtest/**/*.ts"],
    except("domain", "wire", "store", "access", "config", "backtest", "log"),
    "backtests read stores and spend the quota; they never import http, the recorder, the demo or the CLI",
  ),
  layer(
    [
      "src/backtest/engine.ts",
      "src/backtest/features.ts",
      "src/backtest/fills.ts",
      "src/backtest/metrics.ts",
    ],
    except("domain", "wire", "backtest"),
    "the engine is pure: the domain, the book codec and its own definition only, no store, no I/O",
  ),
  layer(
    ["src/http/**/*.ts"],
    except("domain", "wire", "store", "access", "backtest", "config", "archive", "mcp", "http", "log"),
    "http serves stored data: never the recorder, the demo or the CLI",
    true,
  ),
  layer(
    ["src/mcp/**/*.ts"],
    except("mcp", "config"),
    "the MCP tools answer through the client (client/src) only: no store, no http, nothing of the service's insides",
    true,
  ),
  layer(
    ["src/record/**/*.ts"],
    except("domain", "wire", "upstream", "store", "config", "record", "log"),
    "recording writes to stores; it never imports http, archives, the demo or the CLI",
  ),
  layer(
    ["src/archive/**/*.ts"],
    except("domain", "wire", "upstream", "store", "archive", "log"),
    "archives read and write stores and files only",
  ),
  layer(
    ["src/demo/**/*.ts"],
    except("domain", "wire", "store", "demo"),
    "demo data is generated from the domain into a store",
  ),
  // The client depends only on the OpenAPI document (its generated types) and runs in browsers too.
  {
    files: ["client/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: "^\\.\\./", message: "client/src imports nothing outside itself" },
            { regex: "^node:", message: "the client runs in browsers: no Node modules" },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
