"""PyYAML imported without compiling the pattern of its pure-Python reader, which we never run.

`yaml.reader.Reader.NON_PRINTABLE` is compiled when `yaml` is imported: a character class over
the whole of Unicode that `re` compiles in Python, ~57 M instructions (valgrind), 11% of a
one-file `check`, more than all of gpu-audit's own policy parse. Only the pure-Python reader
uses it; gpu-audit reads YAML through libyaml (`CSafeLoader`) wherever it is installed.

`import_yaml` puts a `lazyre.lazy` twin of the pattern in `re`'s cache under the pattern's own
key while `yaml` is imported, so the class attribute is the twin, compiled on its first search
(a Python without libyaml, or a test of the pure-Python reader); the entry is taken out again at
once, so every later `re.compile` of that text gets a real pattern. Where `re` keeps its cache
otherwise (another Python), nothing is seeded and the import compiles as before.
`tests/test_yamlstart.py` holds the twin to the compiled pattern.

Only the `gpu-audit` program (`gpu_audit.__main__.program`) does this, before the CLI imports
`yaml`: library callers import PyYAML as they always do.
"""

from __future__ import annotations

import re
import sys

from gpu_audit.core.lazyre import lazy

# yaml/reader.py, `Reader.NON_PRINTABLE`, character for character (PyYAML 5.1 to 6.0.x)
NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def import_yaml() -> bool:
    """Import `yaml` with its reader's pattern left to compile on first use; whether the twin
    was used (False: `yaml` was already imported, or `re` keeps no such cache)."""
    if "yaml" in sys.modules:
        return False
    key = (str, NON_PRINTABLE, 0)  # `re._compile`'s cache key: the pattern's type, text, flags
    caches = [getattr(re, name, None) for name in ("_cache2", "_cache")]  # 3.12+, 3.11
    seeded = [cache for cache in caches if isinstance(cache, dict) and key not in cache]
    twin = lazy(NON_PRINTABLE)
    for cache in seeded:
        cache[key] = twin
    try:
        # here, with the twin seeded: the compile it skips is ~57 M instructions, ~5 ms
        import yaml  # noqa: F401
    finally:
        for cache in seeded:
            if cache.get(key) is twin:
                del cache[key]
    reader = sys.modules.get("yaml.reader")
    return reader is not None and reader.Reader.NON_PRINTABLE is twin
