"""The project's FlyDSL version: setting > workspace pin > installed (RULES.md "Versions")."""

import pytest

from flydsl_ls import pins


@pytest.fixture(autouse=True)
def _fresh_cache():
    pins.clear_cache()
    yield
    pins.clear_cache()


@pytest.mark.parametrize(
    "line,version",
    [
        ("flydsl==0.3.1", "0.3.1"),
        ("flydsl == 0.3.4.1  # pinned for aiter", "0.3.4.1"),
        ("FlyDSL[rocm]==0.5.0 ; python_version >= '3.10'", "0.5.0"),
        ("flydsl>=0.3.0,<0.4", "0.3.0"),
        ("flydsl<0.4,>=0.3.2", "0.3.2"),
        ("flydsl~=0.4.1", "0.4.1"),
        ("flydsl", None),
        ("flydsl<0.5", None),
        ("flydsl-extras==1.0", None),
        ("# flydsl==0.2.0", None),
        ("flydsl==0.3.*", None),
    ],
)
def test_version_from_requirement(line, version):
    assert pins.version_from_requirement(line) == version


def test_requirements_file_pin(tmp_path):
    (tmp_path / "requirements-dev.txt").write_text("pytest\nflydsl==0.3.1\n")
    (tmp_path / "pkg").mkdir()
    resolved = pins.resolve_version(None, tmp_path / "pkg")
    assert resolved.version == "0.3.1"
    assert resolved.origin.endswith("requirements-dev.txt")


def test_pyproject_and_poetry_and_setup_py(tmp_path):
    a, b, c = (tmp_path / n for n in "abc")
    for folder in (a, b, c):
        folder.mkdir()
    (a / "pyproject.toml").write_text('[project]\nname="k"\ndependencies=["torch", "flydsl==0.3.4.1"]\n')
    (b / "pyproject.toml").write_text('[tool.poetry.dependencies]\nflydsl = "0.4.2"\n')
    (c / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["flydsl>=0.3.2"])\n')
    assert pins.resolve_version(None, a).version == "0.3.4.1"
    assert pins.resolve_version(None, b).version == "0.4.2"
    assert pins.resolve_version(None, c).version == "0.3.2"


def test_setting_wins_over_pin(tmp_path):
    (tmp_path / "requirements.txt").write_text("flydsl==0.3.1\n")
    resolved = pins.resolve_version("0.5.0", tmp_path)
    assert (resolved.version, resolved.origin) == ("0.5.0", "setting")


def test_search_stops_at_the_project_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("flydsl==0.2.4\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
    pinned = pins.pinned_version(project.resolve())
    assert pinned is None  # the pin above the project's root is someone else's


def test_installed_version_in_another_interpreter(tmp_path):
    import sys

    here = pins.installed_version(None)
    there = pins.installed_version(sys.executable)
    assert (here is None) == (there is None)
    if here is not None:
        assert here.version == there.version
    assert pins.installed_version(str(tmp_path / "no-python")) is None


@pytest.mark.parametrize("folder, metadata_file", [("flydsl-9.9.9.dist-info", "METADATA"), ("flydsl.egg-info", "PKG-INFO")])
def test_installed_version_is_the_one_importlib_metadata_finds_first(tmp_path, monkeypatch, folder, metadata_file):
    """Read off the first `dist-info` along sys.path without importing importlib.metadata
    (~20 ms of a server's first analysis); any other layout is asked of it."""
    import importlib.metadata
    import sys

    (tmp_path / folder).mkdir()
    (tmp_path / folder / metadata_file).write_text("Metadata-Version: 2.1\nName: flydsl\nVersion: 9.9.9\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    found = pins.installed_version(None)
    assert found is not None and found.version == importlib.metadata.version("flydsl") == "9.9.9"
