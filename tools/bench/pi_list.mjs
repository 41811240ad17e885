#!/usr/bin/env node
// pi's own session list over every project: SessionManager.listAll() of pi 1.6.0 (what its
// `/resume` lists with "all"), as `stree ls --all` answers it. Prints the count.
//   tests/pi/node22/bin/node tools/bench/pi_list.mjs [--pi VERSION]   (HOME or PI_CODING_AGENT_DIR: where)
let args = process.argv.slice(2);
let version = "1.6.0";
if (args[0] === "--pi") {
	version = args[1];
	args = args.slice(2);
}
const TESTS_PI = new URL("../../tests/pi/", import.meta.url);
const pi = await import(new URL(`versions/${version}/dist/bundle/index.js`, TESTS_PI).href);
const sessions = await pi.SessionManager.listAll();
process.stdout.write(`${sessions.length} sessions\n`);
