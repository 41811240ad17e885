#!/usr/bin/env bash
# Replay recorded pi sessions in CI: a regression test for a model, and for the agent.
#
#   examples/replay-ci.sh SESSION.jsonl CANDIDATE-MODEL
#
# 1. Teacher forcing: at each assistant turn of SESSION, the request pi sent is sent to
#    CANDIDATE-MODEL; a turn whose tool calls or stop reason differ, or whose text is less
#    similar than REPLAY_THRESHOLD, fails the job. The JUnit report, the table and the new
#    answers (kept as siblings in a fork of the session) go to REPLAY_OUT.
# 2. Only with REPLAY_AGENT (e.g. 'pi --mode rpc'): the agent re-runs the whole session against
#    `stree replay --serve`, which answers every model call from the recording (no key, no cost).
#    THE AGENT RUNS THE RECORDED TOOL CALLS FOR REAL: it runs in REPLAY_CHECKOUT, a scratch
#    checkout (a fresh clone of your project; required). A request that matches no recorded turn
#    fails the job; REPLAY_OUT/cassette.json says where the conversation diverged.
#
# Environment:
#   REPLAY_PROVIDER   openai (default: any OpenAI-compatible server) or anthropic
#   REPLAY_BASE_URL   the API's base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL / the provider's)
#   REPLAY_THRESHOLD  the least text similarity that passes, 0..1 (default 0.5)
#   REPLAY_JOBS       requests in flight (default 4)
#   REPLAY_MAX_COST   stop sending after this many USD (needs REPLAY_PRICE="IN,OUT" USD per million tokens)
#   REPLAY_OUT        where the reports go (default replay-report/)
#   OPENAI_API_KEY / ANTHROPIC_API_KEY   the key; sent only to api.openai.com / api.anthropic.com
#                     (another server: name its key variable with api_key_env in stree's config)
# Exit: 0 passed; 1 a turn or the agent diverged; 5 the model or the agent failed; 2 usage.
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SESSION.jsonl CANDIDATE-MODEL" >&2
    exit 2
fi
session=$1
model=$2
out=${REPLAY_OUT:-replay-report}
mkdir -p "$out" || exit 2

args=(-s "$session" replay --provider "${REPLAY_PROVIDER:-openai}" --model "$model"
      --threshold "${REPLAY_THRESHOLD:-0.5}" -j "${REPLAY_JOBS:-4}"
      --check --junit "$out/junit.xml" -o "$out/replayed.jsonl")
if [ -n "${REPLAY_BASE_URL:-}" ]; then
    args+=(--base-url "$REPLAY_BASE_URL")
fi
if [ -n "${REPLAY_MAX_COST:-}" ]; then
    args+=(--max-cost "$REPLAY_MAX_COST" --price "${REPLAY_PRICE:?REPLAY_MAX_COST needs REPLAY_PRICE=IN,OUT}")
fi

echo "== teacher forcing: $session against $model" >&2
stree "${args[@]}" | tee "$out/turns.txt"
status=${PIPESTATUS[0]}
case $status in
    0) echo "== every turn agrees (report: $out/junit.xml)" >&2 ;;
    1) echo "== some turns diverged (report: $out/junit.xml; new answers: $out/replayed.jsonl)" >&2 ;;
    *) echo "== replay failed (exit $status)" >&2; exit "$status" ;;
esac

if [ -n "${REPLAY_AGENT:-}" ]; then
    checkout=${REPLAY_CHECKOUT:?REPLAY_AGENT runs the recorded tool calls: set REPLAY_CHECKOUT to a scratch checkout}
    echo "== cassette: $REPLAY_AGENT in $checkout, answered from $session" >&2
    (cd "$checkout" && stree -s "$(realpath "$session")" replay --serve --drive "$REPLAY_AGENT" \
        --report "$(realpath "$out")/cassette.json" --session-out "$(realpath "$out")/agent-session.jsonl")
    agent=$?
    case $agent in
        0) echo "== the agent re-ran the session without diverging" >&2 ;;
        1) echo "== the agent diverged from the recording (see $out/cassette.json)" >&2; [ "$status" -ne 0 ] || status=1 ;;
        *) echo "== the agent run failed (exit $agent)" >&2; exit "$agent" ;;
    esac
fi
exit "$status"
