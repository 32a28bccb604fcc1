"""Which browser `make test` uses, and when it may install one: tests/find_browser.py with a fake PATH."""

from pathlib import Path

import pytest

import find_browser

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_path(tmp_path, monkeypatch):
    """An empty PATH folder; `add(name)` puts an executable of that name in it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr(find_browser, "playwright_chromium", lambda: None)

    def add(name):
        program = folder / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
        return program
    return add


def test_playwrights_own_chromium_comes_first(fake_path, monkeypatch, tmp_path):
    fake_path("chromium")
    own = tmp_path / "ms-playwright" / "chrome"
    monkeypatch.setattr(find_browser, "playwright_chromium", lambda: own)
    assert find_browser.find() == own


@pytest.mark.parametrize("present,expected", [
    (["google-chrome", "chromium-browser", "chromium"], "chromium"),
    (["google-chrome", "chromium-browser"], "chromium-browser"),
    (["google-chrome"], "google-chrome"),
])
def test_then_the_path_in_order(fake_path, present, expected):
    for name in present:
        fake_path(name)
    assert find_browser.find().name == expected


def test_none_and_not_allowed_to_install_says_what_to_run(fake_path, monkeypatch, capsys):
    monkeypatch.setattr(find_browser, "can_install", lambda: False)
    monkeypatch.setattr(find_browser, "install", lambda: pytest.fail("must not install"))
    assert find_browser.main(["--install"]) == 1
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "python -m playwright install chromium" in message


def test_root_on_debian_installs_when_none_is_found(fake_path, monkeypatch, capsys):
    monkeypatch.setattr(find_browser, "can_install", lambda: True)
    monkeypatch.setattr(find_browser, "install", lambda: fake_path("chromium"))
    assert find_browser.main(["--install"]) == 0
    assert capsys.readouterr().out.strip().endswith("/chromium")


def test_without_install_it_only_looks(fake_path, monkeypatch):
    monkeypatch.setattr(find_browser, "can_install", lambda: True)
    monkeypatch.setattr(find_browser, "install", lambda: pytest.fail("installed without --install"))
    assert find_browser.main([]) == 1


@pytest.mark.parametrize("release,root,allowed", [
    ('ID=debian\n', 0, True), ('ID=ubuntu\nID_LIKE=debian\n', 0, True),
    ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', 0, True), ('ID=fedora\n', 0, False), ('ID=debian\n', 1000, False),
])
def test_installing_is_allowed_only_as_root_on_debian_or_ubuntu(tmp_path, monkeypatch, release, root, allowed):
    os_release = tmp_path / "os-release"
    os_release.write_text(release)
    monkeypatch.setattr(find_browser.os, "geteuid", lambda: root)
    monkeypatch.setattr(find_browser.shutil, "which", lambda name, path=None: "/usr/bin/apt-get")
    assert find_browser.can_install(os_release) is allowed
