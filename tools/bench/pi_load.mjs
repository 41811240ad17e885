#!/usr/bin/env node
// The incumbent: pi's own loader on a session file, as pi opens a session.
// SessionManager.open + getTree + buildSessionContext, imported straight from
// pi's dist/ (the fastest way pi's code can be loaded). Prints the entry count.
//   node tools/bench/pi_load.mjs FILE
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PI_DIST = new URL("../../tests/pi/node_modules/@mariozechner/pi-coding-agent/dist/", import.meta.url);
const { SessionManager } = await import(new URL("core/session-manager.js", PI_DIST).href);

const file = process.argv[2];
// a v3 file is never rewritten by open(); the session dir only keeps pi out of ~/.pi
const sm = SessionManager.open(file, mkdtempSync(join(tmpdir(), "stree-bench-")));
const tree = sm.getTree();
const context = sm.buildSessionContext();
process.stdout.write(`${sm.getEntries().length} entries, ${tree.length} roots, ${context.messages.length} messages\n`);
