"""The `gpu-audit` program (its console script) and `python -m gpu_audit`."""

from __future__ import annotations

import gc


def program() -> None:
    """Import the command line with the cyclic garbage collector paused, then freeze what the
    imports built: ~200 modules' functions, classes and tables, all alive to the end of the
    process. The collector otherwise walks them ~35 times while they load (~4.5 ms of a
    one-file `check`, a tenth of its own start-up) and at every later pass, finding no garbage.
    `gcpause.one_shot` says why a one-command process may freeze. PyYAML is imported first,
    its pure-Python reader's pattern left to compile on first use (`core/yamlstart.py`)."""
    gc.disable()
    try:
        from gpu_audit.core.yamlstart import import_yaml  # here: before the CLI imports yaml

        import_yaml()  # its pure-Python reader's pattern left uncompiled: 57 M instructions
        from gpu_audit.cli.main import run  # imported with the collector paused (see the docstring)
    finally:
        gc.freeze()
        gc.enable()
    run()


if __name__ == "__main__":
    program()
