"""Find the Chromium the browser tests drive; install Debian's only where that is safe.

    python tests/find_browser.py             print the browser's path, or say in one line what to run
    python tests/find_browser.py --install   the same, but first install Debian's chromium with apt-get
                                             when none is found and this runs as root on Debian or Ubuntu

Looked for in this order: the Chromium that Playwright installed for itself
(`python -m playwright install chromium`), then `chromium`, `chromium-browser` and
`google-chrome` on the PATH. `make test` runs it with --install before the tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ON_PATH = ("chromium", "chromium-browser", "google-chrome")
HINT = ("No Chromium for the browser tests: run `.venv/bin/python -m playwright install chromium` "
        "(or install chromium with your system's package manager), then `make test` again.")


def playwright_chromium() -> Path | None:
    """The Chromium `python -m playwright install chromium` put on this machine, if it did."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    try:
        with sync_playwright() as playwright:
            path = Path(playwright.chromium.executable_path)
    except Exception:  # no driver for this platform, or a broken install: fall back to the PATH
        return None
    return path if path.is_file() else None


def find(*, path: str | None = None) -> Path | None:
    """The first browser found, in the order of the module docstring; `path` replaces $PATH (for tests)."""
    own = playwright_chromium()
    if own is not None:
        return own
    for name in ON_PATH:
        found = shutil.which(name, path=path)
        if found:
            return Path(found)
    return None


def can_install(os_release: Path = Path("/etc/os-release")) -> bool:
    """Root on Debian or Ubuntu, with apt-get: the one case where installing a system package is ours to do."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    try:
        release = os_release.read_text()
    except OSError:
        return False
    fields = dict(line.split("=", 1) for line in release.splitlines() if "=" in line)
    family = " ".join(fields.get(key, "").strip('"') for key in ("ID", "ID_LIKE")).split()
    return "debian" in family or "ubuntu" in family


def install() -> None:
    print("Installing Debian's chromium for the browser tests (apt-get, as root)", flush=True)
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=environment)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=environment)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="apt-get install chromium if allowed and none is found")
    args = parser.parse_args(argv)
    browser = find()
    if browser is None and args.install and can_install():
        install()
        browser = find()
    if browser is None:
        print(HINT, file=sys.stderr)
        return 1
    print(browser)
    return 0


if __name__ == "__main__":
    sys.exit(main())
