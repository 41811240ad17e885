#!/usr/bin/env node
// The incumbent: pi's own loader on a session file, as pi opens a session.
// SessionManager.open + getTree + buildSessionContext. Prints the entry count.
//   node tools/bench/pi_load.mjs [--pi VERSION] [--context | --tree] FILE   (or PI_VERSION=...; default 0.73.1)
// --context: SessionManager.open + buildSessionContext only (what `stree context` answers);
// --tree (0.87.1 and later): open + getTree + pi's /tree selector (TreeSelectorComponent) drawn
// once, 50 rows high: what opening /tree costs.
// 0.73.1: imported straight from pi's dist/ (the fastest way its code can be loaded).
// 0.87.1 / 1.5.2 / 1.6.0 (make test installs them): their self-contained dist/bundle/index.js, the code
// their `pi` command runs; they need Node >= 22.19: time them with tests/pi/node22/bin/node
// (under an older node this script runs itself again under that one, which adds its start-up).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

let args = process.argv.slice(2);
let version = process.env.PI_VERSION || "0.73.1";
let mode = "load";
while (args[0]?.startsWith("--")) {
	if (args[0] === "--pi") {
		version = args[1];
		args = args.slice(2);
	} else {
		mode = args[0].slice(2);
		args = args.slice(1);
	}
}
const TESTS_PI = new URL("../../tests/pi/", import.meta.url);
const [major, minor] = process.versions.node.split(".").map(Number);
const bundle = version !== "0.73.1";

if (bundle && (major < 22 || (major === 22 && minor < 19))) {
	const node22 = fileURLToPath(new URL("node22/bin/node", TESTS_PI));
	if (!existsSync(node22)) throw new Error(`pi ${version} needs Node >= 22.19: run 'make test' to install ${node22}`);
	const again = [fileURLToPath(import.meta.url), "--pi", version, ...(mode === "load" ? [] : [`--${mode}`]), ...args];
	const r = spawnSync(node22, again, { stdio: "inherit" });
	process.exit(r.status ?? 1);
}

const pi = bundle
	? await import(new URL(`versions/${version}/dist/bundle/index.js`, TESTS_PI).href)
	: await import(new URL("node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", TESTS_PI).href);
const { SessionManager } = pi;

const file = args[0];
// a v3 file is never rewritten by open(); the session dir only keeps pi out of ~/.pi
const dir = mkdtempSync(join(tmpdir(), "stree-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const sm = SessionManager.open(file, dir);
if (mode === "context") {
	const context = sm.buildSessionContext();
	process.stdout.write(`${context.messages.length} messages\n`);
} else if (mode === "tree") {
	if (!bundle) throw new Error("--tree: pi 0.87.1 or 1.5.2");
	pi.initTheme("dark");
	const noop = () => {};
	const selector = new pi.TreeSelectorComponent(sm.getTree(), sm.getLeafId(), 100, noop, noop, noop, undefined, "default");
	process.stdout.write(`${selector.render(200).length} lines\n`);
} else {
	const tree = sm.getTree();
	const context = sm.buildSessionContext();
	process.stdout.write(`${sm.getEntries().length} entries, ${tree.length} roots, ${context.messages.length} messages\n`);
}
