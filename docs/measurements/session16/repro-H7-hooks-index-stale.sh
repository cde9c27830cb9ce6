#!/bin/sh
# The hooks' own index misses a note edited outside rmh between two sessions, for the whole
# next session, with `[hooks] daemon = false` (and, with the daemon on, until it is ready).
set -e
PY=${PY:-python}
T=$(mktemp -d)
$PY -m bench.gen_vault "$T/v" --notes 50
$PY -m harness init --no-dense "$T/v" > /dev/null
printf '[hooks]\ndaemon = false\n' > "$T/cfg.toml"
export RMH_CONFIG="$T/cfg.toml"
hook() { $PY -m harness --vault "$T/v" hook "$@"; }
echo '{"session_id":"s1","cwd":"/"}' | hook session-start > /dev/null     # builds .rmh/hooks.sqlite
echo '{"session_id":"s1"}' | hook session-end                             # session 1 ends (refresh)
printf '# Zq\n\nThe zqword team reviews the billing invoices.\n' > "$T/v/zq.md"  # the user edits in Obsidian
echo '{"session_id":"s2","cwd":"/"}' | hook session-start > /dev/null     # session 2
echo "prompt in session 2 (expected: zq.md):"
echo '{"session_id":"s2","prompt":"who is zqword"}' | hook prompt; echo "[end]"
echo '{"session_id":"s2"}' | hook session-end
echo '{"session_id":"s3","cwd":"/"}' | hook session-start > /dev/null
echo "prompt in session 3:"
echo '{"session_id":"s3","prompt":"who is zqword"}' | hook prompt; echo "[end]"
echo '{"session_id":"s3"}' | hook session-end
mv "$T/v/zq.md" "$T/v/zq-renamed.md"                                      # renamed in Obsidian
echo '{"session_id":"s4","cwd":"/"}' | hook session-start > /dev/null
echo "prompt in session 4 (expected: zq-renamed.md; zq.md no longer exists):"
echo '{"session_id":"s4","prompt":"who is zqword"}' | hook prompt; echo "[end]"
rm -rf "$T"
