"""Compiles the hosted flow's catalogs (flow/locale/*/LC_MESSAGES/django.po) into the .mo files Django reads.

Run by scripts/setup-env.sh (so by scripts/demo and scripts/test) and before the tests; only a catalog
newer than its .mo is compiled. `msgfmt --check` (GNU gettext, a Debian package) refuses a catalog
whose placeholders or plural forms are wrong. The .mo files are build output, never committed.
"""

import subprocess
import sys
from pathlib import Path

CATALOGS = Path(__file__).resolve().parents[1] / "flow" / "locale"


def compile_catalogs() -> list[Path]:
    compiled = []
    for po in sorted(CATALOGS.glob("*/LC_MESSAGES/django.po")):
        mo = po.with_suffix(".mo")
        if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        result = subprocess.run(["msgfmt", "--check", "-o", str(mo), str(po)], capture_output=True, text=True)
        if result.returncode:
            raise SystemExit(f"compile_translations: msgfmt refused {po}:\n{result.stderr}")
        compiled.append(mo)
    return compiled


if __name__ == "__main__":
    for path in compile_catalogs():
        print(f"compiled {path.relative_to(CATALOGS.parent.parent)}", file=sys.stderr)
