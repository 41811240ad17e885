"""`make install` into a fresh home (not a command of stree, so a module of its own): a login
shell then finds `stree`, its man page and its completion."""


def test_make_install_into_a_fresh_home(tmp_path):
    """`make install` with nothing but a new HOME: a new login shell finds `stree`, `man stree`
    and the bash completion (no root: everything under ~/.local and ~/.zfunc)."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    home = tmp_path / "fresh-home"
    home.mkdir()
    base = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    proc = subprocess.run(["make", "-s", "install", f"HOME={home}"], cwd=root, env=base, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"{home}/.local/bin is not on your PATH" in proc.stdout  # and says how to put it there
    (home / ".profile").write_text('export PATH="$HOME/.local/bin:$PATH"\n')  # as that hint says
    script = r'''
        stree --version || exit 1
        man -w stree || exit 1
        source ~/.local/share/bash-completion/completions/stree
        COMP_LINE="stree lo"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(stree lo); COMP_CWORD=1
        _stree || true
        echo "completion: ${COMPREPLY[*]}"
        COMP_LINE="stree -s demo show fix-"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(stree -s demo show fix-)
        COMP_CWORD=4
        _stree || true
        echo "completion: ${COMPREPLY[*]}"
    '''
    r = subprocess.run(["env", "-i", f"HOME={home}", "TERM=dumb", "bash", "-lc", script], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "stree, version " + __import__("stree").__version__
    if shutil.which("man"):
        assert lines[1] == f"{home}/.local/share/man/man1/stree.1"
    assert "completion: log" in lines and "completion: fix-verified" in lines, r.stdout
    assert (home / ".zfunc" / "_stree").is_file()
