// oh-my-pi's loader on a session file, as `omp` opens a session and builds what it sends
// to the model: SessionManager.open + buildSessionContext. Run by Bun (tools/bench/peers,
// installed by `make bench`): bun tools/bench/peers/omp_load.ts FILE
// oh-my-pi keeps state under $HOME/.omp: run it with HOME set to a scratch directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const dir = mkdtempSync(join(tmpdir(), "stree-bench-omp-"));
try {
	const sm = await SessionManager.open(process.argv[2], dir);
	const context = sm.buildSessionContext();
	process.stdout.write(`${sm.getEntries().length} entries, ${context.messages.length} messages\n`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
