#!/usr/bin/env node
// The package's command. Node 24 runs the TypeScript sources directly (type stripping).
import { main } from "../src/cli/main.ts";

await main(process.argv.slice(2));
