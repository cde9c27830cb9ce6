"""The effects every "reached os/builtins" attack tries once it has them (cell source)."""

import textwrap

_RAW = '''
def _effects(os, imp):
    out = {}
    def attempt(name, fn):
        try:
            out[name] = "OK " + repr(fn())[:60]
        except BaseException as exc:
            out[name] = type(exc).__name__
    attempt("write-canary", lambda: open("@CANARY@", "w").write("pwned"))
    attempt("create-marker", lambda: open("@ESC@-file", "w").write("pwned"))
    attempt("system", lambda: os.system("touch @ESC@-system"))
    attempt("tcp", lambda: imp("socket").create_connection(("127.0.0.1", @PORT@), 1))
    attempt("udp", lambda: imp("socket").socket(2, 2).sendto(b"x", ("127.0.0.1", @UPORT@)))
    attempt("shadow", lambda: open("/etc/shadow").read())
    attempt("kill-supervisor", lambda: os.kill(@SUPPID@, 9))
    attempt("environ", lambda: os.environ.get("@SECRETVAR@"))
    print("effects", sorted(out.items()))
    return out
'''
EFFECTS = textwrap.indent(_RAW, "    ")  # same indent as the cells it is prepended to


def assert_denied(stdout: str) -> None:
    """Every effect failed (an exception, a failing os.system, an empty environment); a file
    in the scratch space (bwrap tmpfs) is allowed, its absence on the host is checked by I1."""
    assert "effects" in stdout, stdout
    line = stdout.split("effects", 1)[1]
    for name in ("write-canary", "tcp", "udp", "shadow", "kill-supervisor"):
        assert f"('{name}', 'OK" not in line, (name, line)
    assert "('system', 'OK 0')" not in line, line
    assert "('environ', 'OK None')" in line, line
