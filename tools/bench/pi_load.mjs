#!/usr/bin/env node
// The incumbent: pi's own loader on a session file, as pi opens a session.
// SessionManager.open + getTree + buildSessionContext. Prints the entry count.
//   node tools/bench/pi_load.mjs [--pi VERSION] FILE      (or PI_VERSION=...; default 0.73.1)
// 0.73.1: imported straight from pi's dist/ (the fastest way its code can be loaded).
// 0.87.1 / 1.5.2 (make test installs them): their self-contained dist/bundle/index.js, the code
// their `pi` command runs; they need Node >= 22.19: time them with tests/pi/node22/bin/node
// (under an older node this script runs itself again under that one, which adds its start-up).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

let args = process.argv.slice(2);
let version = process.env.PI_VERSION || "0.73.1";
if (args[0] === "--pi") {
	version = args[1];
	args = args.slice(2);
}
const TESTS_PI = new URL("../../tests/pi/", import.meta.url);
const [major, minor] = process.versions.node.split(".").map(Number);
const bundle = version !== "0.73.1";

if (bundle && (major < 22 || (major === 22 && minor < 19))) {
	const node22 = fileURLToPath(new URL("node22/bin/node", TESTS_PI));
	if (!existsSync(node22)) throw new Error(`pi ${version} needs Node >= 22.19: run 'make test' to install ${node22}`);
	const r = spawnSync(node22, [fileURLToPath(import.meta.url), "--pi", version, ...args], { stdio: "inherit" });
	process.exit(r.status ?? 1);
}

const { SessionManager } = bundle
	? await import(new URL(`versions/${version}/dist/bundle/index.js`, TESTS_PI).href)
	: await import(new URL("node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", TESTS_PI).href);

const file = args[0];
// a v3 file is never rewritten by open(); the session dir only keeps pi out of ~/.pi
const sm = SessionManager.open(file, mkdtempSync(join(tmpdir(), "stree-bench-")));
const tree = sm.getTree();
const context = sm.buildSessionContext();
process.stdout.write(`${sm.getEntries().length} entries, ${tree.length} roots, ${context.messages.length} messages\n`);
